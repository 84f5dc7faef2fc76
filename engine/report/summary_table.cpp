// The text table printed by `simumax-sim run`.
#include <cstdio>
#include <string>

#include "engine/common/number_text.hpp"
#include "engine/common/units.hpp"
#include "engine/report/simumax_strings.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {

namespace {

constexpr auto fmt = common::format_number;  // a table cell's number

// The GPU memory as the system config gives it: mem_gbs 0.08 prints "0.08 GiB", 80 prints "80 GiB".
std::string config_gib(double gib) { return fmt("%.10g GiB", gib); }

std::string fit_lines(const Summary& s) {
  std::string out = "memory     peak " + fmt("%.4f GiB", common::gib(static_cast<double>(s.peak_alloc_bytes_max))) +
                    " allocated, " + fmt("%.4f GiB", common::gib(s.peak_reserved_bytes_max)) + " reserved, of " +
                    config_gib(s.gpu_memory_gib);
  const std::string margin =
      s.memory_margin_bytes > 0 ? " (after a margin of " + fmt("%.4g GiB", common::gib(s.memory_margin_bytes)) + ")"
                                : "";
  if (s.fits) {
    return out + ": fits, headroom " + fmt("%.4f GiB", common::gib(s.headroom_bytes)) + " (" +
           fmt("%.1f %%", headroom_percent(s, s.headroom_bytes)) + ")" + margin + "\n";
  }
  out += ": DOES NOT FIT\n";
  std::string stages;
  for (const auto& st : s.stages) {
    if (!st.fits) stages += (stages.empty() ? "" : ", ") + std::to_string(st.stage);
  }
  return out + "DOES NOT FIT: " + fmt("%.4f GiB", -common::gib(s.headroom_bytes)) + " more than the " +
         config_gib(s.gpu_memory_gib) + " of GPU memory" + margin + " on the worst stage; stage" +
         (stages.find(',') == std::string::npos ? " " : "s ") + stages + " do" +
         (stages.find(',') == std::string::npos ? "es" : "") + " not fit\n";
}

std::string model_lines(const Summary& s) {
  std::string out = "model      " + (s.model_name.empty() ? std::string("(unnamed)") : s.model_name) + " (" +
                    billions(s.param_count) + " parameters), dtype " + s.dtype + ", recompute: " + s.recompute + "\n";
  out += "nets       tp " + s.nets.tp + ", cp " + s.nets.cp + ", pp " + s.nets.pp + ", dp " + s.nets.dp + ", ep " +
         s.nets.ep + ", etp " + s.nets.etp + ", edp " + s.nets.edp + "\n";
  return out;
}

std::string miss_lines(const Summary& s) {
  if (s.efficiency_table_misses == 0) return "";
  std::string out = "note       " + std::to_string(s.efficiency_table_misses) +
                    " GEMM/attention shapes missing from the efficiency tables (" +
                    (s.misses_interpolated ? "priced from the nearest measured shapes" : "fallback efficient_factor used") +
                    "; also in summary.json miss_efficiency):\n";
  for (const auto& [op, keys] : s.miss_efficiency) {
    for (const auto& k : keys) out += "             " + op + ": " + k + "\n";
  }
  return out;
}

}  // namespace

std::string summary_table(const Summary& s) {
  std::string out;
  char line[256];
  // Said in words: a SimuMax user reads our default step time against SimuMax's (issue 34).
  const std::string fidelity = s.fidelity == "simumax" ? "simumax (SimuMax v1.2's model)"
                               : s.fidelity == "megatron"
                                   ? "megatron (what Megatron-LM and TE run; SimuMax's own model: --fidelity simumax)"
                                   : s.fidelity;
  out += "scenario   " + s.name + "  (fidelity " + fidelity + ", executor " + s.executor + ", " + s.granularity +
         " tasks, ranks: " + s.scope + ", " + std::to_string(s.num_tasks) + " tasks)\n";
  out += model_lines(s);
  std::snprintf(line, sizeof line,
                "parallel   world %lld = tp %lld x cp %lld x pp %lld x dp %lld   mbs %lld  mbc %lld  gbs %lld  seq %lld\n",
                (long long)s.world_size, (long long)s.tp, (long long)s.cp, (long long)s.pp, (long long)s.dp,
                (long long)s.micro_batch_size, (long long)s.micro_batch_num, (long long)s.global_batch_size,
                (long long)s.seq_len);
  out += line;
  out += "step time  " + fmt("%.3f ms", s.step_time_ms) + "   (pipeline " + fmt("%.3f ms", s.pp_time_ms) +
         ", straggler x" + fmt("%.4f", s.straggler_ratio) + ")\n";
  out += "throughput " + fmt("%.2f TFLOPS/GPU", s.tflops_per_gpu) + "   MFU " + fmt("%.4f", s.mfu) + "   " +
         fmt("%.1f tokens/s", s.tokens_per_s) + "   " + fmt("%.1f tokens/s/GPU", s.tokens_per_s_per_gpu) + "\n";
  out += fit_lines(s);
  if (s.calibration) {
    std::snprintf(line, sizeof line, "machine    compute derate %.4g, kernel floor %.4g us (calibration: ",
                  s.calibration->compute_derate, s.kernel_floor_us);
    out += line + s.calibration_source + ")\n";
  }
  if (s.host) {
    std::snprintf(line, sizeof line, "host       launch %.4g us, op %.4g us, cpu speed %.4g (the host lane: the system "
                  "config's \"host\")\n", s.host->launch_us, s.host->op_us, s.host->cpu_speed);
    out += line;
  }
  out += miss_lines(s);
  out += "\nstage kind   layers  fwd/mb ms  bwd/mb ms  bubble ms  dp comm ms  optim ms  end ms      "
         "peak alloc GiB  reserved GiB  weights  grads  optim  activ.  transient  fits  headroom GiB\n";
  for (const auto& st : s.stages) {
    std::snprintf(line, sizeof line,
                  "%5d %-6s %6d %10.3f %10.3f %10.3f %11.3f %9.3f %11.3f %14.4f %13.4f %8.3f %6.3f %6.3f %7.3f %9.3f"
                  "  %-4s %13.4f\n",
                  st.stage, st.kind.c_str(), st.layers, st.fwd_ms, st.bwd_ms, st.bubble_ms, st.dp_comm_ms,
                  st.optimizer_ms, st.duration_ms, common::gib(static_cast<double>(st.peak_alloc_bytes)),
                  common::gib(st.peak_reserved_bytes), common::gib(static_cast<double>(st.weight_bytes)),
                  common::gib(static_cast<double>(st.grad_bytes)),
                  common::gib(static_cast<double>(st.optimizer_state_bytes)),
                  common::gib(static_cast<double>(st.activation_bytes_at_peak)),
                  common::gib(static_cast<double>(st.transient_bytes_at_peak)), st.fits ? "yes" : "NO",
                  common::gib(st.headroom_bytes));
    out += line;
  }
  return out;
}

}  // namespace simumax::report
