#include "engine/report/rank_stats.hpp"

#include <algorithm>

#include "engine/common/units.hpp"
#include "engine/common/version.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

void field_ms(std::string& out, const char* key, double seconds) {
  out += ", \"";
  out += key;
  out += "\": ";
  append_double(out, common::ms(seconds));
}

void rank_line(std::string& out, const graph::TaskGraph& g, uint32_t r, const executor::RankTiming& t,
               double earliest_s, const memory::RankMemory& m) {
  out += "    {\"rank\": ";
  append_int(out, g.global_rank[r]);
  out += ", \"stage\": ";
  append_int(out, g.pp_stage[r]);
  field_ms(out, "end_ms", t.end_s);
  field_ms(out, "late_ms", t.end_s - earliest_s);
  field_ms(out, "compute_ms", t.compute_s);
  field_ms(out, "comm_ms", t.comm_s);
  field_ms(out, "exposed_comm_ms", t.exposed_comm_s);
  for (size_t k = 0; k < executor::kCommKinds; ++k) {
    const std::string kind = executor::kCommKindNames[k];
    field_ms(out, (kind + "_comm_ms").c_str(), t.kind_comm_s[k]);
    field_ms(out, (kind + "_exposed_ms").c_str(), t.kind_exposed_s[k]);
  }
  out += ", \"peak_allocated_bytes\": ";
  append_int(out, m.peak_allocated_bytes);
  out += ", \"peak_reserved_bytes\": ";
  append_double(out, m.peak_reserved_bytes);
  out += "}";
}

}  // namespace

std::string ranks_json(const RankStatsHeader& h, const graph::TaskGraph& g, const executor::StepTiming& timing,
                       const std::vector<memory::RankMemory>& memory) {
  uint32_t first = 0, last = 0;  // the earliest and the latest rank to end (ties: the lower graph rank)
  for (uint32_t r = 1; r < g.num_ranks; ++r) {
    if (timing.ranks[r].end_s < timing.ranks[first].end_s) first = r;
    if (timing.ranks[r].end_s > timing.ranks[last].end_s) last = r;
  }
  const double earliest_s = g.num_ranks ? timing.ranks[first].end_s : 0;
  std::string out = "{\n  \"schema\": \"simumax_sim_ranks_v1\",\n  \"version\": ";
  append_quoted(out, common::version());
  out += ",\n  \"name\": ";
  append_quoted(out, h.name);
  out += ",\n  \"executor\": ";
  append_quoted(out, h.executor);
  out += ",\n  \"rank_scope\": ";
  append_quoted(out, h.scope);
  out += ",\n  \"step_time_ms\": ";
  append_double(out, common::ms(timing.makespan_s));
  out += ",\n  \"earliest_end_ms\": ";
  append_double(out, common::ms(earliest_s));
  out += ",\n  \"latest_end_ms\": ";
  append_double(out, g.num_ranks ? common::ms(timing.ranks[last].end_s) : 0);
  out += ",\n  \"slowest_rank\": ";
  append_int(out, g.num_ranks ? g.global_rank[last] : 0);
  out += ",\n  \"definitions\": \"end: the rank's last task ends; late: end - earliest_end; compute: the union of "
         "its forward, backward, recompute and optimizer tasks; comm: the union of its communication tasks (a "
         "collective counts on every member); exposed: the part of comm with no compute task running on the rank, "
         "as compare defines it\",\n  \"ranks\": [";
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    out += r == 0 ? "\n" : ",\n";
    rank_line(out, g, r, timing.ranks[r], earliest_s, memory[r]);
  }
  out += g.num_ranks ? "\n  ]\n}\n" : "]\n}\n";
  return out;
}

std::string write_ranks_json(const std::string& dir, const RankStatsHeader& h, const graph::TaskGraph& g,
                             const executor::StepTiming& timing, const std::vector<memory::RankMemory>& memory) {
  const std::string path = dir + "/ranks.json";
  write_file_atomically(path, ranks_json(h, g, timing, memory));
  return path;
}

}  // namespace simumax::report
