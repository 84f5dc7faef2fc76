// calibrate --trace: GEMM efficiencies learnt from the real 8-GPU trace, written into a system config, read back
// by the system config reader and timed by the cost model: each learnt shape must take its real median time
// within 2 % (the reproduction check), at the default (megatron) fidelity with a100's shipped derate.
#include "engine/calibrate/trace_evidence.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "engine/config/scenario.hpp"
#include "engine/cost/kernel_cost.hpp"
#include "engine/report/calibrated_system.hpp"
#include "engine/report/kineto_trace.hpp"

namespace simumax::calibrate {
namespace {

const std::string kTrace = SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz";
const std::string kSystem = SIMUMAX_SOURCE_DIR "/platforms/a100_pcie.json";

report::KernelClassTable table() {
  return report::KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
}

TEST(TraceEvidence, LayoutAndDtypeOfARealCall) {
  report::RealOp op;
  op.pass = "backward";
  op.gemm = report::GemmShape{1, 512, 1024, 1705};  // output 512 x 1705: a forward weight's k x n
  const std::vector<std::pair<int64_t, int64_t>> weights = {{512, 1705}};
  EXPECT_EQ(layout_of(op, weights), "NT");
  op.gemm = report::GemmShape{1, 1024, 1705, 512};
  EXPECT_EQ(layout_of(op, weights), "NN");
  op.pass = "forward";
  EXPECT_EQ(layout_of(op, weights), "TN");
  EXPECT_EQ(dtype_of("float"), "fp32");
  EXPECT_EQ(dtype_of("c10::BFloat16"), "bf16");
  EXPECT_EQ(dtype_of("Scalar"), "");
}

TEST(TraceEvidence, LearntGemmEntriesReproduceTheRealTimesWithin2Percent) {
  const report::KinetoProfile p = report::load_kineto_trace(kTrace, table());
  std::map<std::string, GemmEntry> entries;
  std::map<std::string, std::vector<double>> calls;
  TraceEvidence e;
  add_trace(kTrace, p.insight, entries, calls, e);
  const config::SystemConfig base = config::load_system_file(kSystem);
  e = finish(entries, calls, e, base.op.at("matmul").tflops);
  // Every GEMM call of the trace has a shape and an input type (gemm_reference.py: 1776 shaped calls).
  EXPECT_EQ(e.gemm_calls, 1776);
  EXPECT_EQ(e.gemm_calls_unshaped, 0);
  ASSERT_GT(e.gemm.size(), 100u);
  std::map<std::string, double> eff;
  for (const auto& g : e.gemm) eff[g.key] = g.efficiency;
  const std::string out = ::testing::TempDir() + "a100_from_trace.json";
  std::ofstream(out) << report::system_with_efficiencies(kSystem, "matmul", eff);
  const config::SystemConfig learnt = config::load_system_file(out);
  // The base's own entries are all kept.
  for (const auto& [key, v] : base.op.at("matmul").accurate_efficient_factor) {
    EXPECT_EQ(learnt.op.at("matmul").accurate_efficient_factor.count(key), 1u) << key;
  }
  for (const auto& [key, list] : calls) {
    SCOPED_TRACE(key);
    std::vector<double> us = list;
    std::sort(us.begin(), us.end());
    const size_t n = us.size();
    const double real_us = n % 2 == 1 ? us[n / 2] : (us[n / 2 - 1] + us[n / 2]) / 2;
    model::PassWork w;
    w.compute_op = "matmul";
    w.flops = entries.at(key).shape.flops();
    w.shape_key = key;
    const cost::KernelTime t = cost::kernel_time(learnt, w, config::Fidelity::kMegatron);
    EXPECT_TRUE(t.table_hit);
    EXPECT_NEAR(t.seconds * 1e6 / real_us, 1.0, 0.02);
  }
}

}  // namespace
}  // namespace simumax::calibrate
