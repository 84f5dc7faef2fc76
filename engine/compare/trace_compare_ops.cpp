// Op by op: our ops lined up with the real trace's, and the real trace's top kernels, launch statistics and idle
// split as text tables.
#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

#include "engine/common/number_text.hpp"
#include "engine/compare/gemm_shape.hpp"
#include "engine/compare/trace_compare.hpp"

namespace simumax::compare {

namespace {

constexpr auto fmt = common::format_number;  // a table cell's number

std::string class_part(const std::string& label) { return label.substr(0, label.find('/')); }

// The GEMM a shape stands for, with its batch folded into m: our keys put the micro-batch in b, PyTorch's 2-D
// mm has b = 1 and m = b x s.
std::tuple<int64_t, int64_t, int64_t> folded(const GemmShape& g) { return {g.b * g.m, g.k, g.n}; }

std::string clip(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n - 3) + "..."; }

std::string row(const std::vector<std::pair<std::string, int>>& cells) {
  std::string out;
  for (const auto& [text, width] : cells) {
    const size_t w = static_cast<size_t>(width < 0 ? -width : width);
    const std::string pad(w > text.size() ? w - text.size() : 0, ' ');
    out += width < 0 ? text + pad + " " : pad + text + " ";
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out + "\n";
}

std::string tflops(double flops, double us) { return flops > 0 && us > 0 ? fmt("%.1f", flops / us * 1e-6) : "-"; }

}  // namespace

std::string pass_of_our_op(const std::string& name) {
  if (name.starts_with("optimizer")) return "optimizer";
  for (const char* s : {".bwd", ".dgrad", ".wgrad", "_bwd", ".backward"}) {
    if (name.find(s) != std::string::npos) return "backward";
  }
  return "forward";
}

std::vector<OpMatch> align_ops(const SimulatedRun& ours, const TraceInsight& real) {
  std::vector<OpMatch> out(ours.ops.size());
  std::vector<bool> used(real.ops.size(), false);
  for (size_t i = 0; i < ours.ops.size(); ++i) {
    out[i].ours = i;
    const auto shape = gemm_shape_of_key(ours.ops[i].shape_key);
    if (!shape) continue;
    const std::string pass = pass_of_our_op(ours.ops[i].name);
    // The real ops are in cost order: the first free one of the same shape and pass is the costliest.
    for (size_t r = 0; r < real.ops.size(); ++r) {
      const RealOp& op = real.ops[r];
      if (used[r] || !op.gemm || op.pass != pass || folded(*op.gemm) != folded(*shape)) continue;
      out[i].real = r;
      out[i].by = "shape";
      used[r] = true;
      break;
    }
  }
  // The rest by class and rank of cost, forward against forward, backward against backward: first within the
  // subclass (a reduce-scatter against a reduce-scatter), then within the class.
  for (const bool whole_label : {true, false}) {
    const auto label = [&](const std::string& cls) { return whole_label ? cls : class_part(cls); };
    std::map<std::pair<std::string, std::string>, std::vector<size_t>> free_real;
    for (size_t r = 0; r < real.ops.size(); ++r) {
      if (!used[r]) free_real[{label(real.ops[r].cls), real.ops[r].pass}].push_back(r);
    }
    std::map<std::pair<std::string, std::string>, size_t> next;
    for (size_t i = 0; i < ours.ops.size(); ++i) {
      if (out[i].real) continue;
      const std::pair<std::string, std::string> key{label(ours.ops[i].cls), pass_of_our_op(ours.ops[i].name)};
      const auto& list = free_real[key];
      size_t& n = next[key];
      if (n < list.size()) {
        out[i].real = list[n];
        out[i].by = "class order";
        used[list[n++]] = true;
      }
    }
  }
  return out;
}

std::string insight_tables(const Comparison& c) {
  if (!c.real.insight) return "";
  const TraceInsight& t = *c.real.insight;
  std::ostringstream out;
  out << "\ntop " << t.top_kernels.size() << " real kernels (ms per step)\n";
  out << row({{"kernel", -60}, {"class", -22}, {"count", 7}, {"ms/step", 9}, {"mean us", 9}});
  for (const auto& k : t.top_kernels) {
    out << row({{clip(k.name, 60), -60}, {k.cls, -22}, {std::to_string(k.count), 7}, {fmt("%.3f", k.total_ms), 9},
                {fmt("%.1f", k.mean_us), 9}});
  }
  out << "\nreal ops by time (ms per step; " << t.ops.size() << " op/shape/pass groups, all in --json)\n";
  out << row({{"op", -28}, {"pass", -9}, {"input dims", -34}, {"class", -18}, {"calls", 6}, {"ms/step", 9},
              {"median us", 10}, {"TFLOPS", 7}});
  for (size_t i = 0; i < t.ops.size() && i < c.top_n; ++i) {
    const RealOp& r = t.ops[i];
    out << row({{clip(r.op, 28), -28}, {r.pass, -9}, {clip(r.dims.empty() ? "-" : r.dims, 34), -34},
                {clip(r.cls, 18), -18}, {std::to_string(r.calls), 6}, {fmt("%.3f", r.total_ms), 9},
                {fmt("%.1f", r.median_us), 10}, {r.median_tflops ? fmt("%.1f", *r.median_tflops) : "-", 7}});
  }
  out << "GEMM calls: " << t.gemm_calls << ", with a shape: " << t.gemm_calls_shaped;
  if (!t.shapes_recorded) out << " (no Input Dims in the trace: profile with record_shapes=True)";
  out << "\n";
  const LaunchStats& l = t.launch;
  out << "\nlaunches: " << l.kernels << " GPU events with a launch; launch-to-start delay median "
      << fmt("%.1f", l.median_delay_us) << " us, p90 " << fmt("%.1f", l.p90_delay_us) << " us, max "
      << fmt("%.1f", l.max_delay_us) << " us; launch call median " << fmt("%.1f", l.median_launch_us)
      << " us; short kernels (< " << fmt("%.0f", LaunchStats::kShortUs) << " us): " << l.short_kernels << ", "
      << fmt("%.3f", l.short_ms) << " ms per step\n";
  const IdleSplit& d = t.idle;
  out << "main stream idle (ms per step): " << fmt("%.3f", d.idle_ms) << " = host-bound " << fmt("%.3f", d.host_bound_ms)
      << " + waiting on another stream " << fmt("%.3f", d.other_stream_ms) << " + other " << fmt("%.3f", d.other_ms)
      << "\n";
  // The host lane beside the real thread that launched the kernels (docs/host.md).
  const HostThread& h = t.host;
  out << "host (ms per step): ours ";
  if (c.ours.host_ms) {
    out << fmt("%.3f", *c.ours.host_ms) << " (" << c.ours.host_tasks << " host tasks)";
  } else {
    out << "- (no host time: the system config has no \"host\", or the simumax fidelity)";
  }
  out << "; real ";
  if (h.tid >= 0) {
    out << fmt("%.3f", h.busy_ms) << " busy of " << fmt("%.3f", h.step_ms) << " (thread " << h.tid << ", "
        << fmt("%.0f", h.launches) << " launches per step)";
  } else {
    out << "- (no launch in a profiled step)";
  }
  out << "\n";
  if (c.ops.empty()) return out.str();
  out << "\nours vs real, op by op (median per call; by our cost, first " << std::min(c.top_n, c.ops.size()) << " of "
      << c.ops.size() << ")\n";
  out << row({{"ours", -34}, {"real", -40}, {"by", -11}, {"ours us", 9}, {"real us", 9}, {"error", 8},
              {"TFLOPS", 7}, {"real", 7}});
  for (size_t i = 0; i < c.ops.size() && i < c.top_n; ++i) {
    const OurOp& o = c.ours.ops[c.ops[i].ours];
    const RealOp* r = c.ops[i].real ? &t.ops[*c.ops[i].real] : nullptr;
    const std::string real_name = r ? r->op + (r->dims.empty() ? "" : " " + r->dims) : "-";
    const auto err = r ? error_pct(o.median_us, r->median_us) : std::nullopt;
    out << row({{clip(o.name, 34), -34}, {clip(real_name, 40), -40}, {c.ops[i].by.empty() ? "-" : c.ops[i].by, -11},
                {fmt("%.1f", o.median_us), 9}, {r ? fmt("%.1f", r->median_us) : "-", 9},
                {err ? fmt("%+.1f%%", *err) : "-", 8}, {tflops(o.flops, o.median_us), 7},
                {r && r->median_tflops ? fmt("%.1f", *r->median_tflops) : "-", 7}});
  }
  return out.str();
}

}  // namespace simumax::compare
