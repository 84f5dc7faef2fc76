// What simumax-measure's CUDA side runs: a GEMM as cuBLASLt takes it and a fused attention call, built from shape
// keys by kernel_problem.hpp. C++17 and dependency-free, so the .cu files (compiled as C++17) include it too.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace simumax::measure {

// A GEMM as TransformerEngine hands it to cuBLASLt: column-major D[m x n] = op(A)[m x k] * op(B)[k x n], `groups`
// times (a grouped GEMM's experts, one after another).
struct GemmProblem {
  std::string label;  // the shape key, for messages
  int64_t groups = 1;
  int64_t m = 0, n = 0, k = 0;
  bool transa = false, transb = false;
  bool accumulate = false;  // beta = 1 (the weight gradient into main_grad)
  bool out_fp32 = false;
  bool fp8 = false;  // e4m3 inputs
};

// One fused attention call (cuDNN SDPA), bf16, layout [batch, heads, seq, head dim].
struct AttentionProblem {
  std::string label;  // the shape key
  bool backward = false;
  int64_t batch = 0, heads = 0, kv_heads = 0, seq = 0, d_qk = 0, d_v = 0;
  bool causal = true;
};

// Device memory one attention call needs besides cuDNN's workspace, bytes: bf16 Q, K, V, O and fp32 statistics;
// the backward adds dO, dQ, dK, dV, the fp32 row sums of dO * O and the fp32 dQ accumulator.
size_t attention_bytes(const AttentionProblem& a);

}  // namespace simumax::measure
