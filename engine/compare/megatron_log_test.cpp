// Megatron-LM's log formats (megatron/training/training.py training_log and report_memory, checked against
// NVIDIA/Megatron-LM at d98e8a6): tests/data/compare/megatron_sample.log holds real-shaped lines, including two
// ranks' memory reports run together on one line and torchrun's "[default0]:" prefix.
#include "engine/compare/megatron_log.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>

#include "engine/common/error.hpp"

namespace simumax::compare {
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
  const MegatronLog log = parse_megatron_log(in, "t.log");
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
  EXPECT_TRUE(parse_megatron_log(in, "t.log").memory.empty());
}

TEST(MegatronLog, NoIterationLineIsAnError) {
  try {
    load_megatron_log(SIMUMAX_SOURCE_DIR "/tests/data/compare/no_iterations.log");
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "no Megatron-LM \"elapsed time per iteration (ms): X\" line found");
  }
}

// A device or a FIFO is refused before reading: /dev/zero would be read without end, a FIFO would block.
TEST(MegatronLog, ADeviceIsNoLog) {
  try {
    load_megatron_log("/dev/zero");
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.file(), "/dev/zero");
    EXPECT_EQ(e.message(), "is not a regular file (a device, a FIFO or a socket)");
  }
}

// A gzip-compressed log reads as the plain one.
TEST(MegatronLog, AGzipLogReadsAsThePlainOne) {
  const std::string plain = SIMUMAX_SOURCE_DIR "/tests/data/compare/megatron_sample.log";
  const std::string gz = ::testing::TempDir() + "megatron_sample.log.gz";
  ASSERT_EQ(std::system(("gzip -c " + plain + " > " + gz).c_str()), 0);
  const MegatronLog a = load_megatron_log(plain), b = load_megatron_log(gz);
  ASSERT_EQ(a.iterations.size(), b.iterations.size());
  for (size_t i = 0; i < a.iterations.size(); ++i) EXPECT_EQ(a.iterations[i].elapsed_ms, b.iterations[i].elapsed_ms);
}

// 50,000 records on one line and no "iteration N/" anywhere: read in linear time (it took 17 s, quadratic).
TEST(MegatronLog, ManyRecordsOnOneLineWithoutIterationNumbers) {
  std::string text;
  for (int i = 0; i < 50000; ++i) text += "| elapsed time per iteration (ms): 1234.5 ";
  std::istringstream in(text + "\n");
  const MegatronLog log = parse_megatron_log(in, "t.log");
  ASSERT_EQ(log.iterations.size(), 50000u);
  EXPECT_EQ(log.iterations.back().iteration, -1);
  EXPECT_EQ(log.iterations.back().elapsed_ms, 1234.5);
}

// A time or a memory figure that is no number, or negative, is refused with its line (it used to be skipped).
TEST(MegatronLog, ANumberThatIsNoFigureIsRefusedWithItsLine) {
  const struct {
    const char* text;
    const char* pointer;
    const char* message;
  } cases[] = {
      {" iteration 1/ 3 | elapsed time per iteration (ms): 900.0 |\n iteration 2/ 3 | elapsed time per iteration "
       "(ms): nan |\n",
       "line 2", "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {"\n\n\n iteration 1/ 3 | elapsed time per iteration (ms): 1e999 |\n", "line 4",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {" iteration 1/ 3 | elapsed time per iteration (ms): -5 |\n", "line 1",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {" iteration 1/ 3 | elapsed time per iteration (ms): 0 |\n", "line 1",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {"x\n[Rank 0] (after 1 iterations) memory (MB) | allocated: 1 | max allocated: -2 | reserved: 3 | max reserved: 4\n",
       "line 2", "memory (MB) max allocated must be a number in [0, 1e9]"},
      // Issue 32: 1e308 ms printed "MAPE nan %", a denormal "+inf %", and 0x1p10 was read as 1024 ms.
      {" iteration 1/ 3 | elapsed time per iteration (ms): 1e308 |\n", "line 1",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {" iteration 1/ 3 | elapsed time per iteration (ms): 4.9e-324 |\n", "line 1",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {" iteration 1/ 3 | elapsed time per iteration (ms): 0x1p10 |\n", "line 1",
       "elapsed time per iteration (ms) must be a number in [0.001, 1e9]"},
      {"[Rank 0] (after 1 iterations) memory (MB) | allocated: inf | max allocated: 2 | reserved: 3 | max reserved: 4\n",
       "line 1", "memory (MB) allocated must be a number in [0, 1e9]"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::istringstream in(c.text);
    try {
      parse_megatron_log(in, "t.log");
      ADD_FAILURE() << "no error";
    } catch (const common::ConfigError& e) {
      EXPECT_EQ(e.file(), "t.log");
      EXPECT_EQ(e.pointer(), c.pointer);
      EXPECT_EQ(e.message(), c.message);
    }
  }
}

MegatronIteration it(int64_t n, double ms) { return MegatronIteration{n, ms, n}; }

// --log-interval 2: the warm-up lands in iteration 2's record (the 5124 ms against ~852 ms).
TEST(MegatronLog, SteadyStateSkipsTheFirstRecordAndTakesTheMedian) {
  const std::vector<MegatronIteration> its = {it(2, 5124.0), it(4, 860.0), it(6, 850.0), it(8, 852.0),
                                              it(10, 900.0)};
  const SteadyState s = steady_state(its);
  EXPECT_EQ(s.warmup_records, 1u);
  EXPECT_EQ(s.used, (std::vector<size_t>{1, 2, 3, 4}));
  EXPECT_DOUBLE_EQ(s.median_ms, (852.0 + 860.0) / 2);
  EXPECT_DOUBLE_EQ(s.min_ms, 850.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 900.0);
  EXPECT_EQ(s.description(its), "iterations 4-10 (4 records; the first skipped as warm-up)");
}

TEST(MegatronLog, SteadyStateSkipsAWarmUpLongerThanOneRecord) {
  const std::vector<MegatronIteration> its = {it(1, 9000.0), it(2, 1500.0), it(3, 1200.0), it(4, 1000.0),
                                              it(5, 1010.0), it(6, 990.0)};
  const SteadyState s = steady_state(its);
  EXPECT_EQ(s.warmup_records, 2u);  // 1500 > 1.25 x 1005; 1200 < 1.25 x 1000 stays
  EXPECT_DOUBLE_EQ(s.median_ms, 1005.0);
  EXPECT_DOUBLE_EQ(s.max_ms, 1200.0);
  EXPECT_EQ(s.description(its), "iterations 3-6 (4 records; the first 2 skipped as warm-up)");
}

TEST(MegatronLog, SteadyStateOfOneRecordIsThatRecord) {
  const std::vector<MegatronIteration> its = {MegatronIteration{-1, 700.0, 12}};
  const SteadyState s = steady_state(its);
  EXPECT_EQ(s.warmup_records, 0u);
  EXPECT_DOUBLE_EQ(s.median_ms, 700.0);
  EXPECT_EQ(s.description(its), "iteration ? (line 12) (1 record)");
}

}  // namespace
}  // namespace simumax::compare
