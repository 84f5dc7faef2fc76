#include "engine/compare/kineto_insight.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "engine/common/median.hpp"
#include "engine/report/interval_set.hpp"

namespace simumax::compare {

namespace {

using common::median_of;

double quantile_of(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5))];
}

std::string class_label(const KernelClassTable& t, Classification c) {
  const std::string& cls = t.class_of(c).name;
  const std::string& sub = t.subclass_name(c);
  return sub == cls ? cls : cls + "/" + sub;
}

// The op a kernel belongs to: the GEMM op enclosing its launch when there is one (cuBLAS runs inside aten::mm),
// else the innermost op. The pass: backward when an autograd function encloses it, optimizer inside a step call.
struct OpOf {
  int64_t op = -1;
  const char* pass = "forward";
};

OpOf op_of(const KinetoEvents& k, const CpuOpIndex& index, const Launch& l) {
  OpOf out;
  const int64_t inner = index.innermost(l.pid, l.tid, l.ts_us, l.dur_us);
  out.op = inner;
  bool gemm_found = false;
  for (int64_t i = inner; i >= 0; i = index.parent(i)) {
    const std::string& name = k.strings[k.ops[static_cast<size_t>(i)].name];
    if (!gemm_found && is_gemm_op(name)) {
      out.op = i;
      gemm_found = true;
    }
    if (name.find("Backward") != std::string::npos || name.starts_with("autograd::engine")) out.pass = "backward";
    if (name.starts_with("Optimizer.step") || name.find("optimizer") != std::string::npos) out.pass = "optimizer";
  }
  return out;
}

struct Call {
  uint32_t name = 0, dims = 0, dtype = 0;
  const char* pass = "forward";
  Classification cls;
  double us = 0;
  int64_t kernels = 0;
};

std::vector<Call> calls_of(const KinetoEvents& k, const CpuOpIndex& index) {
  std::vector<Call> calls;
  std::unordered_map<uint64_t, size_t> call_of;  // (op + 1, class, subclass) -> index into calls
  for (const auto& g : k.gpu) {
    if (g.step < 0) continue;
    const auto l = k.launch_of.find(g.correlation);
    const OpOf o = l == k.launch_of.end() ? OpOf{} : op_of(k, index, k.launches[l->second]);
    const double us = g.timed.end_us - g.timed.start_us;
    if (o.op >= 0) {
      const uint64_t key = (static_cast<uint64_t>(o.op + 1) << 32) | (static_cast<uint64_t>(g.timed.cls.cls) << 16) |
                           g.timed.cls.sub;
      const auto [it, fresh] = call_of.emplace(key, calls.size());
      if (fresh) {
        const CpuOp& op = k.ops[static_cast<size_t>(o.op)];
        calls.push_back(Call{op.name, op.dims, op.dtype, o.pass, g.timed.cls, 0, 0});
      }
      calls[it->second].us += us;
      ++calls[it->second].kernels;
    } else {
      calls.push_back(Call{0, 0, 0, o.pass, g.timed.cls, us, 1});
    }
  }
  return calls;
}

std::vector<RealOp> group_calls(const KinetoEvents& k, const KernelClassTable& table, const std::vector<Call>& calls,
                                double steps) {
  std::map<std::tuple<uint32_t, uint32_t, std::string, uint16_t, uint16_t>, size_t> group_of;
  std::vector<RealOp> ops;
  for (const auto& c : calls) {
    const auto key = std::make_tuple(c.name, c.dims, std::string(c.pass), c.cls.cls, c.cls.sub);
    const auto [it, fresh] = group_of.emplace(key, ops.size());
    if (fresh) {
      RealOp r;
      r.op = c.name == 0 ? "(no CPU op)" : k.strings[c.name];
      r.dims = k.strings[c.dims];
      r.dtype = k.strings[c.dtype];
      r.pass = c.pass;
      r.cls = class_label(table, c.cls);
      if (table.class_of(c.cls).name == "gemm") r.gemm = gemm_shape(r.op, r.dims);
      if (table.class_of(c.cls).name == "attention") r.attention = attention_shape(r.op, r.dims);
      ops.push_back(std::move(r));
    }
    RealOp& r = ops[it->second];
    ++r.calls;
    r.kernels += c.kernels;
    r.total_ms += c.us * 1e-3 / steps;
    r.call_us.push_back(c.us);
  }
  for (auto& r : ops) {
    r.median_us = median_of(r.call_us);
    r.min_us = *std::min_element(r.call_us.begin(), r.call_us.end());
    if (r.gemm && r.median_us > 0) r.median_tflops = r.gemm->flops() / (r.median_us * 1e-6) / 1e12;
  }
  std::stable_sort(ops.begin(), ops.end(), [](const RealOp& a, const RealOp& b) { return a.total_ms > b.total_ms; });
  return ops;
}

std::vector<KernelStat> top_kernels(const KinetoEvents& k, const KernelClassTable& table, size_t top_n, double steps) {
  std::unordered_map<uint32_t, KernelStat> by_name;
  for (const auto& g : k.gpu) {
    if (g.step < 0) continue;
    KernelStat& s = by_name[g.name];
    if (s.count == 0) {
      s.name = k.strings[g.name];
      s.cls = class_label(table, g.timed.cls);
    }
    ++s.count;
    s.total_ms += (g.timed.end_us - g.timed.start_us) * 1e-3;
  }
  std::vector<KernelStat> out;
  for (auto& [id, s] : by_name) {
    s.mean_us = s.total_ms * 1e3 / static_cast<double>(s.count);
    s.total_ms /= steps;
    out.push_back(std::move(s));
  }
  std::sort(out.begin(), out.end(), [](const KernelStat& a, const KernelStat& b) {
    return a.total_ms != b.total_ms ? a.total_ms > b.total_ms : a.name < b.name;
  });
  if (out.size() > top_n) out.resize(top_n);
  return out;
}

LaunchStats launch_stats(const KinetoEvents& k, double steps) {
  LaunchStats s;
  std::vector<double> delay, launch;
  for (const auto& g : k.gpu) {
    if (g.step < 0) continue;
    const double us = g.timed.end_us - g.timed.start_us;
    if (us < LaunchStats::kShortUs) {
      ++s.short_kernels;
      s.short_ms += us * 1e-3 / steps;
    }
    const auto l = k.launch_of.find(g.correlation);
    if (l == k.launch_of.end()) continue;
    delay.push_back(g.timed.start_us - k.launches[l->second].ts_us);
    launch.push_back(k.launches[l->second].dur_us);
  }
  s.kernels = static_cast<int64_t>(delay.size());
  s.median_delay_us = median_of(delay);
  s.p90_delay_us = quantile_of(delay, 0.9);
  s.max_delay_us = delay.empty() ? 0 : *std::max_element(delay.begin(), delay.end());
  s.median_launch_us = median_of(launch);
  return s;
}

// Length of [lo, hi) covered by the sorted, disjoint `merged` intervals.
double covered_in(const std::vector<report::Interval>& merged, double lo, double hi) {
  double sum = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), lo,
                             [](const report::Interval& i, double x) { return i.second <= x; });
  for (; it != merged.end() && it->first < hi; ++it) sum += std::min(hi, it->second) - std::max(lo, it->first);
  return sum;
}

IdleSplit idle_split(const KinetoEvents& k, int64_t main_stream, double steps) {
  std::vector<const GpuEvent*> main;
  std::vector<report::Interval> others;
  for (const auto& g : k.gpu) {
    if (g.stream == main_stream && g.step >= 0) main.push_back(&g);
    else if (g.stream != main_stream) others.emplace_back(g.timed.start_us, g.timed.end_us);
  }
  const auto merged = report::merge_intervals(std::move(others));
  std::sort(main.begin(), main.end(), [](const GpuEvent* a, const GpuEvent* b) {
    return a->timed.start_us < b->timed.start_us;
  });
  IdleSplit s;
  double busy_until = main.empty() ? 0 : main.front()->timed.end_us;
  for (size_t i = 1; i < main.size(); ++i) {
    const double a = busy_until, b = main[i]->timed.start_us;
    busy_until = std::max(busy_until, main[i]->timed.end_us);
    if (!(b > a)) continue;
    // Host-bound first: until the next kernel's launch returned, nothing could run it.
    double host_end = a;
    const auto l = k.launch_of.find(main[i]->correlation);
    if (l != k.launch_of.end()) host_end = std::clamp(k.launches[l->second].ts_us + k.launches[l->second].dur_us, a, b);
    const double gap = b - a, host = host_end - a, other = covered_in(merged, host_end, b);
    s.idle_ms += gap;
    s.host_bound_ms += host;
    s.other_stream_ms += other;
    s.other_ms += gap - host - other;
  }
  for (double* v : {&s.idle_ms, &s.host_bound_ms, &s.other_stream_ms, &s.other_ms}) *v *= 1e-3 / steps;
  return s;
}

HostThread host_thread(const KinetoEvents& k, double steps) {
  HostThread h;
  std::map<std::pair<int64_t, int64_t>, int64_t> launches;  // (pid, tid) -> launches of the steps' GPU work
  for (const auto& g : k.gpu) {
    if (g.step < 0) continue;
    const auto l = k.launch_of.find(g.correlation);
    if (l != k.launch_of.end()) ++launches[{k.launches[l->second].pid, k.launches[l->second].tid}];
  }
  const auto most = std::max_element(launches.begin(), launches.end(),
                                     [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most == launches.end()) return h;
  std::tie(h.pid, h.tid) = most->first;
  h.launches = static_cast<double>(most->second) / steps;
  std::vector<report::Interval> windows, busy;
  for (const auto& st : k.steps) {
    if (st.pid == h.pid) windows.emplace_back(st.start_us, st.end_us);
  }
  // Its operators and launch calls; record_function ranges (user annotations) also span its idle time.
  for (const auto& op : k.ops) {
    if (op.pid == h.pid && op.tid == h.tid && !op.annotation) busy.emplace_back(op.start_us, op.end_us);
  }
  for (const auto& l : k.launches) {
    if (l.pid == h.pid && l.tid == h.tid) busy.emplace_back(l.ts_us, l.ts_us + l.dur_us);
  }
  const auto w = report::merge_intervals(std::move(windows));
  const auto b = report::merge_intervals(std::move(busy));
  // Busy inside the windows: the windows' length less what the busy set leaves bare in them.
  h.step_ms = report::covered_length(w) * 1e-3 / steps;
  h.busy_ms = (report::covered_length(w) - report::uncovered_length(w, b)) * 1e-3 / steps;
  return h;
}

}  // namespace

TraceInsight analyse_trace(const KinetoEvents& k, const CpuOpIndex& index, const KernelClassTable& table,
                           int64_t main_stream, size_t top_n) {
  TraceInsight t;
  std::set<int> steps;
  for (const auto& g : k.gpu) {
    if (g.step >= 0) steps.insert(g.step);
  }
  t.steps = static_cast<int64_t>(steps.size());
  const double n = std::max<double>(1, static_cast<double>(steps.size()));
  t.ops = group_calls(k, table, calls_of(k, index), n);
  for (const auto& op : k.ops) t.shapes_recorded = t.shapes_recorded || op.dims != 0;
  for (const auto& r : t.ops) {
    if (r.cls.starts_with("gemm")) {
      t.gemm_calls += r.calls;
      if (r.gemm) t.gemm_calls_shaped += r.calls;
    }
  }
  t.top_kernels = top_kernels(k, table, top_n, n);
  t.launch = launch_stats(k, n);
  t.idle = idle_split(k, main_stream, n);
  t.host = host_thread(k, n);
  return t;
}

}  // namespace simumax::compare
