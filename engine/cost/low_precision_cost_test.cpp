// The low-precision recipes' GEMM prices and Megatron-FSDP's per-layer collectives (docs/low-precision.md), each
// against numbers worked out by hand from the formulas.
#include <gtest/gtest.h>

#include "engine/cost/kernel_cost.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/model/low_precision.hpp"

namespace simumax::cost {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;
const char* kKey = "b=1, m=4096, k=4096, n=4096, layout=TN, accumulate=False, out_dtype=bf16";

config::SystemConfig two_peaks() {
  config::SystemConfig sys;
  sys.op["default"] = {};
  sys.op["default"].tflops = 1000;
  sys.op["default"].efficient_factor = 0.4;
  auto& bf16 = sys.op["matmul"];
  bf16.tflops = 1000;
  bf16.efficient_factor = 0.3;
  bf16.accurate_efficient_factor[kKey] = 0.5;
  sys.op["fp8_matmul"].tflops = 2000;  // unmeasured: efficient_factor 0, no shapes
  sys.op["nvfp4_matmul"].tflops = 4000;
  sys.bandwidth["default"] = {};
  sys.bandwidth["default"].gbps = 1000;
  sys.bandwidth["default"].efficient_factor = 1;
  return sys;
}

model::PassWork gemm(const char* op, const char* key) {
  model::PassWork w;
  w.compute_op = op;
  w.flops = 2e12;
  w.shape_key = key;
  return w;
}

TEST(LowPrecisionCost, UnmeasuredFp8GemmTakesTheBf16EfficiencyOfItsShapeAtItsOwnPeak) {
  const auto sys = two_peaks();
  // 2e12 FLOPs at 2000 TFLOP/s x 0.5 (the bf16 entry's measured shape): 2 ms; at 4000 (nvfp4): 1 ms.
  const auto fp8 = kernel_time(sys, gemm("fp8_matmul", kKey), config::Fidelity::kMegatron);
  EXPECT_DOUBLE_EQ(fp8.compute_seconds, 2e-3);
  EXPECT_TRUE(fp8.table_hit);
  EXPECT_DOUBLE_EQ(kernel_time(sys, gemm("nvfp4_matmul", kKey), config::Fidelity::kMegatron).compute_seconds, 1e-3);
  // A shape the bf16 table lacks takes its flat factor (0.3, no neighbours of its kind): 2e12 / (2000e12 x 0.3).
  const auto other = kernel_time(sys, gemm("fp8_matmul", "no shape"), config::Fidelity::kMegatron);
  EXPECT_DOUBLE_EQ(other.compute_seconds, 2e12 / (2000e12 * 0.3));
  // A measured fp8 entry is used as it is.
  auto measured = sys;
  measured.op["fp8_matmul"].efficient_factor = 0.25;
  EXPECT_DOUBLE_EQ(kernel_time(measured, gemm("fp8_matmul", kKey), config::Fidelity::kMegatron).compute_seconds,
                   2e12 / (2000e12 * 0.25));
}

TEST(LowPrecisionCost, GroupedGemmKeyOfFp8InputsFindsTheBf16Shape) {
  auto sys = two_peaks();
  const std::string key = "ng=8, M=256, N=4096, K=2048, dtype=bf16, out_dtype=bf16, stage=fwd";
  sys.op["group_matmul"].tflops = 1000;
  sys.op["group_matmul"].accurate_efficient_factor[key] = 0.4;
  sys.op["mxfp8_group_matmul"].tflops = 2000;
  const auto t = kernel_time(sys, gemm("mxfp8_group_matmul", "ng=8, M=256, N=4096, K=2048, dtype=fp8, "
                                                             "out_dtype=bf16, stage=fwd"),
                             config::Fidelity::kMegatron);
  EXPECT_DOUBLE_EQ(t.compute_seconds, 2e12 / (2000e12 * 0.4));
}

TEST(LowPrecisionCost, RecipesStoreAndMoveTheirBytesPerElement) {
  config::StrategyConfig st;
  st.fp8 = true;
  struct Row {
    config::Fp8Recipe recipe;
    double quantize, copies;
  };
  // bf16 in (2 B; tensorwise reads it twice), row- and column-wise out: fp8 1 B, MXFP8 1 + 1/32, NVFP4 0.5 + 1/16.
  for (const Row& r : {Row{config::Fp8Recipe::kDelayed, 2 + 2.0, 2.0}, Row{config::Fp8Recipe::kTensorwise, 4 + 2.0, 2.0},
                       Row{config::Fp8Recipe::kMxfp8, 2 + 2.0625, 2.0625}, Row{config::Fp8Recipe::kNvfp4, 2 + 1.125, 1.125}}) {
    st.fp8_recipe = r.recipe;
    EXPECT_DOUBLE_EQ(model::quantize_bytes_per_element(st, 2), r.quantize) << config::to_string(r.recipe);
    EXPECT_DOUBLE_EQ(model::weight_copy_bytes_per_element(st), r.copies) << config::to_string(r.recipe);
  }
}

TEST(LowPrecisionCost, GemmEntryFollowsRecipeAndFidelity) {
  config::StrategyConfig st;
  EXPECT_EQ(st.gemm_op(false), "matmul");
  st.fp8 = true;
  EXPECT_EQ(st.gemm_op(true), "fp8_group_matmul");
  st.fp8_recipe = config::Fp8Recipe::kMxfp8;
  EXPECT_EQ(st.gemm_op(false), "mxfp8_matmul");
  st.fp8_recipe = config::Fp8Recipe::kNvfp4;
  EXPECT_EQ(st.gemm_op(true), "nvfp4_group_matmul");
  st.fidelity = config::Fidelity::kSimuMax;  // SimuMax has one fp8 model
  EXPECT_EQ(st.gemm_op(false), "fp8_matmul");
}

// Llama3-8B, tp 1, dp 8 on one GB200 NVLink domain, 128 tokens per micro-batch: each layer's compute is far
// shorter than its gathers, so what is exposed is the collectives minus the compute (SM share 0).
TEST(FsdpCost, ExposedPerLayerCollectivesAreTheirExcessOverTheLayersCompute) {
  config::Scenario s = config::load_configs(kShared + "/simumax-configs/models/llama3-8b.json",
                                            kShared + "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json",
                                            std::string(SIMUMAX_SOURCE_DIR) + "/platforms/gb200.json");
  s.strategy.pp_size = 1;
  s.strategy.world_size = 8;
  s.strategy.seq_len = 128;
  s.strategy.megatron_overlap_grad_reduce = s.strategy.megatron_overlap_param_gather = false;
  const auto ddp = cost_step(s, model::build_step_model(s));
  s.strategy.megatron_fsdp = true;
  s.strategy.zero_state = 3;
  const auto m = model::build_step_model(s);
  const auto c = cost_step(s, m);
  const auto& cc = c.chunks[0];
  ASSERT_EQ(cc.fsdp_seconds.size(), cc.blocks.size());
  EXPECT_EQ(cc.dense_dp.total_seconds(), 0);  // no DP work at the step end
  EXPECT_GT(ddp.chunks[0].dense_dp.total_seconds(), 0);
  for (size_t k = 0; k < cc.blocks.size(); ++k) {
    int64_t numel = 0;
    for (const auto& op : *m.chunks[0].blocks[k].ops) numel += op.dense_numel;
    if (numel == 0) continue;
    const auto& st = s.strategy;
    const double ag = comm_time(s.system, st, model::Coll::kAllGather, 2.0 * numel, 8, c.nets.dp,
                                CommStage::kDenseDp).seconds;
    const double rs = comm_time(s.system, st, model::Coll::kReduceScatter, 4.0 * numel, 8, c.nets.dp,
                                CommStage::kDenseDp).seconds;
    const auto& bc = *cc.blocks[k];
    EXPECT_NEAR(cc.fsdp_seconds[k].first, std::max(0.0, ag - bc.fwd_seconds), 1e-12) << k;
    EXPECT_NEAR(cc.fsdp_seconds[k].second, std::max(0.0, ag + rs - bc.bwd_seconds), 1e-12) << k;
    EXPECT_GT(cc.fsdp_seconds[k].first, 0) << k;
  }
}

}  // namespace
}  // namespace simumax::cost
