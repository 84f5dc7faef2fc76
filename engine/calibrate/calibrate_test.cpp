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

TEST(Calibrate, FitRecoversAKnownDerate) {
  // Cases whose "real" times are our own predictions at derate 0.08: the fit must find 0.08 again.
  std::vector<Case> cases = {load("llama3_70b_l12_tp8_pp1_dp1_mbc4_cef"), load("llama3_70b_l12_tp1_pp2_dp4_mbc4_cef")};
  config::Calibration truth;
  truth.compute_derate = 0.08;
  const auto errs = relative_errors(cases, truth);
  for (size_t i = 0; i < cases.size(); ++i) cases[i].real_ms *= 1 + errs[i];
  const Fit f = fit(cases, {Param::kComputeDerate}, config::Calibration{});
  EXPECT_NEAR(f.calibration.compute_derate, 0.08, 1e-3);
  EXPECT_LT(mape(f.errors), 1e-4);
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
    EXPECT_NE(std::string(e.what()).find("compute_derate, kernel_floor_us"), std::string::npos);
  }
}

}  // namespace
}  // namespace simumax::calibrate
