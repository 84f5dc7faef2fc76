// The streaming reader on small traces: both file layouts, ids and numbers in the forms writers use, errors.
#include "engine/report/chrome_trace_reader.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
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
    // A complete event is a span of time: compare's breakdown needs its start and a duration in [0, 1e12] us.
    {"NoDuration", R"({"traceEvents": [{"ph": "M", "name": "x"}, {"ph": "X", "name": "k", "ts": 5}]})",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" in [0, 1e12] us"},
    {"NegativeDuration", R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 5, "dur": -3}]})",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" in [0, 1e12] us"},
    {"DurationOfAnAge", R"({"traceEvents": [{"ph": "X", "name": "k", "ts": 5, "dur": 1e300}]})",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" in [0, 1e12] us"},
    {"TimeNotANumber", R"([{"ph": "X", "name": "k", "ts": "soon", "dur": 1}])",
     "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" in [0, 1e12] us"},
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

// Everything a reader delivers, as text: each event's fields in order, then the info or the refusal.
std::string transcript(const std::string& path, bool nlohmann_only) {
  std::ostringstream out;
  out.precision(17);
  const auto on_event = [&](const ChromeEvent& e) {
    out << e.index << '|' << e.ph << '|' << e.cat << '|' << e.name << '|' << e.pid << e.pid_numeric << '|' << e.tid
        << e.tid_numeric << '|' << e.ts_us << '|' << e.dur_us << '|' << e.correlation << '|' << e.stream << '|'
        << e.arg_name << '|' << e.collective << '|' << e.input_dims << '|' << e.input_type << '|' << e.flops << '|'
        << e.shape_key << '|' << e.arg_pass << '|' << e.arg_bytes << '|' << e.in_nelems << '|' << e.out_nelems
        << '|' << e.group_size << '|' << e.msg_dtype << '\n';
  };
  try {
    const ChromeTraceInfo i = nlohmann_only ? read_chrome_trace_with_nlohmann(path, on_event)
                                            : read_chrome_trace(path, on_event);
    out << "ok " << i.events << ' ' << i.rank.value_or(-1) << ' ' << i.world_size.value_or(-1) << '\n';
  } catch (const common::ConfigError& e) {
    out << "refused " << e.what() << '\n';
  }
  return out.str();
}

// The fast reader against nlohmann's alone: the same events, the same info, the same refusals with the same
// messages, on every input the Kineto fuzzer kept (840, most of them broken), the test traces and a real one.
TEST(ChromeTraceReader, FastReaderDeliversAndRefusesExactlyAsNlohmann) {
  std::vector<std::string> files;
  for (const char* dir : {SIMUMAX_SOURCE_DIR "/fuzz/corpus/kineto", SIMUMAX_SOURCE_DIR "/tests/data/compare"}) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
      const std::string p = entry.path().string();
      if (entry.is_regular_file() && (entry.path().parent_path().filename() == "kineto" || p.ends_with(".json"))) {
        files.push_back(p);
      }
    }
  }
  // One real trace (the small one: every test that reads the others compares their results too).
  files.push_back(SIMUMAX_SHARED_DIR "/traces/kineto/train_128gpu_rank0_sampled.json.gz");
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 800u);
  int refused = 0;
  for (const auto& f : files) {
    SCOPED_TRACE(f);
    const std::string fast = transcript(f, false), slow = transcript(f, true);
    EXPECT_EQ(fast, slow);
    refused += slow.find("\nrefused ") != std::string::npos || slow.starts_with("refused ");
  }
  EXPECT_GT(refused, 100);  // the corpus is mostly broken input: the refusals were compared, not just the events
}

// Valid JSON the fast reader leaves to nlohmann (a number of 70 digits, a byte-order mark) after it delivered
// events: each event comes once, in order.
TEST(ChromeTraceReader, AHandOverToNlohmannDeliversEachEventOnce) {
  const std::string long_number = "1" + std::string(69, '0');
  for (const std::string& lead : {std::string(), std::string("\xEF\xBB\xBF")}) {
    const std::string path = write_temp("handover.json", lead + R"({"traceEvents": [
      {"ph": "X", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 1},
      {"ph": "X", "name": "b", "pid": 1, "tid": 1, "ts": 2, "dur": 1, "args": {"big": )" + long_number + R"(}},
      {"ph": "X", "name": "c", "pid": 1, "tid": 1, "ts": 3, "dur": 1}]})");
    std::vector<std::string> names;
    read_chrome_trace(path, [&](const ChromeEvent& e) { names.push_back(e.name); });
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c"}));
    EXPECT_EQ(transcript(path, false), transcript(path, true));
  }
}

// Mutations of a trace with escapes, UTF-8, numbers of every form and nesting (bytes flipped, inserted, cut),
// deterministic: the fast reader and nlohmann's agree on every one.
TEST(ChromeTraceReader, MutatedTracesReadAsNlohmannReadsThem) {
  const std::string seed = R"({"distributedInfo": {"rank": 3, "world_size": 8}, "traceEvents": [
 {"ph": "X", "cat": "kernel", "name": "k\u00e9\ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t", "pid": 0, "tid": 7,
  "ts": 1.5e3, "dur": -0.0e-2, "args": {"correlation": 18446744073709551615, "stream": -9223372036854775808,
  "Input Dims": [[1, 2.0, 3.5], [], [[4]]], "Input type": ["c10::BFloat16", 1], "x": [true, false, null, {}, []],
  "In msg nelems": 12, "Group size": 4.0, "dtype": "Float"}},
 {"ph": "X", "name": "\u00e9t\u00e9 ê 日本", "pid": "12", "tid": 1e2, "ts": 0, "dur": 0.000001, "args": {"name": ""}},
 {"ph": "M", "name": "thread_name", "pid": 1, "tid": 2, "args": {"name": "s"}}
]})";
  uint64_t state = 12345;
  const auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<size_t>(state >> 33);
  };
  const char specials[] = {'"', '\\', '{', '}', '[', ']', ',', ':', '0', '9', '-', '.', 'e', 'u', ' ', '\n', '\x01',
                           '\x7f', '\x80', '\xc3', '\xed', '\xf4', '\xff'};
  const std::string path = ::testing::TempDir() + "mutated.json";
  int accepted = 0;
  for (int i = 0; i < 600; ++i) {
    std::string t = seed;
    for (size_t m = 0, n = 1 + next() % 3; m < n && !t.empty(); ++m) {
      const size_t at = next() % t.size();
      switch (next() % 4) {
        case 0: t[at] = specials[next() % sizeof specials]; break;
        case 1: t.insert(at, 1, specials[next() % sizeof specials]); break;
        case 2: t.erase(at, 1 + next() % 4); break;
        default: t.resize(at); break;
      }
    }
    std::ofstream(path, std::ios::binary) << t;
    const std::string slow = transcript(path, true);
    ASSERT_EQ(transcript(path, false), slow) << "mutation " << i << ":\n" << t;
    accepted += slow.find("refused ") == std::string::npos;
  }
  EXPECT_GT(accepted, 20);
  EXPECT_LT(accepted, 580);
}

}  // namespace
}  // namespace simumax::report
