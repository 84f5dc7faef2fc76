#include "engine/compare/kineto_events.hpp"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string_view>
#include <tuple>

namespace simumax::compare {

namespace {

using namespace std::string_view_literals;

// `s` in lower case: `s` itself when it has no upper-case letter (millions of events, no copy), else `buffer`.
std::string_view lower(const std::string& s, std::string& buffer) {
  if (std::none_of(s.begin(), s.end(), [](char c) { return c >= 'A' && c <= 'Z'; })) return s;
  buffer = s;
  for (char& c : buffer) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return buffer;
}

// Kineto's categories; older PyTorch wrote them capitalised ("Kernel", "Memcpy", "Runtime", "Operator").
bool is_gpu_category(std::string_view c) {
  return c == "kernel"sv || c == "gpu_memcpy"sv || c == "gpu_memset"sv || c == "memcpy"sv || c == "memset"sv;
}

bool is_launch_category(std::string_view c) {
  return c == "cuda_runtime"sv || c == "cuda_driver"sv || c == "runtime"sv;
}

bool is_cpu_op_category(std::string_view c) {
  return c == "cpu_op"sv || c == "user_annotation"sv || c == "operator"sv;
}

// Each GPU event gets the step whose CPU range holds its launch. The launch may come from any thread of the
// process (autograd runs the backward on its own thread), so only the time and the process are matched.
void attribute(KinetoEvents& k) {
  std::vector<double> starts;
  for (const auto& s : k.steps) starts.push_back(s.start_us);
  for (auto& g : k.gpu) {
    const auto l = k.launch_of.find(g.correlation);
    if (l == k.launch_of.end()) continue;
    const Launch& launch = k.launches[l->second];
    const auto it = std::upper_bound(starts.begin(), starts.end(), launch.ts_us);
    if (it == starts.begin()) continue;
    const size_t i = static_cast<size_t>(it - starts.begin()) - 1;
    if (launch.ts_us <= k.steps[i].end_us && launch.pid == k.steps[i].pid) g.step = static_cast<int>(i);
  }
}

// The event's collective message, when it records any of it.
std::optional<CommArgs> comm_args(const report::ChromeEvent& e, StringPool& strings) {
  if (e.in_nelems < 0 && e.out_nelems < 0 && e.group_size < 0) return std::nullopt;
  return CommArgs{e.in_nelems, e.out_nelems, e.group_size, strings.id(e.msg_dtype)};
}

}  // namespace

uint32_t StringPool::id(const std::string& s) {
  if (s.empty()) return 0;
  const auto it = ids_.find(s);
  if (it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(text_.size());
  text_.push_back(s);
  ids_.emplace(s, id);
  return id;
}

KinetoEvents read_kineto_events(const std::string& path, const KernelClassTable& table) {
  KinetoEvents k;
  // Kernel names repeat thousands of times and rules may be regexes: classify each distinct name once.
  std::unordered_map<uint64_t, Classification> classified;  // (category id, name id) -> class
  StringPool categories;
  std::string lowered;
  k.info = report::read_chrome_trace(path, [&](const report::ChromeEvent& e) {
    if (e.ph != "X") return;
    const std::string_view cat = lower(e.cat, lowered);
    if (is_gpu_category(cat)) {
      GpuEvent g;
      g.name = k.strings.id(e.name);
      const uint64_t key = (static_cast<uint64_t>(categories.id(e.cat)) << 32) | g.name;
      auto it = classified.find(key);
      if (it == classified.end()) it = classified.emplace(key, table.classify(e.cat, e.name)).first;
      g.timed = TimedEvent{e.ts_us, e.ts_us + e.dur_us, it->second};
      g.stream = e.stream >= 0 ? e.stream : e.tid;
      g.correlation = e.correlation;
      g.collective = k.strings.id(e.collective);
      if (auto c = comm_args(e, k.strings)) k.gpu_comm.emplace(k.gpu.size(), *c);
      k.gpu.push_back(g);
    } else if (is_launch_category(cat)) {
      if (e.correlation < 0) return;
      k.launch_of.emplace(e.correlation, k.launches.size());
      k.launches.push_back(Launch{e.ts_us, e.dur_us, e.pid, e.tid, e.correlation});
    } else if (e.name.starts_with("ProfilerStep#") && cat != "gpu_user_annotation"sv) {
      k.steps.push_back(CpuStep{e.ts_us, e.ts_us + e.dur_us, e.pid, e.name});
    } else if (is_cpu_op_category(cat)) {
      if (auto c = comm_args(e, k.strings)) k.op_comm.emplace(k.ops.size(), *c);
      k.ops.push_back(CpuOp{e.ts_us, e.ts_us + e.dur_us, e.pid, e.tid, k.strings.id(e.name),
                            k.strings.id(e.input_dims), k.strings.id(e.collective), k.strings.id(e.input_type),
                            cat == "user_annotation"sv});
    }
  });
  std::sort(k.steps.begin(), k.steps.end(), [](const CpuStep& a, const CpuStep& b) { return a.start_us < b.start_us; });
  attribute(k);
  return k;
}

CpuOpIndex::CpuOpIndex(const std::vector<CpuOp>& ops) : ops_(ops), parent_(ops.size(), -1) {
  order_.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) order_[i] = static_cast<uint32_t>(i);
  const auto key = [&](uint32_t i) { return std::make_tuple(ops[i].pid, ops[i].tid, ops[i].start_us, -ops[i].end_us); };
  std::sort(order_.begin(), order_.end(), [&](uint32_t a, uint32_t b) { return key(a) < key(b); });
  // Ops of one thread nest: walking them by start time, the ops still open form a stack.
  std::vector<uint32_t> open;
  for (size_t n = 0; n < order_.size(); ++n) {
    const CpuOp& op = ops[order_[n]];
    if (n > 0 && (ops[order_[n - 1]].pid != op.pid || ops[order_[n - 1]].tid != op.tid)) open.clear();
    while (!open.empty() && ops[open.back()].end_us < op.end_us) open.pop_back();
    if (!open.empty()) parent_[order_[n]] = open.back();
    open.push_back(order_[n]);
  }
}

int64_t CpuOpIndex::innermost(int64_t pid, int64_t tid, double ts_us, double dur_us) const {
  // The last op of the thread to start at or before ts; the innermost op holding ts is it or an ancestor.
  const auto it = std::upper_bound(order_.begin(), order_.end(), std::make_tuple(pid, tid, ts_us),
                                   [&](const std::tuple<int64_t, int64_t, double>& k, uint32_t i) {
                                     return k < std::make_tuple(ops_[i].pid, ops_[i].tid, ops_[i].start_us);
                                   });
  if (it == order_.begin()) return -1;
  int64_t i = *(it - 1);
  if (ops_[static_cast<size_t>(i)].pid != pid || ops_[static_cast<size_t>(i)].tid != tid) return -1;
  const double end_us = ts_us + dur_us;
  while (i >= 0 && ops_[static_cast<size_t>(i)].end_us < end_us) i = parent_[static_cast<size_t>(i)];
  return i;
}

}  // namespace simumax::compare
