#include "engine/compare/kineto_trace.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/compare/kineto_collectives.hpp"
#include "engine/compare/kineto_events.hpp"

namespace simumax::compare {

namespace {

using Collected = KinetoEvents;

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

KinetoProfile load_kineto_trace(const std::string& path, const KernelClassTable& shipped, size_t top_n) {
  KernelClassTable table = shipped;
  Collected c = read_kineto_events(path, table);
  if (c.steps.empty()) {
    throw common::ConfigError(path, "", "no ProfilerStep#N annotations found (profile with torch.profiler.schedule "
                                        "and call prof.step() every iteration)");
  }
  KinetoProfile p;
  const CpuOpIndex index(c.ops);  // the ops' nesting, sorted once for the three passes below
  p.collectives = label_collectives(c, index, table);
  p.path = path;
  p.rank = c.info.rank;
  p.world_size = c.info.world_size;
  p.gpu_events = static_cast<int64_t>(c.gpu.size());
  const auto owned = owned_events(c, p.unattributed_events);
  const auto kept = steps_with_work(c, owned, path);
  p.main_stream = main_stream(c, table);
  p.insight = analyse_trace(c, index, table, p.main_stream, top_n);
  p.collective_calls = collective_calls(c, index, table, c.info.world_size);
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

}  // namespace simumax::compare
