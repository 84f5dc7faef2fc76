// ranks.json (issue #16, item 2): per-rank statistics of every simulated rank, folded as the tasks end. The fast
// and sim executors agree on an uncontended step; a rank's exposed communication is the trace view's (compare's
// definition) on a traced rank; `--ranks stages` gives one row per stage equal to that rank's row of
// `--ranks all`; the file is deterministic; the streamed memory replay gives analyze_memory's peaks.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/config/scenario.hpp"
#include "engine/report/report_views.hpp"
#include "engine/simulate.hpp"
#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

const fs::path kRoot = SIMUMAX_SOURCE_DIR;
// pp2 dp4 with Megatron's DP overlap: DP buckets run beside compute, so exposed < comm on every rank.
const fs::path kOverlap = kRoot / "scenarios/examples/llama3-70b_l12_tp1_pp2_dp4_mbc8_dp_overlap_b200.json";
// pp2 dp4 without overlap: no link carries flows of two tasks at once, so sim equals fast (sim_executor.hpp).
// (On kOverlap the DP buckets and the pipeline sends share NVLink: sim's ranks end 14 µs later.)
const fs::path kPlain = kRoot / "scenarios/examples/llama3-8b_tp1_pp2_dp4_mbs1_a100.json";

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("simumax-ranks-" + std::to_string(getpid()) + "-" + name);
}

json run_ranks(const std::string& name, std::vector<std::string> extra, const fs::path& scenario = kOverlap) {
  const fs::path out = temp(name);
  std::vector<std::string> args = {"run", scenario.string(), "-q", "-o", out.string()};
  args.insert(args.end(), extra.begin(), extra.end());
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json j = json::parse(read_file((out / "ranks.json").string()));
  j["_text"] = read_file((out / "ranks.json").string());
  j["_dir"] = out.string();
  return j;
}

const char* const kTimes[] = {"end_ms", "late_ms", "compute_ms", "comm_ms", "exposed_comm_ms", "tp_comm_ms",
                              "dp_comm_ms", "dp_exposed_ms", "pp_comm_ms", "pp_exposed_ms"};

void expect_rows_near(const json& a, const json& b, double rel) {
  for (const char* k : kTimes) {
    const double x = a[k].get<double>(), y = b[k].get<double>();
    EXPECT_NEAR(x, y, rel * std::max(1.0, std::abs(y))) << k << " of rank " << a["rank"];
  }
  EXPECT_EQ(a["peak_allocated_bytes"], b["peak_allocated_bytes"]);
}

TEST(RankStats, FastAndSimAgreeOnEveryRankOfAnUncontendedStep) {
  const json fast = run_ranks("fast", {"--ranks", "all"}, kPlain);
  const json sim = run_ranks("sim", {"--ranks", "all", "--executor", "sim"}, kPlain);
  ASSERT_EQ(fast["ranks"].size(), 8u);
  ASSERT_EQ(sim["ranks"].size(), 8u);
  for (size_t i = 0; i < 8; ++i) {
    EXPECT_EQ(fast["ranks"][i]["rank"], i);
    expect_rows_near(sim["ranks"][i], fast["ranks"][i], 1e-9);
    EXPECT_GT(fast["ranks"][i]["dp_comm_ms"].get<double>(), 0);
  }
  EXPECT_EQ(fast["executor"], "fast");
  EXPECT_EQ(sim["executor"], "sim");
  // Deterministic: a second run writes the same bytes.
  const json again = run_ranks("fast2", {"--ranks", "all"}, kPlain);
  EXPECT_EQ(again["_text"], fast["_text"]);
  for (const json* j : {&fast, &sim, &again}) fs::remove_all((*j)["_dir"].get<std::string>());
}

TEST(RankStats, StagesGiveOneRowPerStageEqualToThatRanksRowOfAll) {
  const json all = run_ranks("all", {"--ranks", "all"});
  const json stages = run_ranks("stages", {});
  EXPECT_EQ(stages["rank_scope"], "stages");
  ASSERT_EQ(stages["ranks"].size(), 2u);
  for (const json& row : stages["ranks"]) {
    const json& same = all["ranks"][row["rank"].get<size_t>()];
    EXPECT_EQ(row["stage"], same["stage"]);
    expect_rows_near(row, same, 1e-12);
  }
  for (const json* j : {&all, &stages}) fs::remove_all((*j)["_dir"].get<std::string>());
}

// compare's definition on the written trace: the trace view's per-rank comm and exposed comm (report_trace_view.cpp,
// the union of comm slices and the part with no compute slice), from slices rounded to 1 ns.
TEST(RankStats, ExposedCommunicationIsTheTraceViewsOnEveryTracedRank) {
  const json sim = run_ranks("traced", {"--ranks", "all", "--executor", "sim", "--trace", "--trace-ranks", "0,5"});
  const fs::path trace = fs::path(sim["_dir"].get<std::string>()) / "trace.json";
  const json view = report::html::trace_view(trace.string(), 1000000)["comm"];
  ASSERT_EQ(view["rank"].size(), 2u);
  for (size_t i = 0; i < view["rank"].size(); ++i) {
    const json& row = sim["ranks"][view["rank"][i].get<size_t>()];
    SCOPED_TRACE(row["rank"].dump());
    // 1 ns per slice of rounding in the trace: well under 1 µs over a step's few hundred comm slices.
    EXPECT_NEAR(row["comm_ms"].get<double>() * 1e3, view["comm_us"][i].get<double>(), 1.0);
    EXPECT_NEAR(row["exposed_comm_ms"].get<double>() * 1e3, view["exposed_us"][i].get<double>(), 1.0);
    EXPECT_GT(row["comm_ms"].get<double>() - row["exposed_comm_ms"].get<double>(), 1.0);  // overlap is seen
  }
  fs::remove_all(sim["_dir"].get<std::string>());
}

// simulate() folds memory as the tasks end (MemoryStream); run_step replays the timeline (analyze_memory).
TEST(RankStats, StreamedMemoryGivesAnalyzeMemorysPeaksOnExamples) {
  for (const char* name : {"llama3-70b_l12_tp1_pp2_dp4_mbc8_dp_overlap_b200.json",
                           "llama3-8b_tp1_pp4_vp2_sync_mbs1_mbc8_no_ckpt_a100.json",
                           "deepseekv2_ep4_pp2_dp4_mbs1_full_recompute_a100.json"}) {
    SCOPED_TRACE(name);
    const config::Scenario s = config::load_scenario((kRoot / "scenarios/examples" / name).string());
    RunOptions o;
    o.lowering.scope = graph::RankScope::kAll;
    const RunResult folded = simulate(s, o);
    const StepRun replayed = run_step(s, o);
    ASSERT_EQ(folded.memory.size(), replayed.memory.size());
    for (size_t r = 0; r < folded.memory.size(); ++r) {
      EXPECT_EQ(folded.memory[r].peak_allocated_bytes, replayed.memory[r].peak_allocated_bytes);
      EXPECT_EQ(folded.memory[r].peak_task, replayed.memory[r].peak_task);
      EXPECT_EQ(folded.memory[r].activation_bytes_at_peak, replayed.memory[r].activation_bytes_at_peak);
      EXPECT_EQ(folded.memory[r].max_live_activation_bytes, replayed.memory[r].max_live_activation_bytes);
    }
    EXPECT_EQ(folded.timing.makespan_s, replayed.timeline.makespan);
  }
}

}  // namespace
}  // namespace simumax::tests
