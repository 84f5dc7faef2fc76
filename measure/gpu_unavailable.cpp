// The GPU side of simumax-measure in a build without the CUDA toolkit: `shapes` and `import` work as anywhere,
// and `run` says what the build lacks (exit 2) instead of the command being missing altogether.
#include "engine/common/error.hpp"
#include "measure/gpu_timing.hpp"

namespace simumax::measure::gpu {

namespace {

[[noreturn]] void unreachable() {
  throw common::InternalError("simumax-measure: GPU timing called in a build without CUDA (select_gpu refuses first)");
}

}  // namespace

std::string select_gpu(const Launch&) {
  throw common::UsageError(
      "run: this simumax-measure was built without the CUDA toolkit (nvcc, cuBLASLt and nccl.h were not found at "
      "configure time), so it cannot time a GPU; rebuild on a node where they are found (docs/measure.md). "
      "`shapes` and `import` work in this build.");
}

Timing time_launches(void*, const TimingOptions&, const std::function<void()>&) { unreachable(); }
std::string clocks_and_power() { unreachable(); }
int compute_capability() { unreachable(); }
void ensure_fits(size_t, const std::string&) { unreachable(); }
Timing time_gemm(const GemmProblem&, const TimingOptions&) { unreachable(); }
size_t gemm_bytes(const GemmProblem&) { unreachable(); }
void check_fits(const std::vector<GemmProblem>&, const std::vector<AttentionProblem>&) { unreachable(); }
std::string attention_unavailable() { return select_gpu(Launch{}); }  // throws: the build has no CUDA at all
Timing time_attention(const AttentionProblem&, const TimingOptions&) { unreachable(); }
Timing time_copy(int64_t, const TimingOptions&) { unreachable(); }
std::vector<CollectiveRow> time_collectives(const Launch&, const std::string&, int64_t, const TimingOptions&) {
  unreachable();
}

}  // namespace simumax::measure::gpu
