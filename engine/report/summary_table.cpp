// The text table printed by `simumax-sim run`.
#include <cstdio>
#include <string>

#include "engine/common/units.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

std::string summary_table(const Summary& s) {
  std::string out;
  char line[256];
  out += "scenario   " + s.name + "  (fidelity " + s.fidelity + ", executor " + s.executor + ", " + s.granularity + " tasks, ranks: " + s.scope +
         ", " + std::to_string(s.num_tasks) + " tasks)\n";
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
  out += "memory     peak " + fmt("%.4f GiB", common::gib(static_cast<double>(s.peak_alloc_bytes_max))) +
         " allocated, " + fmt("%.4f GiB", common::gib(s.peak_reserved_bytes_max)) + " reserved, of " +
         fmt("%.0f GiB", common::gib(s.gpu_memory_bytes)) + "\n";
  if (s.calibration) {
    std::snprintf(line, sizeof line, "machine    compute derate %.4g, kernel floor %.4g us (calibration: ",
                  s.calibration->compute_derate, s.kernel_floor_us);
    out += line + s.calibration_source + ")\n";
  }
  if (s.efficiency_table_misses > 0) {
    out += "note       " + std::to_string(s.efficiency_table_misses) +
           " GEMM/attention shapes missing from the efficiency tables (" +
           (s.misses_interpolated ? "priced from the nearest measured shapes" : "fallback efficient_factor used") +
           "; listed in summary.json miss_efficiency)\n";
  }
  out += "\nstage kind   layers  fwd/mb ms  bwd/mb ms  bubble ms  dp comm ms  optim ms  end ms      "
         "peak alloc GiB  reserved GiB  weights  grads  optim  activ.  transient\n";
  for (const auto& st : s.stages) {
    std::snprintf(line, sizeof line,
                  "%5d %-6s %6d %10.3f %10.3f %10.3f %11.3f %9.3f %11.3f %14.4f %13.4f %8.3f %6.3f %6.3f %7.3f %9.3f\n",
                  st.stage, st.kind.c_str(), st.layers, st.fwd_ms, st.bwd_ms, st.bubble_ms, st.dp_comm_ms,
                  st.optimizer_ms, st.duration_ms, common::gib(static_cast<double>(st.peak_alloc_bytes)),
                  common::gib(st.peak_reserved_bytes), common::gib(static_cast<double>(st.weight_bytes)),
                  common::gib(static_cast<double>(st.grad_bytes)),
                  common::gib(static_cast<double>(st.optimizer_state_bytes)),
                  common::gib(static_cast<double>(st.activation_bytes_at_peak)),
                  common::gib(static_cast<double>(st.transient_bytes_at_peak)));
    out += line;
  }
  return out;
}

}  // namespace simumax::report
