// What TransformerEngine's low-precision recipes store and move per tensor element (docs/low-precision.md).
#pragma once

#include <cstdint>

#include "engine/config/strategy_config.hpp"

namespace simumax::model {

// Bytes of one quantized copy of an element: its data (1 for the fp8 recipes, 1/2 for NVFP4's e2m1) plus its
// share of the block scales (MXFP8: one e8m0 byte per 32 elements; NVFP4: one e4m3 byte per 16; the per-tensor
// scales of delayed and tensorwise scaling are negligible).
double quantized_bytes_per_element(config::Fp8Recipe r);

// One quantizer pass over `elem_bytes`-wide elements: read them (twice for tensorwise scaling: its amax is
// computed from the tensor before the cast) and write the row-wise and the column-wise quantized copy (TE's
// fused cast-transpose: the GEMM of the forward reads one, the weight-gradient GEMM the other).
double quantize_bytes_per_element(const config::StrategyConfig& st, int64_t elem_bytes);

// The quantized copies TE keeps of each fp8-GEMM weight for the whole step (row-wise and column-wise, reused by
// every micro-batch), beside the bf16 weight itself.
double weight_copy_bytes_per_element(const config::StrategyConfig& st);

}  // namespace simumax::model
