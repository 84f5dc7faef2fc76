#include "engine/cost/step_cost.hpp"

#include <gtest/gtest.h>

#include "engine/cost/kernel_cost.hpp"

namespace simumax::cost {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;

config::Scenario llama3_8b_a100_tp1_pp2() {
  config::Scenario s = config::load_configs(kShared + "/simumax-configs/models/llama3-8b.json",
                                            kShared + "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json",
                                            kShared + "/simumax-configs/system/a100_pcie.json");
  s.strategy.fidelity = config::Fidelity::kSimuMax;  // SimuMax's numbers
  return s;
}

// SimuMax's README example (time spec §12): llama3-8b tp1 pp2 dp4 on A100-PCIe.
TEST(StepCost, LayerTimesMatchSimuMaxExample) {
  const auto s = llama3_8b_a100_tp1_pp2();
  const auto m = model::build_step_model(s);
  const auto c = cost_step(s, m);
  const auto& layer = *c.chunks[0].blocks[1];
  EXPECT_NEAR(layer.fwd_seconds * 1e3, 9.01394, 1e-5);
  EXPECT_NEAR(layer.bwd_seconds * 1e3, 18.71950, 1e-5);
  EXPECT_NEAR(c.chunks[0].fwd_seconds * 1e3, 144.95719, 1e-5);
  EXPECT_NEAR(c.chunks[1].bwd_seconds * 1e3, 342.81017, 1e-5);
  EXPECT_NEAR(c.p2p.seconds * 1e3, 2.09333, 1e-5);
}

TEST(StepCost, DataParallelBucketsMatchSimuMaxExample) {
  const auto s = llama3_8b_a100_tp1_pp2();
  const auto m = model::build_step_model(s);
  const auto c = cost_step(s, m);
  const auto& dp = c.chunks[0].dense_dp;
  EXPECT_EQ(dp.reduce_scatter_buckets, 101);
  EXPECT_EQ(dp.all_gather_buckets, 51);
  EXPECT_NEAR(dp.reduce_scatter.seconds * 1e3, 5.53199, 1e-5);
  EXPECT_NEAR(dp.all_gather.seconds * 1e3, 5.41405, 1e-5);
  EXPECT_NEAR(dp.total_seconds() * 1e3, 834.84779, 1e-4);
  EXPECT_NEAR(c.chunks[0].optimizer.seconds * 1e3, 78.62202, 1e-4);
}

TEST(CommCost, PcieDenseDpUsesMeasuredBandwidth) {
  const auto s = llama3_8b_a100_tp1_pp2();
  const auto t = comm_time(s.system, s.strategy, model::Coll::kReduceScatter, 160e6, 4, "intra_node_pcie_8x",
                           CommStage::kDenseDp);
  EXPECT_NEAR(t.seconds * 1e3, 15.9655, 1e-4);
  EXPECT_EQ(t.latency_seconds, 0.0);
}

TEST(CommCost, B200TensorParallelAllGather) {
  const auto sys = config::load_system_file(kShared + "/simumax-configs/system/b200_bf16_ceperm.json");
  config::StrategyConfig st;
  const auto t = comm_time(sys, st, model::Coll::kAllGather, 64.0 * 1024 * 1024, 2, "high_intra_node",
                           CommStage::kLayer);
  EXPECT_NEAR(t.seconds * 1e3, 0.08384, 1e-5);
  EXPECT_NEAR(t.latency_seconds * 1e6, 9.1828 + 23.1049, 1e-9);
}

TEST(CommCost, SingleMemberGroupCostsNothing) {
  const auto sys = config::load_system_file(kShared + "/simumax-configs/system/b200_bf16_ceperm.json");
  config::StrategyConfig st;
  EXPECT_EQ(comm_time(sys, st, model::Coll::kAllReduce, 1e9, 1, "high_intra_node", CommStage::kLayer).seconds, 0);
}

TEST(StepCost, StragglerRatioFollowsSimuMax) {
  config::Scenario s;
  s.system.num_per_node = 8;
  s.strategy.world_size = 64;
  s.strategy.tp_size = 8;  // 8 nodes, dp 8, edp 64 -> n = 8
  EXPECT_NEAR(straggler_ratio(s), 1.1169, 1e-4);
  s.strategy.enable_straggler_model = false;
  EXPECT_EQ(straggler_ratio(s), 1.0);
}

TEST(KernelCost, MissingShapeFallsBackToDefaultEfficiency) {
  const auto sys = config::load_system_file(kShared + "/simumax-configs/system/b200_bf16_ceperm.json");
  model::PassWork w;
  w.compute_op = "matmul";
  w.flops = 1e12;
  w.shape_key = "b=1, m=7, k=7, n=7, layout=TN, accumulate=False, out_dtype=bf16";
  const auto t = kernel_time(sys, w, config::Fidelity::kSimuMax);
  EXPECT_FALSE(t.table_hit);
  EXPECT_NEAR(t.seconds, 1e12 / (2250e12 * sys.op.at("matmul").efficient_factor), 1e-15);
}

TEST(KernelCost, NearestShapeTakesTheMeasuredNeighbours) {
  config::ComputeOpConfig op;
  op.tflops = 100;
  op.efficient_factor = 0.1;
  for (auto [key, eff] : {std::pair<const char*, double>{"b=1, m=1024, k=1024, n=1024, layout=TN", 0.5},
                          {"b=1, m=4096, k=4096, n=4096, layout=TN", 0.8},
                          {"b=1, m=4096, k=4096, n=4096, layout=NN", 0.2}}) {
    std::string kind;
    config::ShapePoint p;
    ASSERT_TRUE(config::parse_shape_key(key, kind, p.log2_dims));
    p.efficiency = eff;
    op.shapes[kind].push_back(p);
  }
  // A measured shape is its own nearest neighbour; one between two measured ones lies between them; another
  // layout is never a neighbour; an unparseable key or an unknown kind has none.
  EXPECT_NEAR(*nearest_shape_efficiency(op, "b=1, m=4096, k=4096, n=4096, layout=TN"), 0.8, 1e-3);
  const double mid = *nearest_shape_efficiency(op, "b=1, m=2048, k=2048, n=2048, layout=TN");
  EXPECT_GT(mid, 0.5);
  EXPECT_LT(mid, 0.8);
  EXPECT_NEAR(*nearest_shape_efficiency(op, "b=1, m=2048, k=2048, n=2048, layout=NN"), 0.2, 1e-12);
  EXPECT_FALSE(nearest_shape_efficiency(op, "b=1, m=2048, k=2048, n=2048, layout=NT"));
  EXPECT_FALSE(nearest_shape_efficiency(op, "no numbers here"));
}

TEST(KernelCost, MegatronLevelPricesAMissFromNeighboursAndDerates) {
  auto sys = config::load_system_file(kShared + "/simumax-configs/system/b200_bf16_ceperm.json");
  EXPECT_EQ(sys.calibration_source.rfind("shipped: ", 0), 0u);  // SimuMax's B200 file gets ours
  sys.calibration = config::Calibration{};
  model::PassWork w;
  w.compute_op = "matmul";
  w.flops = 1e12;
  w.shape_key = "b=1, m=4096, k=8192, n=10241, layout=TN, accumulate=False, out_dtype=bf16";  // one off a measured n
  const auto flat = kernel_time(sys, w, config::Fidelity::kSimuMax);
  const auto near = kernel_time(sys, w, config::Fidelity::kMegatron);
  EXPECT_FALSE(flat.interpolated);
  EXPECT_TRUE(near.interpolated);
  const double measured = sys.op.at("matmul").accurate_efficient_factor.at(
      "b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False, out_dtype=bf16");
  EXPECT_NEAR(near.compute_seconds, 1e12 / (2250e12 * measured), 0.05 * near.compute_seconds);
  sys.calibration.compute_derate = 0.2;
  EXPECT_NEAR(kernel_time(sys, w, config::Fidelity::kMegatron).compute_seconds, near.compute_seconds / 0.8, 1e-15);
  EXPECT_EQ(kernel_time(sys, w, config::Fidelity::kSimuMax).compute_seconds, flat.compute_seconds);
}

}  // namespace
}  // namespace simumax::cost
