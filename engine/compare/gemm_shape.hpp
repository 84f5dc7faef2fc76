// A GEMM's shape from the CPU op that launched it: PyTorch's record_shapes=True puts each op's argument shapes in
// args["Input Dims"]; for aten::mm / addmm / bmm / baddbmm / linear they give b, m, k, n, so a real kernel's time
// turns into achieved TFLOPS and a SimuMax matmul key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simumax::compare {

struct GemmShape {
  int64_t b = 1, m = 0, k = 0, n = 0;
  double flops() const { return 2.0 * static_cast<double>(b) * static_cast<double>(m) * static_cast<double>(k) *
                                static_cast<double>(n); }
  bool operator==(const GemmShape&) const = default;
};

// "[[8,1024],[],[1024,512]]" -> {{8,1024},{},{1024,512}}; nullopt for text that is not a list of integer lists.
std::optional<std::vector<std::vector<int64_t>>> parse_input_dims(std::string_view text);

// The shape of `op` ("aten::mm", ...) called with `dims`; nullopt for another op or shapes that do not fit
// (mismatched inner dimensions, a non-positive size).
std::optional<GemmShape> gemm_shape(std::string_view op, std::string_view dims);

// Whether `name` is an op gemm_shape knows.
bool is_gemm_op(std::string_view name);

// A fused attention call's shape from its op's Input Dims: batch, sequence (queries and keys alike), query and
// key/value heads, head dims; `backward` for the gradient ops.
struct AttentionShape {
  int64_t b = 0, s = 0, heads = 0, kv_heads = 0, dqk = 0, dv = 0;
  bool backward = false;
  bool operator==(const AttentionShape&) const = default;
};

// The shape of a flash / memory-efficient / cuDNN attention op: aten::_scaled_dot_product_{flash,efficient,
// cudnn}_attention[_backward] and aten::scaled_dot_product_attention (q, k, v as [b, heads, s, d]),
// aten::_flash_attention_{forward,backward}, aten::_efficient_attention_{forward,backward} and
// flash_attn::_flash_attn_{forward,backward} (as [b, s, heads, d]); a backward op's first argument is the
// output gradient. nullopt for another op, a cross-attention (query and key lengths differ) or dims that do not
// fit.
std::optional<AttentionShape> attention_shape(std::string_view op, std::string_view dims);

// The shape in one of our shape keys ("b=1, m=4096, k=4096, n=12288, layout=TN, ..."); nullopt when it is not
// a matmul key.
std::optional<GemmShape> gemm_shape_of_key(std::string_view key);

}  // namespace simumax::compare
