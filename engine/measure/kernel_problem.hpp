// What simumax-measure runs on the GPU for a shape key, and how a measured time becomes the efficiency the engine
// looks up. Plain C++ (the CUDA side in measure/ only executes these problems), so the mapping is tested everywhere.
#pragma once

#include <string>

#include "engine/config/system_config.hpp"
#include "engine/measure/gpu_problem.hpp"
#include "engine/measure/shape_list.hpp"

namespace simumax::measure {

// The cuBLASLt call TransformerEngine makes for a GEMM or grouped-GEMM key, on a GPU of compute capability
// `sm` (major * 10 + minor):
// - a linear key "b, m, k, n, layout" (engine/model OpBuilder::linear_keys: forward TN, dgrad NN, wgrad NT) is
//   TE's general_gemm(A, B, layout): transa = layout[0] == 'T', transb = layout[1] == 'T', and cuBLAS's
//   m = key n, n = key b * key m (TE folds the batch into the token rows), k = key k
//   (transformer_engine/pytorch/cpp_extensions/gemm.py and common/gemm/cublaslt_gemm.cu's cublas_gemm);
// - a grouped key "ng, M (tokens per expert), N (out features), K (in features), stage" is ng GEMMs of the same
//   three passes: fwd TN (m = N, n = M, k = K), bwd_grad_act NN (m = K, n = M, k = N), bwd_grad_w NT with
//   accumulate (m = K, n = N, k = M);
// - fp8 with per-tensor scaling runs TN below sm 100 and at sm 12x, and in the key's own layout on sm 100-119 and
//   >= 130: the cuBLAS documentation's cublasLtMatmul() FP8 requirements say "A must be transposed and B
//   non-transposed (the TN format)" for Ada and Hopper, and TE's CanonicalizeGemmInput (cublaslt_gemm.cu) then
//   hands cuBLASLt the transposed "column-wise" copy of an operand, with nvte_is_non_tn_fp8_gemm_supported()
//   (transformer_engine.cpp) true on exactly those newer GPUs.
// Throws common::UsageError for a shape that is not a GEMM or whose key lacks a field.
GemmProblem gemm_problem(const Shape& s, int sm);

// The attention an sdp_fwd / sdp_bwd key stands for (engine/model OpBuilder::core_attention): batch, seq_len (queries
// and keys alike: with context parallelism the key holds the whole sequence on the local heads, TE's all-to-all
// layout), head_num, kv_head_num (GQA), qk_head_dim, v_head_dim. Causal: the models SimuMax describes are decoders
// trained with Megatron's causal mask, and the FLOPs charged are the full s^2 count (no halving), so a causal
// kernel's efficiency can exceed 1 (SimuMax's A100 sdp_fwd entries are ~1.13). Throws common::UsageError when the
// shape is not attention, a field is missing, or kv_head_num does not divide head_num.
AttentionProblem attention_problem(const Shape& s);

// The peak the engine divides by for `compute_op`: its table's tflops, or "default"'s when the system has no such
// table (cost::kernel_time; the writer then adds the table with "default"'s tflops).
// REQUIRES: sys.op contains "default".
double table_tflops(const config::SystemConfig& sys, const std::string& compute_op);

// The efficiency that makes the engine charge `median_us` for `flops`: flops / (tflops * 1e12 * median_us * 1e-6).
// Throws common::InternalError unless flops, tflops and median_us are positive and finite.
double efficiency_for(double flops, double tflops, double median_us);

}  // namespace simumax::measure
