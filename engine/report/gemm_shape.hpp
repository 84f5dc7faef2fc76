// A GEMM's shape from the CPU op that launched it: PyTorch's record_shapes=True puts each op's argument shapes in
// args["Input Dims"]; for aten::mm / addmm / bmm / baddbmm / linear they give b, m, k, n, so a real kernel's time
// turns into achieved TFLOPS and a SimuMax matmul key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace simumax::report {

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

// The shape in one of our shape keys ("b=1, m=4096, k=4096, n=12288, layout=TN, ..."); nullopt when it is not
// a matmul key.
std::optional<GemmShape> gemm_shape_of_key(std::string_view key);

}  // namespace simumax::report
