#include "engine/report/simumax_memory.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "engine/memory/memory_allocations.hpp"
#include "engine/memory/memory_timeline.hpp"
#include "engine/report/simumax_strings.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::ordered_json;

std::string rank_name(const RunView& v, uint32_t rank) { return "rank" + std::to_string(v.graph.global_rank[rank]); }

// SimuMax names a leaf by its module path ("self.layer_0.attention.linear_qkv"); ours by block-relative op name
// and pass ("attn.linear_qkv.fwd"): the pass is dropped and the layer prefixed.
std::string op_name(const RunView& v, const graph::Task& t) {
  std::string name = v.graph.names[t.name];
  for (const char* pass : {".fwd", ".bwd", ".recompute", ".bwd_w", ".bwd_x"}) {
    const std::string p = pass;
    if (name.size() > p.size() && name.compare(name.size() - p.size(), p.size(), p) == 0) {
      name.erase(name.size() - p.size());
      break;
    }
  }
  return t.layer >= 0 ? "self.layer_" + std::to_string(t.layer) + "." + name : "self." + name;
}

// The call-stack scope SimuMax parses micro-batch and chunk from: "rank0-microbatch3-chunk1-...".
struct Scope {
  std::string text;
  Json microbatch, chunk;
};

Scope scope_of(const RunView& v, uint32_t rank, const graph::Task& t, bool vpp) {
  Scope s{rank_name(v, rank), nullptr, nullptr};
  if (t.microbatch >= 0) {
    s.text += "-microbatch" + std::to_string(t.microbatch);
    s.microbatch = t.microbatch;
  }
  if (vpp && t.chunk >= 0) {
    s.text += "-chunk" + std::to_string(t.chunk);
    s.chunk = t.chunk;
  }
  if (t.layer >= 0) s.text += "-TransformerLayer" + std::to_string(t.layer);
  return s;
}

// A cache token as SimuMax's tracker keeps it: allocated at the end of the forward that saves it.
Json new_token(int64_t id, const std::string& rank, const Scope& sc, const std::string& op, const char* phase,
               double alloc_us, int64_t bytes) {
  return {{"token_id", id},        {"rank", rank},           {"token_key", sc.text + "|" + op},
          {"token_scope", sc.text}, {"op_name", op},          {"microbatch", sc.microbatch},
          {"chunk", sc.chunk},     {"alloc_phase", phase},   {"alloc_ts_us", alloc_us},
          {"free_phase", nullptr}, {"free_ts_us", nullptr},  {"size_bytes", bytes}};
}

// One cache_tokens record: {"action": ..., **token} (the token as it is at that moment).
Json token_record(const char* action, const Json& token) {
  Json rec = {{"action", action}};
  for (auto it = token.begin(); it != token.end(); ++it) rec[it.key()] = it.value();
  return rec;
}

struct RankWalk {
  int64_t static_bytes = 0;
  int64_t peak_bytes = 0;
};

// One rank's samples and cache tokens, appended to `events` / `tokens`; `next_token` numbers tokens job-wide.
RankWalk walk_rank(const RunView& v, uint32_t rank, const std::vector<uint32_t>& tasks, Json& events, Json& tokens,
                   int64_t& next_token) {
  const auto& g = v.graph;
  const memory::RankAllocations ra = memory::rank_allocations(g, v.timeline, rank, tasks);
  const bool vpp = v.model.virtual_chunks() > 1;
  const std::string rn = rank_name(v, rank);
  RankWalk w;
  int64_t cached = 0, live_tokens = 0;
  std::vector<Json> token_of(ra.allocations.size());
  auto sample = [&](double us, int64_t allocated, const char* phase, const std::string& op, const char* kind,
                    const Scope& sc) {
    w.peak_bytes = std::max(w.peak_bytes, allocated);
    events.push_back({{"rank", rn},
                      {"ts_us", us},
                      {"allocated_bytes", allocated},
                      {"static_bytes", w.static_bytes},
                      {"cached_bytes", cached},
                      {"temp_bytes", std::max<int64_t>(0, allocated - w.static_bytes - cached)},
                      {"cached_token_count", live_tokens},
                      {"phase", phase},
                      {"op_name", op},
                      {"kind", kind},
                      {"scope", sc.text},
                      {"microbatch", sc.microbatch},
                      {"chunk", sc.chunk}});
  };
  size_t e = 0;
  while (e < ra.events.size() && ra.events[e].task == graph::kNoOpRef) {
    w.static_bytes += ra.allocations[ra.events[e].allocation].bytes;
    ++e;
  }
  sample(0.0, w.static_bytes, "init", "static", "init", Scope{"", nullptr, nullptr});
  while (e < ra.events.size()) {
    const uint32_t t = ra.events[e].task;
    const graph::Task& task = g.tasks[t];
    const Scope sc = scope_of(v, rank, task, vpp);
    const std::string op = op_name(v, task);
    const char* phase = simumax_phase(task.pass);
    const double start_us = v.timeline.start[t] * 1e6, end_us = v.timeline.end[t] * 1e6;
    sample(start_us, w.static_bytes + cached, phase, op, "start", sc);
    // SimuMax stamps the peak 1e-9 ms after the start.
    sample(start_us + 1e-6, w.static_bytes + cached + task.mem_peak_bytes, phase, op, "peak", sc);
    for (; e < ra.events.size() && ra.events[e].task == t; ++e) {
      const memory::MemoryEvent& ev = ra.events[e];
      const memory::Allocation& al = ra.allocations[ev.allocation];
      if (al.kind != memory::AllocKind::kActivation) continue;
      Json& token = token_of[ev.allocation];
      if (!ev.free) {
        token = new_token(next_token++, rn, sc, op, phase, end_us, al.bytes);
        cached += al.bytes;
        ++live_tokens;
      } else {
        token["free_phase"] = phase;
        token["free_ts_us"] = end_us;
        cached -= al.bytes;
        --live_tokens;
      }
      tokens.push_back(token_record(ev.free ? "free" : "alloc", token));
    }
    sample(end_us, w.static_bytes + cached, phase, op, "end", sc);
  }
  return w;
}

struct Walked {
  Json events = Json::array(), tokens = Json::array();
  std::vector<std::pair<int64_t, RankWalk>> by_job_rank;  // sorted by job rank
};

Walked walk(const RunView& v, const std::vector<uint32_t>& ranks) {
  Walked out;
  const auto tasks = memory::tasks_by_rank(v.graph, v.timeline, ranks);
  int64_t next_token = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    const RankWalk w = walk_rank(v, ranks[i], tasks[i], out.events, out.tokens, next_token);
    out.by_job_rank.emplace_back(v.graph.global_rank[ranks[i]], w);
  }
  std::sort(out.by_job_rank.begin(), out.by_job_rank.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  return out;
}

std::string result_text(const Walked& w) {
  Json stat = Json::object(), peak = Json::object();
  for (const auto& [job, rw] : w.by_job_rank) {
    stat["rank" + std::to_string(job)] = rw.static_bytes;
    peak["rank" + std::to_string(job)] = rw.peak_bytes;
  }
  Json j;
  j["static_allocated_bytes_by_rank"] = stat;
  j["peak_allocated_bytes_by_rank"] = peak;
  return j.dump(4);
}

std::string snapshot_text(Walked&& w) {
  Json j;
  j["schema"] = "simumax_memory_snapshot_v1";
  j["notes"] = {"allocated_bytes includes static + cached + temporary op-local peak bytes",
                "temp_bytes is derived as allocated_bytes - static_bytes - cached_bytes",
                "cached_bytes represents currently live activation cache retained for backward",
                "cache_tokens records first-hand cached activation lifetime tracked by the simulator"};
  j["events"] = std::move(w.events);
  j["cache_tokens"] = std::move(w.tokens);
  return j.dump(4);
}

}  // namespace

std::string simu_memory_result_json(const RunView& v, const std::vector<uint32_t>& ranks) {
  return result_text(walk(v, ranks));
}

std::string simu_memory_snapshot_json(const RunView& v, const std::vector<uint32_t>& ranks) {
  return snapshot_text(walk(v, ranks));
}

std::vector<std::string> write_simu_memory(const std::string& dir, const RunView& v,
                                           const std::vector<uint32_t>& ranks) {
  Walked w = walk(v, ranks);
  const std::string result = dir + "/simu_memory_result.json", snapshot = dir + "/simu_memory_snapshot.json";
  write_file_atomically(result, result_text(w));
  write_file_atomically(snapshot, snapshot_text(std::move(w)));
  return {result, snapshot};
}

}  // namespace simumax::report
