// Megatron-LM's log formats (megatron/training/training.py training_log and report_memory, checked against
// NVIDIA/Megatron-LM at d98e8a6): tests/data/compare/megatron_sample.log holds real-shaped lines, including two
// ranks' memory reports run together on one line and torchrun's "[default0]:" prefix.
#include "engine/report/megatron_log.hpp"

#include <gtest/gtest.h>

#include <sstream>

#include "engine/common/error.hpp"

namespace simumax::report {
namespace {

TEST(MegatronLog, ReadsIterationTimesAndMemoryLines) {
  const MegatronLog log = load_megatron_log(SIMUMAX_SOURCE_DIR "/tests/data/compare/megatron_sample.log");
  ASSERT_EQ(log.iterations.size(), 3u);
  EXPECT_EQ(log.iterations[0].iteration, 1);
  EXPECT_DOUBLE_EQ(log.iterations[0].elapsed_ms, 19138.8);
  EXPECT_EQ(log.iterations[1].iteration, 2);
  EXPECT_DOUBLE_EQ(log.iterations[1].elapsed_ms, 12936.1);
  EXPECT_EQ(log.iterations[2].iteration, 3);
  EXPECT_DOUBLE_EQ(log.iterations[2].elapsed_ms, 12900.5);
  ASSERT_EQ(log.memory.size(), 3u);
  EXPECT_EQ(log.memory[0].rank, 6);
  EXPECT_EQ(log.memory[0].when, "(after 1 iterations)");
  EXPECT_DOUBLE_EQ(log.memory[0].allocated_mib, 10850.67578125);
  EXPECT_DOUBLE_EQ(log.memory[0].max_allocated_mib, 10850.70751953125);
  EXPECT_DOUBLE_EQ(log.memory[0].reserved_mib, 11000.0);
  EXPECT_DOUBLE_EQ(log.memory[0].max_reserved_mib, 11000.0);
  EXPECT_EQ(log.memory[1].rank, 0);
  EXPECT_DOUBLE_EQ(log.memory[1].max_allocated_mib, 15754.88818359375);
  EXPECT_DOUBLE_EQ(log.memory[1].max_reserved_mib, 16334.0);
  EXPECT_EQ(log.memory[2].rank, 2);
  EXPECT_EQ(log.memory[2].when, "(after 3 iterations)");
  EXPECT_DOUBLE_EQ(log.memory[2].max_allocated_mib, 17000.5);
  EXPECT_DOUBLE_EQ(log.memory[2].max_reserved_mib, 18500.0);
}

TEST(MegatronLog, ParsesLinesWithoutRankOrTimestamp) {
  std::istringstream in(
      " iteration       10/  50000 | consumed samples:          640 | elapsed time per iteration (ms): 13105.3\n"
      "(after 10 iterations) memory (MB) | allocated: 1.5 | max allocated: 2.5 | reserved: 3 | max reserved: 4\n"
      "elapsed time per iteration (ms): 7.0 | without an iteration number\n");
  const MegatronLog log = parse_megatron_log(in);
  ASSERT_EQ(log.iterations.size(), 2u);
  EXPECT_EQ(log.iterations[0].iteration, 10);
  EXPECT_DOUBLE_EQ(log.iterations[0].elapsed_ms, 13105.3);
  EXPECT_EQ(log.iterations[1].iteration, -1);
  ASSERT_EQ(log.memory.size(), 1u);
  EXPECT_EQ(log.memory[0].rank, -1);
  EXPECT_DOUBLE_EQ(log.memory[0].max_reserved_mib, 4);
}

TEST(MegatronLog, IncompleteMemoryLineIsSkipped) {
  std::istringstream in("[Rank 1] (after 1 iterations) memory (MB) | allocated: 1.0 | max allocated: 2.0\n");
  EXPECT_TRUE(parse_megatron_log(in).memory.empty());
}

TEST(MegatronLog, NoIterationLineIsAnError) {
  try {
    load_megatron_log(SIMUMAX_SOURCE_DIR "/tests/data/compare/no_iterations.log");
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "no Megatron-LM \"elapsed time per iteration (ms): X\" line found");
  }
}

// 50,000 records on one line and no "iteration N/" anywhere: read in linear time (it took 17 s, quadratic).
TEST(MegatronLog, ManyRecordsOnOneLineWithoutIterationNumbers) {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "| elapsed time per iteration (ms): 1234.5 ";
  std::istringstream in(text + "\n");
  const MegatronLog log = parse_megatron_log(in);
  ASSERT_EQ(log.iterations.size(), 50000u);
  EXPECT_EQ(log.iterations.back().iteration, -1);
  EXPECT_EQ(log.iterations.back().elapsed_ms, 1234.5);
}

TEST(MegatronLog, ATimeThatIsNoTimeIsNoRecord) {
  std::istringstream in(
      " iteration 1/ 3 | elapsed time per iteration (ms): nan |\n"
      " iteration 2/ 3 | elapsed time per iteration (ms): -5 |\n"
      " iteration 3/ 3 | elapsed time per iteration (ms): 900.0 |\n");
  const MegatronLog log = parse_megatron_log(in);
  ASSERT_EQ(log.iterations.size(), 1u);
  EXPECT_EQ(log.iterations[0].iteration, 3);
}

}  // namespace
}  // namespace simumax::report
