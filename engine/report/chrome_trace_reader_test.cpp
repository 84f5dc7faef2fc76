// The streaming reader on small traces: both file layouts, ids and numbers in the forms writers use, errors.
#include "engine/report/chrome_trace_reader.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::report {
namespace {

std::string write_temp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<ChromeEvent> read_all(const std::string& path, ChromeTraceInfo* info = nullptr) {
  std::vector<ChromeEvent> events;
  const ChromeTraceInfo i = read_chrome_trace(path, [&](const ChromeEvent& e) { events.push_back(e); });
  if (info) *info = i;
  return events;
}

TEST(ChromeTraceReader, ObjectFormatWithArgsAndDistributedInfo) {
  const std::string path = write_temp("object.json", R"({"schemaVersion": 1,
    "distributedInfo": {"backend": "nccl", "rank": 5, "world_size": 16, "pg_config": [{"rank": 99}]},
    "traceEvents": [
      {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1661203462599325, "dur": 2.5,
       "args": {"correlation": 42, "stream": 7, "grid": [1, 2, 3], "nested": {"name": "ignored"}}},
      {"ph": "M", "name": "thread_name", "pid": "Spans", "tid": "12", "args": {"name": "stream 7 "}},
      {"ph": "X", "name": "quoted", "pid": 1, "tid": 2, "ts": "10.5", "dur": "3"}
    ],
    "traceName": "x"})");
  ChromeTraceInfo info;
  const auto ev = read_all(path, &info);
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(info.events, 3);
  EXPECT_EQ(info.rank, 5);  // the top-level rank, not pg_config's
  EXPECT_EQ(info.world_size, 16);
  EXPECT_EQ(ev[0].cat, "kernel");
  EXPECT_DOUBLE_EQ(ev[0].ts_us, 1661203462599325.0);
  EXPECT_DOUBLE_EQ(ev[0].dur_us, 2.5);
  EXPECT_EQ(ev[0].correlation, 42);
  EXPECT_EQ(ev[0].stream, 7);
  EXPECT_TRUE(ev[0].arg_name.empty());
  EXPECT_FALSE(ev[1].pid_numeric);
  EXPECT_TRUE(ev[1].tid_numeric);
  EXPECT_EQ(ev[1].tid, 12);
  EXPECT_EQ(ev[1].arg_name, "stream 7 ");
  EXPECT_DOUBLE_EQ(ev[2].ts_us, 10.5);
  EXPECT_DOUBLE_EQ(ev[2].dur_us, 3);
  EXPECT_EQ(ev[2].correlation, -1);
}

TEST(ChromeTraceReader, BareArrayFormat) {
  const auto ev = read_all(write_temp("array.json", R"([{"ph": "X", "name": "a", "pid": 3, "tid": 1, "ts": 0,
    "dur": 1}, {"ph": "i", "name": "b", "pid": 3, "tid": 1, "ts": 2}])"));
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].pid, 3);
  EXPECT_TRUE(ev[0].pid_numeric);
  EXPECT_EQ(ev[1].ph, "i");
}

struct BadTrace {
  const char* name;
  const char* text;
  const char* message;
};

const BadTrace kBad[] = {
    {"Empty", "", "not a Chrome trace: the file is empty"},
    {"NoEventList", R"({"steps": [1, 2]})", "not a Chrome trace: no \"traceEvents\" array (Trace Event Format)"},
    {"NotJson", "hello", "invalid JSON at line 1, column 1: syntax error while parsing value - invalid literal"},
    // A complete event is a span of time: compare's breakdown needs its start and a duration >= 0.
    {"NoDuration", R"({"traceEvents": [{"ph": "M", "name": "x"}, {"ph": "X", "name": "k", "ts": 5}]})",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" of at least 0"},
    {"NegativeDuration", R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 5, "dur": -3}]})",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" of at least 0"},
    {"TimeNotANumber", R"([{"ph": "X", "name": "k", "ts": "soon", "dur": 1}])",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" of at least 0"},
    // A pid is a process id or, in our traces, a rank: beyond an int it is no rank (it read as "main stream -1").
    {"RankBeyondInt", R"([{"ph": "X", "name": "k", "pid": 3000000000, "tid": 0, "ts": 1, "dur": 1}])",
     "\"pid\" must be an integer in the range of an int (a process id or rank)"},
    {"RankNotAnInteger", R"([{"ph": "M", "name": "k", "pid": 1.5}])",
     "\"pid\" must be an integer in the range of an int (a process id or rank)"},
    {"TidBeyond64Bits", R"([{"ph": "X", "name": "k", "pid": 0, "tid": 1e30, "ts": 1, "dur": 1}])",
     "\"tid\" must be an integer of at most 64 bits"},
    {"TidBeyondInt64AsUnsigned", R"([{"ph": "X", "name": "k", "pid": 0, "tid": 18446744073709551615, "ts": 1,
     "dur": 1}])", "\"tid\" must be an integer of at most 64 bits"},
    {"DistributedRankBeyondInt", R"({"distributedInfo": {"rank": 1e12}, "traceEvents": []})",
     "must be an integer in the range of an int"},
};

void PrintTo(const BadTrace& b, std::ostream* os) { *os << b.name; }

class ChromeTraceReaderBad : public ::testing::TestWithParam<BadTrace> {};

TEST_P(ChromeTraceReaderBad, ThrowsConfigErrorNamingTheFile) {
  const std::string path = write_temp(std::string(GetParam().name) + ".json", GetParam().text);
  try {
    read_all(path);
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.file(), path);
    EXPECT_EQ(e.message(), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(Table, ChromeTraceReaderBad, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadTrace>& i) { return std::string(i.param.name); });

// A device is refused before reading (it used to stream without end); a summary read whole is capped.
TEST(ChromeTraceReader, ADeviceIsNoTrace) {
  try {
    read_chrome_trace("/dev/zero", [](const ChromeEvent&) {});
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "is not a regular file (a device, a FIFO or a socket)");
  }
}

// A gzip bomb read whole (a kernel-class table, a summary) stops at 256 MiB inflated instead of filling memory.
TEST(TraceFile, AGzipBombReadWholeIsRefusedAt256MiB) {
  const std::string bomb = ::testing::TempDir() + "bomb.json.gz";
  ASSERT_EQ(std::system(("head -c 300000000 /dev/zero | gzip -1 > " + bomb).c_str()), 0);
  try {
    read_maybe_gzip(bomb);
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "is larger than 256 MiB (once inflated): not a file read whole");
  }
  std::remove(bomb.c_str());
}

TEST(ChromeTraceReader, ABadEventIsNamedByItsPlace) {
  const std::string path =
      write_temp("bad_event.json", R"({"traceEvents": [{"ph": "M", "name": "x"}, {"ph": "X", "name": "k", "ts": 5}]})");
  try {
    read_all(path);
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.pointer(), "/traceEvents/1");
  }
}

TEST(ChromeTraceReader, TheBadEventsIndexAndTheDistributedFieldAreNamed) {
  const auto pointer = [](const std::string& name, const std::string& text) {
    try {
      read_all(write_temp(name, text));
    } catch (const common::ConfigError& e) {
      return e.pointer();
    }
    return std::string("no error");
  };
  EXPECT_EQ(pointer("rank2.json", R"([{"ph": "M"}, {"ph": "M"}, {"ph": "X", "pid": -3e9, "ts": 1, "dur": 1}])"),
            "/2");
  EXPECT_EQ(pointer("ws.json", R"({"distributedInfo": {"world_size": -5e10}, "traceEvents": []})"),
            "/distributedInfo/world_size");
}

// record_shapes=True puts each CPU op's argument shapes in args["Input Dims"]; PyTorch >= 2.1 names collectives.
TEST(ChromeTraceReader, InputDimsAndCollectiveNameAreRead) {
  const auto ev = read_all(write_temp("dims.json", R"({"traceEvents": [
    {"ph": "X", "cat": "cpu_op", "name": "aten::addmm", "pid": 1, "tid": 2, "ts": 0, "dur": 5,
     "args": {"Input Dims": [[4096], [8, 1024], [1024, 4096], [], []], "Input type": ["float"]}},
    {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 2, "ts": 6, "dur": 5,
     "args": {"Collective name": "allreduce", "Input Dims": [[[2, 3]]]}},
    {"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 1, "tid": 2, "ts": 6, "dur": 5, "args": {"x": [[1]]}}
  ]})"));
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].input_dims, "[[4096],[8,1024],[1024,4096],[],[]]");
  EXPECT_EQ(ev[0].input_type, "float");
  EXPECT_EQ(ev[1].input_dims, "[[[2,3]]]");
  EXPECT_EQ(ev[1].collective, "allreduce");
  EXPECT_EQ(ev[2].input_dims, "");
  EXPECT_EQ(ev[2].index, 2);
}

TEST(ChromeTraceReader, MissingFileAndFolder) {
  EXPECT_THROW(read_all(::testing::TempDir() + "does-not-exist.json"), common::ConfigError);
  try {
    read_all(SIMUMAX_SOURCE_DIR "/engine");
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "is a folder, not a file");
  }
}

TEST(ChromeTraceReader, TruncatedGzipIsAnError) {
  // The first 200 bytes of a real gzip trace: the header is right, the stream ends early.
  std::ifstream in(SIMUMAX_SHARED_DIR "/traces/kineto/train_128gpu_rank0_sampled.json.gz", std::ios::binary);
  std::string head(200, '\0');
  in.read(head.data(), 200);
  const std::string path = ::testing::TempDir() + "truncated.json.gz";
  std::ofstream(path, std::ios::binary) << head;
  try {
    read_all(path);
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(e.message(), "corrupt gzip data: truncated file");
  }
}

}  // namespace
}  // namespace simumax::report
