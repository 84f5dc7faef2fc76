// `run --trace` through the CLI: a 64-rank trace passes a strict Trace Event Format check with both
// executors and ends at the reported step time; the default traces one rank per stage; SimuMax's layout; the
// size guard and bad rank lists are refused with exit code 2.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/trace_event_check.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRoot = SIMUMAX_SOURCE_DIR;
const std::string k64Ranks = (kRoot / "tests/data/trace/llama3_8b_64gpu.json").string();

fs::path out_dir(const std::string& name) {
  return fs::temp_directory_path() / ("simumax-trace-" + name + "-" + std::to_string(getpid()));
}

json read_json(const fs::path& p) { return json::parse(read_file(p.string())); }

void expect_same_time(double got_us, double step_ms) {
  EXPECT_LE(std::abs(got_us - step_ms * 1000), 1e-6 * step_ms * 1000) << got_us << " us vs " << step_ms << " ms";
}

class Trace64 : public ::testing::TestWithParam<std::string> {};

TEST_P(Trace64, EveryRankPassesAStrictTraceEventFormatCheck) {
  const fs::path out = out_dir("strict-" + GetParam());
  const auto r = run_cli({"run", k64Ranks, "--ranks", "all", "--granularity", "op", "--executor", GetParam(),
                          "--trace", "--trace-ranks", "all", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json trace = read_json(out / "trace.json");
  const json summary = read_json(out / "summary.json");
  const TraceFacts facts = check_trace_event_format(trace);
  for (const auto& e : facts.errors) ADD_FAILURE() << e;
  EXPECT_EQ(facts.processes, 64u);
  EXPECT_GT(facts.flows, 0u);
  EXPECT_GT(facts.counters, 0u);
  expect_same_time(facts.last_end_us, summary["step_time_ms"].get<double>());
  expect_same_time(trace["otherData"]["step_time_us"].get<double>(), summary["step_time_ms"].get<double>());
  EXPECT_EQ(trace["otherData"]["traced_ranks"].size(), 64u);
  // Op granularity carries the model's facts: FLOPs, bytes, shape keys and table hits on GEMMs.
  bool gemm_with_key = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && e["args"].contains("shape_key") && e["args"].contains("table_hit") &&
        e["args"].contains("flops") && e["args"].contains("op")) {
      gemm_with_key = true;
      break;
    }
  }
  EXPECT_TRUE(gemm_with_key);
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Executors, Trace64, ::testing::Values("fast", "sim"));

TEST(Trace, DefaultTracesOneRankPerStageAndEndsAtTheStepTime) {
  const fs::path out = out_dir("stages");
  const auto r = run_cli({"run", k64Ranks, "--ranks", "all", "--executor", "sim", "--trace", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json trace = read_json(out / "trace.json");
  const TraceFacts facts = check_trace_event_format(trace);
  for (const auto& e : facts.errors) ADD_FAILURE() << e;
  EXPECT_EQ(facts.processes, 4u);  // pp = 4
  expect_same_time(facts.last_end_us, read_json(out / "summary.json")["step_time_ms"].get<double>());
  fs::remove_all(out);
}

TEST(Trace, SimumaxLayoutIsABareListWithSimumaxLanes) {
  const fs::path out = out_dir("simumax");
  const auto r = run_cli({"run", k64Ranks, "--granularity", "op", "--trace", "--trace-format", "simumax", "-q", "-o",
                          out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(out / "trace.json"));
  const json events = read_json(out / "tracing_logs.json");
  ASSERT_TRUE(events.is_array());
  const std::regex pid_re("rank[0-9]+");
  const std::set<std::string> lanes = {"02_fwd_compute", "03_bwd_compute", "07_pp_detail_0", "08_comm"};
  size_t slices = 0, mem = 0, pairs = 0;
  for (const auto& e : events) {
    ASSERT_TRUE(e["pid"].is_string() && std::regex_match(e["pid"].get<std::string>(), pid_re)) << e.dump();
    if (e["ph"] == "X") {
      ++slices;
      EXPECT_TRUE(lanes.count(e["tid"].get<std::string>())) << e.dump();
      EXPECT_TRUE(e["args"]["call_stack"].is_array()) << e.dump();
      EXPECT_TRUE(e["args"].contains("direction") && e["args"].contains("gid")) << e.dump();
    }
    if (e["ph"] == "C") mem += e["name"] == "mem" && e["args"].contains("cached_bytes");
    if (e["ph"] == "s") pairs += e["cat"] == "comm_pair";
  }
  EXPECT_GT(slices, 0u);
  EXPECT_GT(mem, 0u);
  EXPECT_GT(pairs, 0u);
  fs::remove_all(out);
}

// args.pass names the task's schedule::Pass: B and W tasks (ZB-H1 splits every backward) are "backward", the replay
// of a recomputed op "recompute", and the step's end (DP, optimizer, barrier) "step".
TEST(Trace, PassOfEverySliceFollowsItsTask) {
  const fs::path out = out_dir("passes");
  fs::create_directories(out);
  json scenario = read_json(k64Ranks);
  for (const char* key : {"model", "system"}) {  // relative to the scenario's folder, which this copy leaves
    scenario[key] = (fs::path(k64Ranks).parent_path() / scenario[key].get<std::string>()).lexically_normal().string();
  }
  scenario["strategy"]["pipeline_schedule"] = "zb-h1";
  scenario["strategy"]["recompute_granularity"] = "full_block";
  scenario["strategy"]["recompute_layer_num"] = 1;
  const std::string file = (out / "zb_h1_recompute.json").string();
  std::ofstream(file) << scenario.dump();
  const auto r = run_cli({"run", file, "--granularity", "op", "--trace", "-q", "-o", (out / "run").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, size_t> seen;  // pass -> slices
  size_t wgrad = 0;
  const json trace = read_json(out / "run/trace.json");
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    const std::string cat = e["args"]["kind"], name = e["name"], pass = e["args"]["pass"];
    ++seen[pass];
    const bool step_end = cat == "dp_comm" || cat == "optimizer" || cat == "barrier";
    EXPECT_EQ(pass == "step", step_end) << e.dump();
    if (cat == "recompute") {
      EXPECT_EQ(pass, "recompute") << e.dump();
    }
    if (cat != "compute") continue;
    const bool fwd = name.ends_with(".fwd");
    EXPECT_TRUE(fwd || name.ends_with(".dgrad") || name.ends_with(".wgrad")) << e.dump();
    EXPECT_EQ(pass, fwd ? "forward" : "backward") << e.dump();
    wgrad += name.ends_with(".wgrad");
  }
  EXPECT_GT(wgrad, 0u);
  for (const char* pass : {"forward", "backward", "recompute", "step"}) EXPECT_GT(seen[pass], 0u) << pass;
  EXPECT_EQ(seen.size(), 4u);
  fs::remove_all(out);
}

// Issue 34: the trace is shaped as PyTorch's Kineto traces, against Holistic Trace Analysis's documented schema
// (HTA v0.2+, hta/configs/parser_config.py, hta/common/trace_file.py, hta/common/types.py): every event has
// ts, dur, name, cat, pid, tid; GPU work is cat "kernel" with integer args.device and args.stream; collectives
// match HTA's communication pattern ^nccl, compute kernels do not; the file's rank is found by HTA's scan
// ("rank":\s+N, first match) in distributedInfo, with the world size; deviceProperties names the GPU.
TEST(Trace, IsKinetoShapedAsHolisticTraceAnalysisReadsIt) {
  const fs::path out = out_dir("kineto");
  const auto r = run_cli({"run", k64Ranks, "--ranks", "all", "--granularity", "op", "--trace", "--trace-ranks", "11",
                          "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string text = read_file((out / "trace.json").string());
  std::smatch m;
  ASSERT_TRUE(std::regex_search(text, m, std::regex("\"rank\":\\s+(\\d+)")));
  EXPECT_EQ(m[1], "11");
  const json trace = json::parse(text);
  const json summary = read_json(out / "summary.json");
  EXPECT_EQ(trace["schemaVersion"], 1);
  EXPECT_EQ(trace["distributedInfo"], json::parse(R"({"backend": "nccl", "rank": 11, "world_size": 64})"));
  ASSERT_EQ(trace["deviceProperties"].size(), 1u);
  EXPECT_EQ(trace["deviceProperties"][0]["id"], 3);  // rank 11 is GPU 3 of its 8-GPU node
  EXPECT_GT(trace["deviceProperties"][0]["totalGlobalMem"].get<double>(), 1e10);
  const std::regex hta_comm("(^nccl.*)|(^hip)|(^hccl)|(.*ncclKernel.*)");
  std::map<std::string, size_t> by_cat;
  size_t comm = 0, compute = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X") continue;
    for (const char* key : {"ts", "dur", "name", "cat", "pid", "tid"}) ASSERT_TRUE(e.contains(key)) << key << e.dump();
    const std::string cat = e["cat"], kind = e["args"]["kind"], name = e["name"];
    ++by_cat[cat];
    EXPECT_EQ(e["pid"], 11) << e.dump();
    if (cat != "kernel") {
      EXPECT_TRUE(cat == "cpu_op" ? kind == "host" : cat == "gpu_user_annotation" && kind == "barrier") << e.dump();
      continue;
    }
    ASSERT_TRUE(e["args"]["device"].is_number_integer() && e["args"]["stream"].is_number_integer()) << e.dump();
    EXPECT_EQ(e["args"]["device"], 3) << e.dump();
    EXPECT_EQ(e["args"]["stream"], e["tid"]) << e.dump();
    const bool collective = kind.ends_with("_comm");
    EXPECT_EQ(std::regex_match(name, hta_comm), collective) << e.dump();
    comm += collective;
    compute += kind == "compute";
  }
  EXPECT_GT(comm, 0u);
  EXPECT_GT(compute, 0u);
  EXPECT_GT(by_cat["kernel"], 100u);
  for (const auto& [cat, n] : by_cat) {
    EXPECT_TRUE(cat == "kernel" || cat == "cpu_op" || cat == "gpu_user_annotation") << cat << ": " << n;
  }
  // Still a strict Trace Event Format file, within the step (rank 11 is not the last to end).
  const TraceFacts facts = check_trace_event_format(trace);
  for (const auto& e : facts.errors) ADD_FAILURE() << e;
  EXPECT_LE(facts.last_end_us, summary["step_time_ms"].get<double>() * 1000 * (1 + 1e-9));
  fs::remove_all(out);
}

TEST(Trace, SizeGuardRefusesWithExitCode2AndSaysHowToGetThrough) {
  const fs::path out = out_dir("guard");
  const auto r = run_cli({"run", k64Ranks, "--ranks", "all", "--trace", "--trace-ranks", "all", "--trace-max-mb",
                          "0.5", "-q", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^error: trace\\.json would be about [0-9]+ MiB \\([0-9]+ events "
                                                  "over 64 ranks\\), over the limit of 0\\.5 MiB; raise the limit "
                                                  "with --trace-max-mb [0-9]+, or trace fewer ranks with "
                                                  "--trace-ranks")))
      << r.err;
  EXPECT_FALSE(fs::exists(out / "trace.json"));
  EXPECT_FALSE(fs::exists(out / "summary.json"));  // a refused run writes nothing (issue 32)
  fs::remove_all(out);
}

TEST(Trace, OutputGuardRefusesTraceAndMemoryFilesTogetherBeforeWritingThem) {
  const fs::path out = out_dir("output-guard");
  const auto r = run_cli({"run", k64Ranks, "--ranks", "all", "--trace", "--memory", "--trace-ranks", "all",
                          "--max-output-mb", "1", "-q", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(std::regex_search(r.err, std::regex("^error: the output files would be about [0-9]+ MiB \\(memory files "
                                                  "[0-9]+ MiB, trace [0-9]+ MiB\\), over the limit of 1 MiB; raise it "
                                                  "with --max-output-mb [0-9]+, or write fewer ranks with "
                                                  "--trace-ranks\n$")))
      << r.err;
  for (const char* f : {"trace.json", "memory_timeline.json", "memory_snapshot.json", "memory_snapshot.pickle"}) {
    EXPECT_FALSE(fs::exists(out / f)) << f;
  }
  EXPECT_FALSE(fs::exists(out / "summary.json"));  // a refused run writes nothing (issue 32)
  fs::remove_all(out);
}

TEST(Trace, AllRanksWithoutRanksAllSaysWhatItTraces) {
  const fs::path out = out_dir("all-of-stages");
  const auto r = run_cli({"run", k64Ranks, "--trace", "--trace-ranks", "all", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("--trace-ranks all: this run simulates 4 of the 64 ranks (one per pipeline stage) and writes "
                       "those; add --ranks all to simulate and write every rank"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(read_json(out / "trace.json")["otherData"]["traced_ranks"], json::parse("[0,16,32,48]"));
  fs::remove_all(out);
}

TEST(Trace, RanksThatAreNotSimulatedOrMalformedAreRefused) {
  const fs::path out = out_dir("ranks");
  auto r = run_cli({"run", k64Ranks, "--trace", "--trace-ranks", "0,5", "-q", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: --trace-ranks: rank 5 is not simulated in this run (simulated ranks: 0, 16, 32, 48); --ranks all "
            "simulates every rank\n");
  r = run_cli({"run", k64Ranks, "--trace", "--trace-ranks", "0,8-x", "-q", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: --trace-ranks: '8-x' is not a rank or a range of ranks; expected all, stages, or a list like "
            "0,8,16-23\n");
  r = run_cli({"run", k64Ranks, "--ranks", "all", "--trace", "--trace-ranks", "16-17,0", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_json(out / "trace.json")["otherData"]["traced_ranks"], json::parse("[0,16,17]"));
  fs::remove_all(out);
}

}  // namespace
}  // namespace simumax::tests
