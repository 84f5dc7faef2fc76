#include "engine/compare/step_breakdown.hpp"

#include <algorithm>

#include "engine/report/interval_set.hpp"

namespace simumax::compare {

namespace {

constexpr double kMsPerUs = 1e-3;

struct Buckets {
  std::vector<report::Interval> all, compute, comm, memory;
  std::vector<std::vector<report::Interval>> by_class;
  std::map<std::string, std::vector<report::Interval>> comm_by_type;
};

Buckets bucket(const std::vector<TimedEvent>& timed, double start, double end, const KernelClassTable& table) {
  Buckets b;
  b.by_class.resize(table.classes().size());
  for (const auto& e : timed) {
    const report::Interval i{std::max(e.start_us, start), std::min(e.end_us, end)};
    if (!(i.second > i.first)) continue;
    b.all.push_back(i);
    b.by_class[e.cls.cls].push_back(i);
    switch (table.class_of(e.cls).kind) {
      case ClassKind::kCompute: b.compute.push_back(i); break;
      case ClassKind::kComm:
        b.comm.push_back(i);
        b.comm_by_type[table.subclass_name(e.cls)].push_back(i);
        break;
      case ClassKind::kMemory: b.memory.push_back(i); break;
    }
  }
  return b;
}

}  // namespace

StepBreakdown break_down_step(const std::vector<TimedEvent>& timed, const std::vector<TimedEvent>& owned,
                              double window_start_us, double window_end_us, const KernelClassTable& table) {
  Buckets b = bucket(timed, window_start_us, window_end_us, table);
  StepBreakdown s;
  s.total_ms = (window_end_us - window_start_us) * kMsPerUs;
  const auto compute = report::merge_intervals(std::move(b.compute));
  const auto comm = report::merge_intervals(std::move(b.comm));
  s.compute_ms = report::covered_length(compute) * kMsPerUs;
  s.comm_ms = report::covered_length(comm) * kMsPerUs;
  // Exposed: communication during which no compute kernel runs on any stream (copies do not hide it).
  s.exposed_comm_ms = report::uncovered_length(comm, compute) * kMsPerUs;
  s.memory_ms = report::covered_length(report::merge_intervals(std::move(b.memory))) * kMsPerUs;
  s.idle_ms = s.total_ms - report::covered_length(report::merge_intervals(std::move(b.all))) * kMsPerUs;
  for (auto& c : b.by_class) s.class_ms.push_back(report::covered_length(report::merge_intervals(std::move(c))) * kMsPerUs);
  for (auto& [type, list] : b.comm_by_type) s.comm_ms_by_type[type] = report::covered_length(report::merge_intervals(list)) * kMsPerUs;
  s.kernels = static_cast<int64_t>(owned.size());
  s.class_kernels.assign(table.classes().size(), 0);
  for (const auto& e : owned) {
    ++s.class_kernels[e.cls.cls];
    if (table.class_of(e.cls).kind == ClassKind::kComm) ++s.comm_kernels[table.subclass_name(e.cls)];
  }
  return s;
}

}  // namespace simumax::compare
