#include "engine/report/memory_artifacts.hpp"

#include "engine/common/version.hpp"
#include "engine/memory/memory_timeline.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

void rank_header(std::string& b, const RunView& v, uint32_t rank) {
  b += "{\"rank\":";
  append_int(b, v.graph.global_rank[rank]);
  b += ",\"pp_stage\":";
  append_int(b, v.graph.pp_stage[rank]);
}

void file_header(std::string& b, const RunView& v, const char* schema) {
  b += "{\"schema\":\"";
  b += schema;
  b += "\",\"version\":";
  append_quoted(b, common::version());
  b += ",\"scenario\":";
  append_quoted(b, v.scenario.name);
  b += ",\"fidelity\":";
  append_quoted(b, config::to_string(v.scenario.strategy.fidelity));
  b += ",\"executor\":";
  append_quoted(b, v.timeline.executor);
  b += ",\"time_unit\":\"us\",\"step_time_us\":";
  append_us(b, to_ns(v.timeline.makespan));
}

void write_timeline(const std::string& path, const RunView& v, const std::vector<memory::MemoryTimeline>& mts) {
  TextFile out(path);
  std::string b;
  file_header(b, v, "simumax_sim_memory_timeline_v1");
  b += ",\n\"columns\":[\"time_us\",\"allocated_bytes\",\"static_bytes\",\"activation_bytes\",\"transient_bytes\"],"
       "\n\"ranks\":[";
  for (size_t i = 0; i < mts.size(); ++i) {
    const auto& mt = mts[i];
    b += i ? ",\n" : "\n";
    rank_header(b, v, mt.rank);
    b += ",\"peak_allocated_bytes\":";
    append_int(b, mt.peak_bytes);
    b += ",\"peak_time_us\":";
    append_us(b, to_ns(mt.samples[mt.peak_sample].seconds));
    b += ",\"samples\":[";
    for (size_t k = 0; k < mt.samples.size(); ++k) {
      const auto& s = mt.samples[k];
      b += k ? ",\n[" : "\n[";
      append_us(b, to_ns(s.seconds));
      for (int64_t x : {s.allocated_bytes(), s.static_bytes, s.activation_bytes, s.transient_bytes}) {
        b += ',';
        append_int(b, x);
      }
      b += ']';
      out.append(b);
      b.clear();
    }
    b += "]}";
  }
  b += "\n]}\n";
  out.append(b);
  out.close();
}

void allocation(std::string& b, const memory::RankAllocations& ra, uint32_t a) {
  const auto& al = ra.allocations[a];
  b += "{\"id\":";
  append_int(b, a);
  b += ",\"name\":";
  append_quoted(b, al.name);
  b += ",\"kind\":\"";
  b += memory::to_string(al.kind);
  b += "\",\"bytes\":";
  append_int(b, al.bytes);
  b += ",\"alloc_us\":";
  append_us(b, to_ns(ra.events[al.alloc_event].seconds));
  b += ",\"free_us\":";
  if (al.free_event == memory::kNever) {
    b += "null";
  } else {
    append_us(b, to_ns(ra.events[al.free_event].seconds));
  }
  b += '}';
}

void peak(std::string& b, const RunView& v, const memory::RankAllocations& ra) {
  int64_t by_kind[3] = {0, 0, 0};
  std::vector<uint32_t> live;
  for (uint32_t a = 0; a < ra.allocations.size(); ++a) {
    if (!ra.live_after(a, ra.peak_event)) continue;
    live.push_back(a);
    by_kind[static_cast<int>(ra.allocations[a].kind)] += ra.allocations[a].bytes;
  }
  const auto& e = ra.events[ra.peak_event];
  const uint32_t task = ra.allocations[e.allocation].task;
  b += ",\"peak\":{\"allocated_bytes\":";
  append_int(b, ra.peak_bytes);
  b += ",\"time_us\":";
  append_us(b, to_ns(e.seconds));
  b += ",\"task\":";
  b += task == graph::kNoOpRef ? "null" : quoted(v.graph.names[v.graph.tasks[task].name]);
  const char* keys[] = {",\"static_bytes\":", ",\"activation_bytes\":", ",\"transient_bytes\":"};
  for (int k = 0; k < 3; ++k) {
    b += keys[k];
    append_int(b, by_kind[k]);
  }
  b += ",\"live\":[";
  for (size_t i = 0; i < live.size(); ++i) {
    b += i ? ",\n" : "\n";
    allocation(b, ra, live[i]);
  }
  b += "]}";
}

void write_snapshot(const std::string& path, const RunView& v, const std::vector<memory::RankAllocations>& ras) {
  TextFile out(path);
  std::string b;
  file_header(b, v, "simumax_sim_memory_snapshot_v1");
  b += ",\n\"ranks\":[";
  for (size_t i = 0; i < ras.size(); ++i) {
    const auto& ra = ras[i];
    b += i ? ",\n" : "\n";
    rank_header(b, v, ra.rank);
    peak(b, v, ra);
    b += ",\"allocations\":[";
    for (uint32_t a = 0; a < ra.allocations.size(); ++a) {
      b += a ? ",\n" : "\n";
      allocation(b, ra, a);
      out.append(b);
      b.clear();
    }
    b += "]}";
  }
  b += "\n]}\n";
  out.append(b);
  out.close();
}

}  // namespace

uint64_t estimate_memory_artifact_bytes(const RunView& v, const std::vector<uint32_t>& ranks) {
  std::vector<char> chosen(v.graph.num_ranks, 0);
  for (uint32_t r : ranks) chosen[r] = 1;
  uint64_t memory_tasks = 0;
  for (const auto& t : v.graph.tasks) {
    if (t.rank < chosen.size() && chosen[t.rank] && memory::is_memory_task(t, t.rank)) ++memory_tasks;
  }
  // Measured on tests/data/trace/llama3_8b_64gpu.json (layer and op granularity): a memory task costs about one
  // allocation in the snapshot and the pickle and one or two timeline samples; a rank its static allocations.
  constexpr uint64_t kBytesPerMemoryTask = 500, kBytesPerRank = 6656;
  return memory_tasks * kBytesPerMemoryTask + ranks.size() * kBytesPerRank;
}

std::vector<std::string> write_memory_artifacts(const std::string& dir, const RunView& v,
                                                const std::vector<uint32_t>& ranks) {
  const auto tasks = memory::tasks_by_rank(v.graph, v.timeline, ranks);
  std::vector<memory::MemoryTimeline> mts;
  std::vector<memory::RankAllocations> ras;
  for (size_t i = 0; i < ranks.size(); ++i) {
    mts.push_back(memory::memory_timeline(v.graph, v.timeline, ranks[i], tasks[i]));
    ras.push_back(memory::rank_allocations(v.graph, v.timeline, ranks[i], tasks[i]));
  }
  const std::vector<std::string> paths = {dir + "/memory_timeline.json", dir + "/memory_snapshot.json",
                                          dir + "/memory_snapshot.pickle"};
  write_timeline(paths[0], v, mts);
  write_snapshot(paths[1], v, ras);
  TextFile pickle(paths[2]);
  pickle.append(memory_viz_pickle(v, ras));
  pickle.close();
  return paths;
}

}  // namespace simumax::report
