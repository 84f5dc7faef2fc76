#include "engine/measure/measurement.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/cost/comm_cost.hpp"
#include "engine/simulate.hpp"

namespace simumax::measure {
namespace {

namespace fs = std::filesystem;

std::string src(const std::string& rel) { return (fs::path(SIMUMAX_SOURCE_DIR) / rel).string(); }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path fresh_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("simumax_measure_test_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(d);
  return d;
}

ImportInputs nccl_import() {
  ImportInputs in;
  in.base_system = src("platforms/b200_bf16.json");
  in.nccl.push_back({src("tests/data/nccl_tests/mooncake-pr3484-all_reduce-8gpu.txt"), "high_intra_node",
                     {"all_reduce", 0, false}});
  in.nccl.push_back({src("tests/data/nccl_tests/nccl-issue1411-all_reduce-2node-4gpu.txt"), "inter_node",
                     {"all_reduce", 0, false}});
  return in;
}

// A config built from imported nccl-tests output loads with the engine's own reader and runs a scenario.
TEST(MeasureImport, ConfigFromNcclTestsLoadsAndRuns) {
  const Measured m = import_measurements(nccl_import());
  ASSERT_EQ(m.fits.size(), 2u);
  const fs::path out = fresh_dir("nccl");
  write_outputs(out.string(), src("platforms/b200_bf16.json"), m);
  const config::SystemConfig sys = config::load_system_file((out / "system.json").string());
  const auto& ar = sys.networks.at("high_intra_node").op.at("all_reduce");
  EXPECT_DOUBLE_EQ(*ar.efficient_factor, m.fits[0].efficient_factor);
  EXPECT_DOUBLE_EQ(*ar.latency_us, m.fits[0].latency_us);
  EXPECT_EQ(*ar.fixed_latency_us, 0);
  // Untouched entries stay as they were.
  const config::SystemConfig base = config::load_system_file(src("platforms/b200_bf16.json"));
  EXPECT_EQ(sys.op.at("matmul").accurate_efficient_factor, base.op.at("matmul").accurate_efficient_factor);
  config::Scenario s = config::load_scenario(src("scenarios/default.json"));
  s.system = sys;
  const double step_ms = simulate(s, {}).summary.step_time_ms;
  EXPECT_TRUE(std::isfinite(step_ms) && step_ms > 0);
  // The engine now times an 8-rank all-reduce with the fit, not the shipped B200 numbers.
  auto ar_seconds = [&](const config::SystemConfig& y) {
    return cost::comm_time(y, s.strategy, model::Coll::kAllReduce, 64 << 20, 8, "high_intra_node",
                           cost::CommStage::kLayer).seconds;
  };
  EXPECT_NE(ar_seconds(base), ar_seconds(sys));
  EXPECT_NEAR(ar_seconds(sys), fitted_seconds(base, m.fits[0], {64 << 20, 8, 1, ""}), 1e-15);
  const std::string csv = read((out / "measurements.csv").string());
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "kind,name,key,bytes,flops,median_us,min_us,max_us,repetitions,value,source");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 11 + 7);
  fs::remove_all(out);
}

TEST(MeasureImport, OutputIsByteIdenticalAcrossRuns) {
  const fs::path a = fresh_dir("a"), b = fresh_dir("b");
  write_outputs(a.string(), src("platforms/b200_bf16.json"), import_measurements(nccl_import()));
  write_outputs(b.string(), src("platforms/b200_bf16.json"), import_measurements(nccl_import()));
  EXPECT_EQ(read((a / "system.json").string()), read((b / "system.json").string()));
  EXPECT_EQ(read((a / "measurements.csv").string()), read((b / "measurements.csv").string()));
  fs::remove_all(a), fs::remove_all(b);
}

TEST(MeasureImport, SimumaxEfficiencyTestOutputIsRescaledToTheSystemPeak) {
  ImportInputs in;
  in.base_system = src("platforms/b200_bf16.json");
  in.efficiency_files.push_back(src("tests/data/simumax_efficiency/gemm_efficiency.json"));
  const Measured m = import_measurements(in);
  const fs::path out = fresh_dir("eff");
  write_outputs(out.string(), in.base_system, m);
  const config::SystemConfig base = config::load_system_file(in.base_system);
  const config::SystemConfig sys = config::load_system_file((out / "system.json").string());
  const std::string key = "b=1, m=4096, k=8192, n=10240, layout=TN, accumulate=False, out_dtype=bf16";
  EXPECT_DOUBLE_EQ(sys.op.at("matmul").accurate_efficient_factor.at(key), 0.8 * 1000 / base.op.at("matmul").tflops);
  fs::remove_all(out);
}

// B200's fp8 tables have efficient_factor 0 (SimuMax divides by it); measured entries give it their mean, and a
// table the base lacks is added with "default"'s peak.
TEST(MeasureImport, WriterFillsAZeroFallbackAndAddsMissingTables) {
  const std::string base = src("platforms/b200_bf16.json");
  report::MeasuredSystem m;
  m.efficiencies["fp8_matmul"]["b=1, m=1024, k=1024, n=1024, layout=TN, accumulate=False, out_dtype=bf16"] = 0.5;
  m.efficiencies["fp8_matmul"]["b=1, m=2048, k=1024, n=1024, layout=TN, accumulate=False, out_dtype=bf16"] = 0.7;
  Measured measured;
  measured.system = m;
  const fs::path out = fresh_dir("fp8");
  write_outputs(out.string(), base, measured);
  const config::SystemConfig before = config::load_system_file(base);
  const config::SystemConfig sys = config::load_system_file((out / "system.json").string());
  ASSERT_EQ(before.op.at("fp8_matmul").efficient_factor, 0);
  EXPECT_DOUBLE_EQ(sys.op.at("fp8_matmul").efficient_factor, 0.6);
  EXPECT_EQ(sys.op.at("fp8_matmul").accurate_efficient_factor.size(), 2u);
  fs::remove_all(out);
}

TEST(MeasureImport, AMissingTierIsAnErrorNamingIt) {
  ImportInputs in = nccl_import();
  in.nccl[0].tier = "intra_node_pcie_8x";
  try {
    import_measurements(in);
    FAIL() << "no error";
  } catch (const common::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), in.nccl[0].path + ": network tier 'intra_node_pcie_8x' is not in " +
                                         in.base_system);
  }
}

}  // namespace
}  // namespace simumax::measure
