#include "engine/calibrate/calibrate.hpp"

#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/config/validation_case.hpp"

namespace simumax::calibrate {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;

Case load(const std::string& name) {
  auto vc = config::load_validation_case(kShared + "/validation/b200/" + name + ".json", kShared);
  return {vc.name, vc.path, case_family(vc.scenario), vc.scenario, vc.real_ms};
}

TEST(Calibrate, FamiliesFollowTheLayout) {
  EXPECT_EQ(load("llama3_70b_l12_tp8_pp1_dp1_mbc4_cef").family, "tp8");
  EXPECT_EQ(load("llama3_70b_l12_tp1_pp2_dp4_mbc4_cef").family, "pp");
  EXPECT_EQ(load("llama3_70b_l12_tp2_cp4_pp1_dp1_seq32768_mbc4_cef").family, "cp");
  EXPECT_EQ(load("deepseekv2_tp1_ep4_pp2_dp4_l4_mbc4_cef").family, "moe");
}

// A Megatron-LM functional test on DGX H100 (data/megatron): a small GPT whose steps are host-bound.
Case megatron(const std::string& name) {
  const std::string src = SIMUMAX_SOURCE_DIR;
  auto vc = config::load_validation_case(src + "/data/megatron/cases/dgx_h100/" + name + "_dev_dgx_h100.json", src);
  return {vc.name, vc.path, case_family(vc.scenario), vc.scenario, vc.real_ms};
}

// Replaces each case's real time by our prediction with `truth`.
void measure_with(std::vector<Case>& cases, const Machine& truth) {
  const auto errs = relative_errors(cases, truth);
  for (size_t i = 0; i < cases.size(); ++i) cases[i].real_ms *= 1 + errs[i];
}

TEST(Calibrate, FitRecoversAKnownDerate) {
  // Cases whose "real" times are our own predictions at derate 0.08: the fit must find 0.08 again.
  std::vector<Case> cases = {load("llama3_70b_l12_tp8_pp1_dp1_mbc4_cef"), load("llama3_70b_l12_tp1_pp2_dp4_mbc4_cef")};
  Machine truth;
  truth.calibration.compute_derate = 0.08;
  measure_with(cases, truth);
  const Fit f = fit(cases, {Param::kComputeDerate}, Machine{});
  EXPECT_NEAR(f.machine.calibration.compute_derate, 0.08, 1e-3);
  EXPECT_LT(mape(f.errors), 1e-4);
}

TEST(Calibrate, FitRecoversKnownHostParameters) {
  // Host-bound runs (a 12-layer, hidden-512 GPT on 8 H100) "measured" with a 40 us launch and 150 us per op pass:
  // starting from the defaults (6 us, 0 us), the fit finds both again. Layouts with different kernels per op
  // (pipeline stages, tensor parallelism, context parallelism, full recompute) tell the two apart.
  std::vector<Case> cases = {megatron("gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer"),
                             megatron("gpt3_mcore_te_tp1_pp1_resume_torch_dist_uniform_full_recompute"),
                             megatron("gpt3_mcore_te_tp1_pp4_vp1"), megatron("gpt3_mcore_te_tp2_pp2_cp2"),
                             megatron("gpt3_mcore_te_tp4_pp1_resume_torch_dist_dist_optimizer_overlap_grad_reduce")};
  Machine truth;
  truth.host.launch_us = 40;
  truth.host.op_us = 150;
  measure_with(cases, truth);
  Machine start;  // launch_us 6, op_us 0
  EXPECT_GT(mape(relative_errors(cases, start)), 0.3);  // the runs are host-bound: the host parameters matter
  const Fit f = fit(cases, {Param::kLaunchUs, Param::kOpUs}, start);
  EXPECT_NEAR(f.machine.host.launch_us, 40, 1);
  EXPECT_NEAR(f.machine.host.op_us, 150, 5);
  EXPECT_LT(mape(f.errors), 1e-3);
  // cpu_speed divides both: a host twice as slow is found as cpu_speed 0.5 with the truth's launch and op times.
  std::vector<Case> slow = cases;
  Machine half = truth;
  half.host.cpu_speed = 0.5;
  measure_with(slow, half);
  const Fit g = fit(slow, {Param::kCpuSpeed}, truth);
  EXPECT_NEAR(g.machine.host.cpu_speed, 0.5, 0.01);
}

TEST(Calibrate, HostParametersThatStepTimesCannotTellApartAreRefused) {
  EXPECT_NO_THROW(check_identifiable({Param::kLaunchUs, Param::kOpUs, Param::kKernelFloorUs}));
  EXPECT_NO_THROW(check_identifiable({Param::kCpuSpeed, Param::kOpUs}));
  try {
    check_identifiable({Param::kLaunchUs, Param::kOpUs, Param::kCpuSpeed});
    FAIL();
  } catch (const common::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("at most two"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(is_host(Param::kCpuSpeed));
  EXPECT_FALSE(is_host(Param::kKernelFloorUs));
  EXPECT_EQ(parse_param("op_us"), Param::kOpUs);
}

TEST(Calibrate, ErrorStatistics) {
  const std::vector<double> e = {0.1, -0.3, 0.05};
  EXPECT_NEAR(mape(e), 0.15, 1e-12);
  EXPECT_NEAR(mean(e), -0.05, 1e-12);
  EXPECT_EQ(worst(e), -0.3);
}

TEST(Calibrate, UnknownParameterListsTheValidOnes) {
  try {
    parse_param("derate");
    FAIL();
  } catch (const common::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("compute_derate, kernel_floor_us, launch_us, op_us, cpu_speed"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace simumax::calibrate
