// The CUDA side of simumax-measure: GEMMs (cuBLASLt, the heuristic's best algorithm), fused attention (cuDNN 9's
// SDPA graphs), HBM copies and NCCL collectives timed with CUDA events, and the GPU's clock and power (NVML, loaded
// at run time). Every failure is a common::UsageError with words (exit 2), never a bare CUDA code.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/measure/gpu_problem.hpp"
#include "engine/measure/launch_env.hpp"

namespace simumax::measure::gpu {

struct Timing {
  double median_us = 0, min_us = 0, max_us = 0;
  int repetitions = 0;
  std::string skipped;  // why it was not timed (cuBLASLt has no algorithm for it here); empty when timed
};

struct TimingOptions {
  int warmup = 5;
  int batch = 10;         // repetitions per batch; batches run until two medians agree within `tolerance`
  int max_repetitions = 200;
  double tolerance = 0.01;
};

// Runs `launch` (work issued on `stream`, a cudaStream_t) `warmup` times, then timed batches with CUDA events until
// two batch medians agree within `tolerance` (or max_repetitions).
Timing time_launches(void* stream, const TimingOptions& o, const std::function<void()>& launch);

// The GPU this process uses (the launch's local rank), selected. Throws UsageError when none is visible or the
// launch puts more ranks on the node than it has GPUs.
std::string select_gpu(const Launch& launch);

// "sm <MHz> MHz, mem <MHz> MHz, <W> W, <C> C" from NVML, or why it is not available.
std::string clocks_and_power();

// The selected GPU's compute capability, major * 10 + minor (gemm_problem's fp8 layout depends on it).
int compute_capability();

// Throws UsageError naming `what` when `bytes` exceed the GPU's free memory.
void ensure_fits(size_t bytes, const std::string& what);

// Column-major D[m x n] = op(A) op(B) (measure::gemm_problem), `groups` times, with cuBLASLt's heuristic's best
// algorithm. A GEMM cuBLASLt has no algorithm for on this GPU (an fp8 dtype combination it lacks) comes back
// untimed, with `skipped` set. Throws UsageError when the operands do not fit in the free GPU memory or a CUDA call
// fails.
Timing time_gemm(const GemmProblem& g, const TimingOptions& o);

// Device memory one GEMM needs (operands, output, cuBLASLt workspace), bytes.
size_t gemm_bytes(const GemmProblem& g);

// Throws UsageError naming the first GEMM or attention call that does not fit in the free GPU memory: checked
// before any timing, so a shape list too large for the GPU fails in a second, not after minutes of measuring.
void check_fits(const std::vector<GemmProblem>& gemms, const std::vector<AttentionProblem>& attention);

// Why fused attention cannot be timed by this process (built without cuDNN 9, libcudnn.so.9 not loadable or older
// than 9.0), or "" when it can.
std::string attention_unavailable();

// Builds (without a GPU) every tensor and operation of the attention graph time_attention runs, each finalized by
// cuDNN, which checks their shapes, strides and types; returns cuDNN's one-line refusal, or "" when all finalize.
// The graph, engine and plan need the GPU and are not built.
std::string attention_graph_refusal(const AttentionProblem& a);

// One fused attention call (measure::attention_problem: bf16, causal, GQA, sbhd layout) through cuDNN's SDPA
// graph: the forward (O and the softmax statistics) or the backward (dQ, dK, dV), on the first engine of cuDNN's
// heuristic mode A that builds. A shape cuDNN refuses comes back untimed, `skipped` giving cuDNN's one-line reason.
// Throws UsageError when attention_unavailable() is not empty, the buffers do not fit, or a CUDA call fails.
Timing time_attention(const AttentionProblem& a, const TimingOptions& o);

// A device-to-device copy of `bytes`; GiB/s = 2 * bytes / time (read and write).
Timing time_copy(int64_t bytes, const TimingOptions& o);

struct CollectiveRow {
  std::string collective;  // SimuMax's name
  int64_t bytes = 0;       // nccl-tests' size convention (the whole buffer)
  int64_t ranks = 0;
  Timing timing;
};

// NCCL collectives (all_reduce, all_gather, reduce_scatter, all2all, p2p) over message sizes from 1 MiB to
// `max_bytes`, among all ranks of the launch (one process per GPU; the NCCL id is passed through a file in
// `rendezvous_dir`, a folder every rank sees) or, for a single process, among all its visible GPUs. NCCL is loaded
// at run time. Throws UsageError when NCCL is missing or a rank does not arrive within 120 s.
std::vector<CollectiveRow> time_collectives(const Launch& launch, const std::string& rendezvous_dir,
                                            int64_t max_bytes, const TimingOptions& o);

}  // namespace simumax::measure::gpu
