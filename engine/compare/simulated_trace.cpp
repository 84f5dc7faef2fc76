#include "engine/compare/simulated_trace.hpp"

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/common/error.hpp"
#include "engine/common/text_case.hpp"
#include "engine/report/chrome_trace_reader.hpp"
#include "engine/report/summary.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::compare {

namespace {

namespace fs = std::filesystem;

struct Task {
  double start_us = 0, end_us = 0;
  int64_t rank = 0, lane = 0;
  uint32_t name = 0;
  uint32_t shape = 0;  // index into Collected::shapes (0: none)
  double flops = 0;
};

struct Collected {
  std::vector<Task> tasks;
  std::vector<std::string> names;
  std::vector<std::string> shapes{std::string()};
  std::map<std::pair<int64_t, int64_t>, std::string> lane_names;
  double first_us = std::numeric_limits<double>::infinity();
  double last_us = -std::numeric_limits<double>::infinity();
};

Collected collect(const std::string& path) {
  Collected c;
  std::unordered_map<std::string, uint32_t> ids, shape_ids;
  report::read_chrome_trace(path, [&](const report::ChromeEvent& e) {
    if (e.ph == "M" && e.name == "thread_name") {
      c.lane_names[{e.pid, e.tid}] = e.arg_name;
      return;
    }
    if (e.ph != "X" || !e.pid_numeric) return;
    c.first_us = std::min(c.first_us, e.ts_us);
    c.last_us = std::max(c.last_us, e.ts_us + e.dur_us);
    if (!(e.dur_us > 0)) return;  // barriers: zero-time synchronisation, nothing ran
    auto it = ids.find(e.name);
    if (it == ids.end()) {
      it = ids.emplace(e.name, static_cast<uint32_t>(c.names.size())).first;
      c.names.push_back(e.name);
    }
    uint32_t shape = 0;
    if (!e.shape_key.empty()) {
      shape = shape_ids.emplace(e.shape_key, static_cast<uint32_t>(c.shapes.size())).first->second;
      if (shape == c.shapes.size()) c.shapes.push_back(e.shape_key);
    }
    c.tasks.push_back(Task{e.ts_us, e.ts_us + e.dur_us, e.pid, e.tid, it->second, shape, std::max(0.0, e.flops)});
  });
  if (c.tasks.empty()) {
    throw common::ConfigError(path, "", "no complete events (ph \"X\") with a duration in the trace");
  }
  return c;
}

enum class Lane { kUnknown, kCompute, kComm, kSkip, kHost };

Lane lane_kind(const std::string& lane) {
  const std::string low = common::lower_ascii(lane);
  const auto has = [&](std::initializer_list<const char*> words) {
    return std::any_of(words.begin(), words.end(), [&](const char* w) { return low.find(w) != std::string::npos; });
  };
  if (low.empty()) return Lane::kUnknown;
  // The trace writer's "sync" lane holds pipeline barriers: waiting, not work a GPU would show.
  if (has({"sync", "barrier", "wait"})) return Lane::kSkip;
  if (low == "host") return Lane::kHost;  // the host lane (docs/host.md): CPU time, not GPU work
  if (has({"comm", "send", "recv", "p2p", "nccl"})) return Lane::kComm;
  return Lane::kCompute;
}

std::string rank_list(const std::vector<int64_t>& ranks) {
  std::string out;
  for (size_t i = 0; i < ranks.size() && i < 16; ++i) out += (i ? ", " : "") + std::to_string(ranks[i]);
  if (ranks.size() > 16) out += ", ... (" + std::to_string(ranks.size()) + " ranks)";
  return out;
}

int64_t choose_rank(const std::string& path, const std::vector<int64_t>& ranks, const RankChoice& choice) {
  const auto has = [&](int64_t r) { return std::binary_search(ranks.begin(), ranks.end(), r); };
  if (choice.rank) {
    if (!has(*choice.rank)) {
      throw common::ConfigError(path, "", "rank " + std::to_string(*choice.rank) +
                                              " is not in the trace; ranks in it: " + rank_list(ranks));
    }
    return *choice.rank;
  }
  return choice.preferred && has(*choice.preferred) ? *choice.preferred : ranks.front();
}

// The lane says whether a task communicates; the table says which class. When they disagree the lane wins (a
// compute lane's task named like a collective is still compute).
Classification classify(const KernelClassTable& table, const std::string& name, Lane lane) {
  const Classification c = table.classify("", name);
  if (lane == Lane::kUnknown) return c;
  const ClassKind kind = lane == Lane::kComm ? ClassKind::kComm : ClassKind::kCompute;
  return table.class_of(c).kind == kind ? c : table.fallback(kind);
}

// Our tasks grouped by name (an op of a layer and pass), by total time.
std::vector<OurOp> our_ops(const Collected& c, const std::vector<const Task*>& tasks,
                           const std::vector<TimedEvent>& events, const KernelClassTable& table) {
  std::map<uint32_t, size_t> op_of;
  std::vector<OurOp> ops;
  std::vector<std::vector<double>> durations;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const auto [it, fresh] = op_of.emplace(tasks[i]->name, ops.size());
    if (fresh) {
      OurOp o;
      o.name = c.names[tasks[i]->name];
      const std::string& cls = table.class_of(events[i].cls).name;
      const std::string& sub = table.subclass_name(events[i].cls);
      o.cls = sub == cls ? cls : cls + "/" + sub;
      o.flops = tasks[i]->flops;
      o.shape_key = c.shapes[tasks[i]->shape];
      ops.push_back(std::move(o));
      durations.emplace_back();
    }
    const double us = tasks[i]->end_us - tasks[i]->start_us;
    ++ops[it->second].calls;
    ops[it->second].total_ms += us * 1e-3;
    durations[it->second].push_back(us);
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    auto& d = durations[i];
    std::sort(d.begin(), d.end());
    ops[i].median_us = d.size() % 2 == 1 ? d[d.size() / 2] : (d[d.size() / 2 - 1] + d[d.size() / 2]) / 2;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const OurOp& a, const OurOp& b) { return a.total_ms > b.total_ms; });
  return ops;
}

void read_trace(SimulatedRun& run, const RankChoice& choice, const KernelClassTable& table) {
  const Collected c = collect(run.trace_path);
  std::set<int64_t> ranks;
  for (const auto& t : c.tasks) ranks.insert(t.rank);
  run.ranks.assign(ranks.begin(), ranks.end());
  run.rank = choose_rank(run.trace_path, run.ranks, choice);
  run.preferred_rank_missing = !choice.rank && choice.preferred && *choice.preferred != run.rank;
  std::map<int64_t, Lane> lanes;
  for (const auto& [key, name] : c.lane_names) {
    if (key.first == run.rank) lanes[key.second] = lane_kind(name);
  }
  std::map<std::pair<uint32_t, int64_t>, Classification> classified;  // (name, lane) -> class
  std::vector<TimedEvent> events;
  std::vector<const Task*> tasks;  // beside events
  for (const auto& t : c.tasks) {
    if (t.rank != run.rank) continue;
    const auto lane = lanes.find(t.lane);
    const Lane kind = lane == lanes.end() ? Lane::kUnknown : lane->second;
    if (kind == Lane::kSkip) continue;
    if (kind == Lane::kHost) {
      run.host_ms = run.host_ms.value_or(0) + (t.end_us - t.start_us) * 1e-3;
      ++run.host_tasks;
      continue;
    }
    auto it = classified.find({t.name, t.lane});
    if (it == classified.end()) {
      it = classified.emplace(std::make_pair(t.name, t.lane), classify(table, c.names[t.name], kind)).first;
    }
    events.push_back(TimedEvent{t.start_us, t.end_us, it->second});
    tasks.push_back(&t);
  }
  run.step = break_down_step(events, events, c.first_us, c.last_us, table);
  run.step->label = "simulated step";
  run.ops = our_ops(c, tasks, events, table);
}

void read_run_summary(SimulatedRun& run) {
  const report::Summary s = report::read_summary(run.summary_path);
  run.summary_step_ms = s.step_time_ms;
  run.peak_alloc_bytes = static_cast<double>(s.peak_alloc_bytes_max);
  run.peak_reserved_bytes = s.peak_reserved_bytes_max;
}

}  // namespace

SimulatedRun load_simulated_run(const std::string& path, const RankChoice& choice, const KernelClassTable& table) {
  SimulatedRun run;
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    for (const char* name : {"trace.json", "trace.json.gz"}) {
      const fs::path candidate = fs::path(path) / name;
      if (run.trace_path.empty() && fs::exists(candidate)) run.trace_path = candidate.string();
    }
    if (fs::exists(fs::path(path) / "summary.json")) run.summary_path = (fs::path(path) / "summary.json").string();
    if (run.trace_path.empty() && run.summary_path.empty()) {
      throw common::ConfigError(path, "", "no trace.json or summary.json in this folder (simumax-sim run --trace "
                                          "writes them)");
    }
  } else if (fs::path(path).filename() == "summary.json") {
    run.summary_path = path;
  } else {
    run.trace_path = path;
  }
  if (!run.trace_path.empty()) read_trace(run, choice, table);
  if (!run.summary_path.empty()) read_run_summary(run);
  return run;
}

}  // namespace simumax::compare
