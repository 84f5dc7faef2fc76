// GEMM shapes from PyTorch's Input Dims and from our shape keys.
#include "engine/compare/gemm_shape.hpp"

#include <gtest/gtest.h>

namespace simumax::compare {
namespace {

TEST(GemmShape, InputDimsParse) {
  EXPECT_EQ(parse_input_dims("[[8,1024],[],[1024,512]]"),
            (std::vector<std::vector<int64_t>>{{8, 1024}, {}, {1024, 512}}));
  EXPECT_EQ(parse_input_dims("[]"), (std::vector<std::vector<int64_t>>{}));
  for (const char* bad : {"", "[", "[[1,2]", "[[1,?]]", "[[1,2]]x", "[1,2]", "[[1,,2]]"}) {
    EXPECT_FALSE(parse_input_dims(bad).has_value()) << bad;
  }
}

TEST(GemmShape, FromEachGemmOp) {
  struct Case {
    const char* op;
    const char* dims;
    std::optional<GemmShape> shape;
  } cases[] = {
      {"aten::mm", "[[1024,1705],[1705,512]]", GemmShape{1, 1024, 1705, 512}},
      {"aten::addmm", "[[512],[1024,1705],[1705,512],[],[]]", GemmShape{1, 1024, 1705, 512}},
      {"aten::bmm", "[[16,128,64],[16,64,128]]", GemmShape{16, 128, 64, 128}},
      {"aten::baddbmm", "[[16,128,128],[16,128,64],[16,64,128],[],[]]", GemmShape{16, 128, 64, 128}},
      {"aten::linear", "[[4,512,1024],[4096,1024],[4096]]", GemmShape{1, 2048, 1024, 4096}},
      {"aten::mm", "[[1024,1705],[1704,512]]", std::nullopt},  // inner dimensions differ
      {"aten::mm", "[[0,5],[5,3]]", std::nullopt},
      {"aten::add", "[[4,4],[4,4]]", std::nullopt},
      {"aten::mm", "[[4,4]]", std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(c.op) + c.dims);
    EXPECT_EQ(gemm_shape(c.op, c.dims), c.shape);
  }
  EXPECT_DOUBLE_EQ(GemmShape({2, 3, 4, 5}).flops(), 2.0 * 2 * 3 * 4 * 5);
}

TEST(GemmShape, FromOurShapeKeys) {
  EXPECT_EQ(gemm_shape_of_key("b=1, m=4096, k=4096, n=12288, layout=TN, accumulate=False, out_dtype=bf16"),
            (GemmShape{1, 4096, 4096, 12288}));
  EXPECT_FALSE(gemm_shape_of_key("batch=1, seq_len=4096, head_num=32").has_value());
  EXPECT_FALSE(gemm_shape_of_key("b=1, m=4096, k=4096").has_value());
}

TEST(AttentionShape, FromTheFusedAttentionOps) {
  // SDPA's ops take [b, heads, s, d]; the flash kernels' own ops [b, s, heads, d]; a backward starts with dout.
  EXPECT_EQ(attention_shape("aten::_scaled_dot_product_flash_attention",
                            "[[2,32,4096,128],[2,8,4096,128],[2,8,4096,128],[],[]]"),
            (AttentionShape{2, 4096, 32, 8, 128, 128, false}));
  EXPECT_EQ(attention_shape("aten::_flash_attention_forward", "[[2,4096,32,128],[2,4096,8,128],[2,4096,8,64],[]]"),
            (AttentionShape{2, 4096, 32, 8, 128, 64, false}));
  EXPECT_EQ(attention_shape("flash_attn::_flash_attn_backward",
                            "[[1,2048,16,64],[1,2048,16,64],[1,2048,16,64],[1,2048,16,64]]"),
            (AttentionShape{1, 2048, 16, 16, 64, 64, true}));
  // Cross-attention (query and key lengths differ), a 3-d tensor, another op: no shape.
  EXPECT_FALSE(attention_shape("aten::_flash_attention_forward", "[[2,1024,32,128],[2,4096,8,128],[2,4096,8,128]]"));
  EXPECT_FALSE(attention_shape("aten::_flash_attention_forward", "[[2,4096,128],[2,4096,128],[2,4096,128]]"));
  EXPECT_FALSE(attention_shape("aten::mm", "[[2,4096,32,128],[2,4096,8,128],[2,4096,8,128]]"));
  EXPECT_FALSE(attention_shape("aten::_flash_attention_backward", "[[2,4096,32,128],[2,4096,32,128]]"));
}

}  // namespace
}  // namespace simumax::compare
