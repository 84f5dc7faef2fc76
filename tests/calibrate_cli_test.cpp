// Fidelity levels and calibration through the CLI (issue #10, docs/accuracy.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;

const std::string kB200 = SIMUMAX_SHARED_DIR "/validation/b200/";
const std::string kA100 = SIMUMAX_SHARED_DIR "/validation/a100/";

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("simumax_calibrate_test_" + name);
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

nlohmann::json summary_of(const std::vector<std::string>& run_args, const fs::path& out) {
  auto args = run_args;
  args.insert(args.end(), {"-o", out.string(), "-q"});
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return nlohmann::json::parse(read_file((out / "summary.json").string()));
}

TEST(Fidelity, SimuMaxLevelIsSimuMaxAndTheDefaultIsMegatron) {
  const fs::path dir = scratch("fidelity");
  // The default scenario is the validation case llama3_70b_l12_tp1_pp2_dp4_mbc8: SimuMax v1.2 says 1441.2 ms.
  const auto sm = summary_of({"run", "scenarios/default.json", "--fidelity", "simumax"}, dir / "sm");
  EXPECT_EQ(sm["fidelity"], "simumax");
  EXPECT_NEAR(sm["step_time_ms"].get<double>(), 1441.2, 0.05);
  const auto meg = summary_of({"run", "scenarios/default.json"}, dir / "meg");
  EXPECT_EQ(meg["fidelity"], "megatron");
  // The kernels SimuMax omits make the step longer (the real run: 1476.8 ms).
  EXPECT_GT(meg["step_time_ms"].get<double>(), sm["step_time_ms"].get<double>() + 10);
}

TEST(Fidelity, EveryMissingShapeIsListedByName) {
  const fs::path dir = scratch("misses");
  // Llama2-7B's GEMM shapes are not in the B200 tables.
  const auto s = summary_of({"run", "--model", "models/llama2-7b.json", "--strategy",
                             SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system",
                             "platforms/b200_bf16.json"},
                            dir);
  int64_t listed = 0;
  for (const auto& [op, keys] : s["miss_efficiency"].items()) {
    for (const auto& k : keys) EXPECT_NE(k.get<std::string>().find("m="), std::string::npos) << op;
    listed += static_cast<int64_t>(keys.size());
  }
  EXPECT_GT(listed, 0);
  EXPECT_EQ(listed, s["efficiency_table_misses"].get<int64_t>());
  EXPECT_EQ(s["miss_efficiency_fallback"], "nearest measured shapes");
}

TEST(Calibrate, WritesASystemConfigThatRunReads) {
  const fs::path dir = scratch("writes");
  const std::string out = (dir / "my_b200.json").string();
  const auto r = run_cli({"calibrate", kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc4_cef.json",
                          kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc8_cef.json",
                          kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc32_cef.json", "--params", "compute_derate",
                          "--no-leave-out", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("fitted on every case"), std::string::npos);
  const auto sys = nlohmann::json::parse(read_file(out));
  const double derate = sys["calibration"]["compute_derate"].get<double>();
  EXPECT_GT(derate, -0.2);
  EXPECT_LT(derate, 0.5);
  EXPECT_TRUE(sys.contains("accelerator"));  // the rest of the SimuMax schema is kept
  const auto s = summary_of({"run", "--model", "models/llama3-70b.json", "--strategy",
                             SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system", out},
                            dir / "run");
  EXPECT_GT(s["step_time_ms"].get<double>(), 0);
}

TEST(Calibrate, RefusesFewerCasesThanParameters) {
  const auto r = run_cli({"calibrate", kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc4_cef.json", "-o",
                          (scratch("few") / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("1 case(s) for 2 parameter(s)"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(scratch("few") / "x.json"));
}

TEST(Calibrate, RefusesCasesOfTwoMachines) {
  const auto r = run_cli({"calibrate", kA100 + "a100_llama3_8b_l32_tp1_pp2_dp4_mbc4.json",
                          kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc4_cef.json",
                          kB200 + "llama3_70b_l12_tp8_pp1_dp1_mbc8_cef.json", "-o",
                          (scratch("two") / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/system_file: is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("calibrate one machine at a time"), std::string::npos) << r.err;
}

TEST(Calibrate, RefusesALogItCannotPair) {
  const auto r = run_cli({"calibrate", "--log", "scenarios/default.json", "-o", (scratch("log") / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("expected SCENARIO=LOG"), std::string::npos) << r.err;
}

TEST(Calibration, DerateOutsideItsPhysicalRangeIsAConfigError) {
  const auto r = run_cli({"run", "--model", "models/llama3-8b.json", "--strategy",
                          SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system",
                          "tests/data/calibrate/derate_0.9.json", "-q", "-o", (scratch("range") / "o").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("tests/data/calibrate/derate_0.9.json: /calibration/compute_derate: expected a fraction in "
                       "[-0.2, 0.5]"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace simumax::tests
