#include "engine/measure/nccl_tests.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/cost/comm_cost.hpp"
#include "engine/measure/net_fit.hpp"

namespace simumax::measure {
namespace {

std::string data(const std::string& name) {
  return (std::filesystem::path(SIMUMAX_SOURCE_DIR) / "tests" / "data" / "nccl_tests" / name).string();
}

std::string b200() { return (std::filesystem::path(SIMUMAX_SOURCE_DIR) / "platforms" / "b200_bf16.json").string(); }

TEST(NcclTests, ReadsHeaderCollectiveAndRankLines) {
  const auto t = read_nccl_tests(data("dgx-spark-pr103-all_reduce-2node.txt"), {});
  EXPECT_EQ(t.collective, "all_reduce");
  EXPECT_EQ(t.ranks, 2);
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(t.rows[0].bytes, 8192);
  EXPECT_DOUBLE_EQ(t.rows[0].time_us, 35.15);
  EXPECT_EQ(t.rows[0].line, 12);
  EXPECT_DOUBLE_EQ(read_nccl_tests(data("dgx-spark-pr103-all_reduce-2node.txt"), {"", 0, true}).rows[0].time_us,
                   30.33);
}

TEST(NcclTests, RanksFollowFromTheBusFactorWithoutRankLines) {
  EXPECT_EQ(read_nccl_tests(data("mooncake-pr3484-all_reduce-8gpu.txt"), {"all_reduce_perf", 0, false}).ranks, 8);
  // mpirun --tag-output's "[0]" prefixes, inside the line too; busbw/algbw 1.9167 = 2*23/24.
  const auto tagged = read_nccl_tests(data("nccl-issue1453-all_reduce-tagged.txt"), {"all_reduce", 0, false});
  EXPECT_EQ(tagged.ranks, 24);
  EXPECT_EQ(tagged.rows.size(), 10u);
  EXPECT_DOUBLE_EQ(tagged.rows.back().time_us, 193909);
}

TEST(NcclTests, ReadsOldTablesWithoutRedopAndRootColumnsAndSkipsLogLines) {
  const std::string text =
      "host:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/IPC\n"
      "     1048576        131072   float    47.38   11.06   11.06  0e+00    46.84   11.19   11.19  0e+00\n";
  const auto t = parse_nccl_tests(text, "old.txt", {"all_reduce", 2, false});
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(t.rows[0].time_us, 47.38);
  EXPECT_DOUBLE_EQ(t.rows[0].busbw_gbs, 11.06);
  EXPECT_EQ(t.rows[0].line, 2);
}

TEST(NcclTests, BadInputIsAnErrorNamingFileAndLine) {
  auto message = [](const std::string& text, NcclTestsOptions o) {
    try {
      parse_nccl_tests(text, "x.txt", o);
    } catch (const common::ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string row = "  1048576  262144  float  sum  -1  27.76  37.78  66.11  0  27.49  38.15  66.76  0\n";
  EXPECT_EQ(message(row, {}), "x.txt: no 'Collective test starting: <name>_perf' line: name the collective "
                              "(FILE:TIER:COLLECTIVE)");
  EXPECT_EQ(message(row, {"broadcast", 0, false}),
            "x.txt: collective 'broadcast': expected one of all_reduce, all_gather, reduce_scatter, alltoall, "
            "sendrecv (the collectives of SimuMax's network schema)");
  EXPECT_EQ(message(row, {"all_reduce", 4, false}),
            "x.txt: line 1: busbw / algbw is 1.749868, but all_reduce over 4 ranks has a bus factor of 1.500000: "
            "the rank count or the collective is wrong");
  EXPECT_EQ(message("  1048576  262144  float  sum  -1  abc  37.78  66.11  0  27.49  38.15  66.76  0\n",
                    {"all_reduce", 8, false}),
            "x.txt: line 1: expected an nccl-tests row: size count type [redop root] then time algbw busbw #wrong, "
            "out-of-place and in-place; got '  1048576  262144  float  sum  -1  abc  37.78  66.11  0  27.49  38.15  "
            "66.76  0'");
  EXPECT_EQ(message("# nothing\n", {"all_reduce", 8, false}),
            "x.txt: no nccl-tests rows (lines of: size count type redop root time algbw busbw #wrong time algbw "
            "busbw #wrong) with a size above 0");
  EXPECT_THROW(read_nccl_tests("/dev/zero", {}), common::ConfigError);
  // Issue 32: a row with wrong results was fitted as the machine's speed; a time of an age was read.
  EXPECT_EQ(message("  1048576  262144  float  sum  -1  27.76  37.78  66.11  3  27.49  38.15  66.76  0\n",
                    {"all_reduce", 8, false}),
            "x.txt: line 1: the run counts 3 wrong results (#wrong) at 1048576 bytes: its times are not fitted; rerun "
            "nccl-tests");
  EXPECT_EQ(message("  1048576  262144  float  sum  -1  1e300  37.78  66.11  0  27.49  38.15  66.76  0\n",
                    {"all_reduce", 8, false}),
            "x.txt: line 1: expected a size >= 0, a time in (0, 1e12] us and bandwidths in [0, 1e7] GB/s, got '  "
            "1048576  262144  float  sum  -1  1e300  37.78  66.11  0  27.49  38.15  66.76  0'");
  // -c 0 prints no count: nothing to refuse.
  EXPECT_EQ(message("  1048576  262144  float  sum  -1  27.76  37.78  66.11  N/A  27.49  38.15  66.76  N/A\n",
                    {"all_reduce", 8, false}),
            "no error");
}

struct FitCase {
  const char* file;
  const char* tier;
  int64_t min_bytes;
  double worst_line_error;  // of the two-parameter line alone, measured (docs/measure.md)
};

const FitCase kFitCases[] = {{"mooncake-pr3484-all_reduce-8gpu.txt", "high_intra_node", 0, 0.27},
                             {"mooncake-pr3484-all_reduce-8gpu.txt", "high_intra_node", 4 << 20, 0.07},
                             {"nccl-issue1411-all_reduce-2node-4gpu.txt", "inter_node", 0, 0.27},
                             {"nccl-issue1411-all_reduce-2node-4gpu.txt", "inter_node", 8 << 20, 0.04},
                             {"dgx-spark-pr103-all_reduce-2node.txt", "inter_node", 0, 0.18},
                             {"nccl-issue1453-all_reduce-tagged.txt", "inter_node", 0, 5.66}};

// The engine's bus bandwidth for `r` with `sys`, in nccl-tests' units.
double engine_busbw(const config::SystemConfig& sys, const NcclTestsTable& t, const NcclTestsRow& r,
                    const std::string& tier, config::Fidelity fidelity) {
  config::StrategyConfig st;
  st.fidelity = fidelity;
  const double s = cost::comm_time(sys, st, t.coll, static_cast<double>(r.bytes), t.ranks, tier,
                                   cost::CommStage::kLayer).seconds;
  return static_cast<double>(r.bytes) * bus_factor(t.coll, t.ranks) / s / 1e9;
}

// `sys` with case `c`'s table `t` fitted into its tier (every row a point, the line from c.min_bytes up).
config::SystemConfig fitted_to(const config::SystemConfig& sys, const FitCase& c, const NcclTestsTable& t) {
  std::vector<CollectivePoint> points;
  for (const auto& r : t.rows) points.push_back({r.bytes, t.ranks, r.time_us, c.file});
  return with_fit(sys, fit_collective(sys, c.tier, t.coll, points, c.min_bytes));
}

// The fitted system, through the engine's own collective formula, gives back the busbw nccl-tests printed: within
// 1 %, or half a unit of the last printed digit where that is more (0.23 GB/s is 0.225-0.235).
TEST(NetFit, FittedSystemReproducesThePrintedBusBandwidthWithin1Percent) {
  const config::SystemConfig sys = config::load_system_file(b200());
  for (const FitCase& c : kFitCases) {
    SCOPED_TRACE(std::string(c.file) + " from " + std::to_string(c.min_bytes) + " B");
    const auto t = read_nccl_tests(data(c.file), {"all_reduce", 0, false});
    const config::SystemConfig fitted = fitted_to(sys, c, t);
    for (const auto& r : t.rows) {
      const double busbw = engine_busbw(fitted, t, r, c.tier, config::Fidelity::kMegatron);
      EXPECT_LE(std::abs(busbw / r.busbw_gbs - 1), std::max(0.01, 0.005 / r.busbw_gbs)) << r.bytes << " B";
    }
  }
}

// SimuMax's schema alone holds one line t = bytes / bandwidth + latency per tier and collective; NCCL switches
// protocol and algorithm with the size, so the line misses rows by this much (the simumax fidelity, and any size
// outside the measured ones, use it).
TEST(NetFit, TwoParameterLineAloneStaysInItsMeasuredBand) {
  const config::SystemConfig sys = config::load_system_file(b200());
  for (const FitCase& c : kFitCases) {
    SCOPED_TRACE(std::string(c.file) + " from " + std::to_string(c.min_bytes) + " B");
    const auto t = read_nccl_tests(data(c.file), {"all_reduce", 0, false});
    const config::SystemConfig fitted = fitted_to(sys, c, t);
    double worst = 0;
    for (const auto& r : t.rows) {
      if (r.bytes < c.min_bytes) continue;
      const double busbw = engine_busbw(fitted, t, r, c.tier, config::Fidelity::kSimuMax);
      worst = std::max(worst, std::abs(busbw / r.busbw_gbs - 1));
    }
    EXPECT_LE(worst, c.worst_line_error);
    EXPECT_GT(worst, c.worst_line_error - 0.01);  // the band is measured, not loose
  }
}

TEST(NetFit, BetweenMeasuredSizesTheEfficiencyIsInterpolatedAndOutsideTheLineHolds) {
  const config::SystemConfig sys = config::load_system_file(b200());
  const auto t = read_nccl_tests(data("mooncake-pr3484-all_reduce-8gpu.txt"), {"all_reduce", 0, false});
  std::vector<CollectivePoint> points;
  for (const auto& r : t.rows) points.push_back({r.bytes, t.ranks, r.time_us, "m"});
  const NetFit fit = fit_collective(sys, "high_intra_node", t.coll, points, 0);
  const config::SystemConfig fitted = with_fit(sys, fit);
  config::StrategyConfig meg, sim;
  sim.fidelity = config::Fidelity::kSimuMax;
  auto seconds = [&](const config::StrategyConfig& st, double bytes) {
    return cost::comm_time(fitted, st, t.coll, bytes, 8, "high_intra_node", cost::CommStage::kLayer).seconds;
  };
  // 24 MiB lies between the 16 MiB (121.33 us) and 32 MiB (195.40 us) rows.
  EXPECT_GT(seconds(meg, 24 << 20), 121.33e-6);
  EXPECT_LT(seconds(meg, 24 << 20), 195.40e-6);
  // Outside the measured sizes, and at simumax fidelity, the two-parameter line.
  EXPECT_EQ(seconds(meg, 1 << 30), seconds(sim, 1 << 30));
  EXPECT_NE(seconds(meg, 16 << 20), seconds(sim, 16 << 20));
  EXPECT_NEAR(seconds(meg, 16 << 20), 121.33e-6, 1e-12);
}

}  // namespace
}  // namespace simumax::measure
