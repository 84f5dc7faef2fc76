#include "engine/model/low_precision.hpp"

namespace simumax::model {

double quantized_bytes_per_element(config::Fp8Recipe r) {
  switch (r) {
    case config::Fp8Recipe::kMxfp8: return 1.0 + 1.0 / 32;  // TE MXFP8Quantizer: 1x32 blocks, e8m0 scales
    case config::Fp8Recipe::kNvfp4: return 0.5 + 1.0 / 16;  // TE NVFP4Quantizer: 1x16 blocks, e4m3 scales
    case config::Fp8Recipe::kDelayed:
    case config::Fp8Recipe::kTensorwise: break;
  }
  return 1.0;  // Float8Quantizer / Float8CurrentScalingQuantizer: one fp32 scale per tensor
}

double quantize_bytes_per_element(const config::StrategyConfig& st, int64_t elem_bytes) {
  const double reads = st.fp8_recipe == config::Fp8Recipe::kTensorwise ? 2.0 : 1.0;
  return reads * static_cast<double>(elem_bytes) + 2.0 * quantized_bytes_per_element(st.fp8_recipe);
}

double weight_copy_bytes_per_element(const config::StrategyConfig& st) {
  return 2.0 * quantized_bytes_per_element(st.fp8_recipe);
}

}  // namespace simumax::model
