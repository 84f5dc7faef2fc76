#include "engine/report/kineto_trace.hpp"

#include <algorithm>
#include <cctype>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/report/chrome_trace_reader.hpp"

namespace simumax::report {

namespace {

struct CpuStep {
  double start_us = 0, end_us = 0;
  int64_t pid = 0;
  std::string label;
};

struct Launch {
  double ts_us = 0;
  int64_t pid = 0;
  int64_t correlation = 0;
};

struct GpuEvent {
  TimedEvent timed;
  int64_t stream = 0;
  int64_t correlation = -1;
  int step = -1;
};

struct Collected {
  std::vector<CpuStep> steps;
  std::vector<Launch> launches;
  std::vector<GpuEvent> gpu;
  ChromeTraceInfo info;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Kineto's categories; older PyTorch wrote them capitalised ("Kernel", "Memcpy", "Runtime").
bool is_gpu_category(const std::string& cat) {
  const std::string c = lower(cat);
  return c == "kernel" || c == "gpu_memcpy" || c == "gpu_memset" || c == "memcpy" || c == "memset";
}

bool is_launch_category(const std::string& cat) {
  const std::string c = lower(cat);
  return c == "cuda_runtime" || c == "cuda_driver" || c == "runtime";
}

Collected collect(const std::string& path, const KernelClassTable& table) {
  Collected c;
  // Kernel names repeat thousands of times and rules may be regexes: classify each distinct name once.
  std::unordered_map<std::string, Classification> classified;
  c.info = read_chrome_trace(path, [&](const ChromeEvent& e) {
    if (e.ph != "X") return;
    if (is_gpu_category(e.cat)) {
      std::string key = e.cat + '\n' + e.name;
      auto it = classified.find(key);
      if (it == classified.end()) it = classified.emplace(std::move(key), table.classify(e.cat, e.name)).first;
      GpuEvent g;
      g.timed = TimedEvent{e.ts_us, e.ts_us + e.dur_us, it->second};
      g.stream = e.stream >= 0 ? e.stream : e.tid;
      g.correlation = e.correlation;
      c.gpu.push_back(g);
    } else if (is_launch_category(e.cat)) {
      if (e.correlation >= 0) c.launches.push_back(Launch{e.ts_us, e.pid, e.correlation});
    } else if (e.name.starts_with("ProfilerStep#") && lower(e.cat) != "gpu_user_annotation") {
      c.steps.push_back(CpuStep{e.ts_us, e.ts_us + e.dur_us, e.pid, e.name});
    }
  });
  std::sort(c.steps.begin(), c.steps.end(), [](const CpuStep& a, const CpuStep& b) { return a.start_us < b.start_us; });
  return c;
}

// Each GPU event gets the step whose CPU range holds its launch. The launch may come from any thread of the
// process (autograd runs the backward on its own thread), so only the time and the process are matched.
void attribute(Collected& c) {
  std::vector<double> starts;
  for (const auto& s : c.steps) starts.push_back(s.start_us);
  std::unordered_map<int64_t, int> step_of;
  for (const auto& l : c.launches) {
    const auto it = std::upper_bound(starts.begin(), starts.end(), l.ts_us);
    if (it == starts.begin()) continue;
    const int i = static_cast<int>(it - starts.begin()) - 1;
    if (l.ts_us <= c.steps[i].end_us && l.pid == c.steps[i].pid) step_of[l.correlation] = i;
  }
  for (auto& g : c.gpu) {
    const auto it = step_of.find(g.correlation);
    if (it != step_of.end()) g.step = it->second;
  }
}

int64_t main_stream(const Collected& c, const KernelClassTable& table) {
  std::map<int64_t, double> busy;
  for (const auto& g : c.gpu) {
    if (g.step >= 0 && table.class_of(g.timed.cls).kind == ClassKind::kCompute) {
      busy[g.stream] += g.timed.end_us - g.timed.start_us;
    }
  }
  int64_t best = -1;
  double most = -1;
  for (const auto& [stream, us] : busy) {
    if (us > most) std::tie(best, most) = std::tie(stream, us);
  }
  return best;
}

// Where each step starts on the GPU: its first event on the main stream. The GPU may run far behind the CPU (the
// 16-GPU trace: 155 ms), and side streams of the next step may start before this step's main work ends, so the
// first event on any stream would cut the steps in the wrong places.
std::vector<double> window_starts(const Collected& c, int64_t stream) {
  constexpr double kNone = std::numeric_limits<double>::infinity();
  std::vector<double> on_main(c.steps.size(), kNone), any(c.steps.size(), kNone);
  for (const auto& g : c.gpu) {
    if (g.step < 0) continue;
    any[g.step] = std::min(any[g.step], g.timed.start_us);
    if (g.stream == stream) on_main[g.step] = std::min(on_main[g.step], g.timed.start_us);
  }
  for (size_t i = 0; i < on_main.size(); ++i) {
    if (on_main[i] == kNone) on_main[i] = any[i];
  }
  return on_main;
}

// The events each step launched; counts the ones no step launched.
std::vector<std::vector<TimedEvent>> owned_events(const Collected& c, int64_t& unattributed) {
  std::vector<std::vector<TimedEvent>> owned(c.steps.size());
  for (const auto& g : c.gpu) {
    if (g.step < 0) ++unattributed;
    else owned[g.step].push_back(g.timed);
  }
  return owned;
}

// The steps that launched GPU work (a step that launched nothing has no place on the GPU timeline).
std::vector<size_t> steps_with_work(const Collected& c, const std::vector<std::vector<TimedEvent>>& owned,
                                    const std::string& path) {
  std::vector<size_t> kept;
  for (size_t i = 0; i < c.steps.size(); ++i) {
    if (!owned[i].empty()) kept.push_back(i);
    else common::logger("compare")->warn("{}: {} launched no GPU work; skipped", path, c.steps[i].label);
  }
  if (kept.empty()) throw common::ConfigError(path, "", "no GPU kernels launched inside any ProfilerStep#N");
  return kept;
}

}  // namespace

KinetoProfile load_kineto_trace(const std::string& path, const KernelClassTable& table) {
  Collected c = collect(path, table);
  if (c.steps.empty()) {
    throw common::ConfigError(path, "", "no ProfilerStep#N annotations found (profile with torch.profiler.schedule "
                                        "and call prof.step() every iteration)");
  }
  attribute(c);
  KinetoProfile p;
  p.path = path;
  p.rank = c.info.rank;
  p.world_size = c.info.world_size;
  p.gpu_events = static_cast<int64_t>(c.gpu.size());
  const auto owned = owned_events(c, p.unattributed_events);
  const auto kept = steps_with_work(c, owned, path);
  p.main_stream = main_stream(c, table);
  const std::vector<double> starts = window_starts(c, p.main_stream);
  // The last step has no next step to end it: it ends when the last event it launched does.
  double last_end = starts[kept.back()];
  for (const auto& e : owned[kept.back()]) last_end = std::max(last_end, e.end_us);
  for (size_t k = 0; k < kept.size(); ++k) {
    const size_t i = kept[k];
    const double start = starts[i];
    const double end = std::max(start, k + 1 < kept.size() ? starts[kept[k + 1]] : last_end);
    std::vector<TimedEvent> timed;
    for (const auto& g : c.gpu) {
      if (g.timed.end_us > start && g.timed.start_us < end) timed.push_back(g.timed);
    }
    StepBreakdown s = break_down_step(timed, owned[i], start, end, table);
    s.label = c.steps[i].label;
    s.cpu_ms = (c.steps[i].end_us - c.steps[i].start_us) * 1e-3;
    p.steps.push_back(std::move(s));
  }
  return p;
}

}  // namespace simumax::report
