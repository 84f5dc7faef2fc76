// The cuDNN attention graphs simumax-measure times, checked without a GPU: cuDNN finalizes every tensor and
// operation (it checks matmul, pointwise and reduction shapes, strides and types there), so a graph that is
// malformed for some shape fails here, not on the GPU node. Only the engine and plan need the GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "engine/config/scenario.hpp"
#include "engine/measure/kernel_problem.hpp"
#include "measure/gpu_timing.hpp"

namespace simumax::measure::gpu {
namespace {

namespace fs = std::filesystem;

// The attention shapes of every scenario the project ships and of the standard sweep.
std::vector<Shape> attention_shapes() {
  std::vector<Shape> all = standard_sweep(false);
  std::vector<fs::path> paths = {fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "default.json"};
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "validation")) {
    if (e.is_regular_file() && e.path().extension() == ".json") paths.push_back(e.path());
  }
  for (const auto& p : paths) all = merge_shapes(all, scenario_shapes(config::load_scenario(p.string())));
  all.erase(std::remove_if(all.begin(), all.end(),
                           [](const Shape& s) { return s.kind != ShapeKind::kSdpFwd && s.kind != ShapeKind::kSdpBwd; }),
            all.end());
  return all;
}

TEST(AttentionGraph, EveryShippedAttentionShapeBuildsForwardAndBackward) {
  if (const std::string why = attention_unavailable(); !why.empty()) GTEST_SKIP() << why;
  const auto shapes = attention_shapes();
  ASSERT_GT(shapes.size(), 56u);  // the sweep's 56 plus the scenarios' own (MHA, GQA, MLA's 192/128 heads)
  bool mla = false, gqa = false;
  for (const auto& s : shapes) {
    const AttentionProblem a = attention_problem(s);
    mla = mla || a.d_qk != a.d_v, gqa = gqa || a.kv_heads != a.heads;
    EXPECT_EQ(attention_graph_refusal(a), "") << s.compute_op << " " << s.key;
  }
  EXPECT_TRUE(mla);
  EXPECT_TRUE(gqa);
}

// A shape cuDNN cannot express comes back as one line of cuDNN's own words, naming the operation.
TEST(AttentionGraph, ARefusedShapeIsOneLineOfCudnnsReason) {
  if (const std::string why = attention_unavailable(); !why.empty()) GTEST_SKIP() << why;
  for (bool backward : {false, true}) {
    const AttentionProblem a{"kv heads 6 of 32", backward, 1, 32, 6, 1024, 128, 128, true};
    const std::string why = attention_graph_refusal(a);
    EXPECT_EQ(why.rfind("matmul operation: CUDNN_STATUS_BAD_PARAM", 0), 0u) << why;
    EXPECT_EQ(why.find('\n'), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace simumax::measure::gpu
