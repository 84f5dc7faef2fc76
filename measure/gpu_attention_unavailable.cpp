// Fused attention in a CUDA build without cuDNN 9's headers: GEMMs, HBM and NCCL are timed as usual, and a run
// whose shape list has attention says why it cannot time it (measure_main.cpp, exit 2 unless --skip-attention).
#include "engine/common/error.hpp"
#include "measure/gpu_timing.hpp"

namespace simumax::measure::gpu {

std::string attention_unavailable() {
  return "this simumax-measure was built without cuDNN 9 (cudnn.h version 9 was not found at configure time), so "
         "it cannot time fused attention; rebuild where cuDNN 9 is installed (docs/measure.md)";
}

Timing time_attention(const AttentionProblem&, const TimingOptions&) {
  throw common::UsageError("attention: " + attention_unavailable());
}

}  // namespace simumax::measure::gpu
