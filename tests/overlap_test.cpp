// Issue #5, must-show 3: on a B200 validation case (llama3-70b, 12 layers, tp1 pp2 dp4, 8 micro-batches),
// Megatron's --overlap-grad-reduce and --overlap-param-gather shrink the exposed data-parallel communication,
// and the written Chrome trace shows the DP buckets on their own lane, running while the same rank computes.
// Each run is its own process (the CLI); docs/overlap.md quotes the numbers.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/report/interval_set.hpp"
#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using report::Interval;

const fs::path kRoot = SIMUMAX_SOURCE_DIR;
const fs::path kCase = kRoot / "scenarios/validation/b200/llama3_70b_l12_tp1_pp2_dp4_mbc8_cef.json";

fs::path temp(const std::string& name) {
  return fs::temp_directory_path() / ("simumax-overlap-" + std::to_string(getpid()) + "-" + name);
}

// The validation case with the overlap keys switched on, written where the run can read it.
fs::path scenario_with(const std::string& name, bool overlap) {
  json s = json::parse(read_file(kCase.string()));
  for (const char* key : {"model", "system"}) {
    s[key] = (kCase.parent_path() / s[key].get<std::string>()).lexically_normal().string();
  }
  s["strategy"]["megatron_overlap_grad_reduce"] = overlap;
  s["strategy"]["megatron_overlap_param_gather"] = overlap;
  const fs::path path = temp(name + ".json");
  std::ofstream(path) << s.dump(1);
  return path;
}

// One rank's slices of the trace, by lane name ("compute", "dp comm", ...).
struct RankLanes {
  std::map<std::string, std::vector<Interval>> by_lane;
  std::map<std::string, int64_t> tid;
};

struct TracedRun {
  double step_ms = 0;
  double pp_ms = 0;  // summary: the pipeline's end (pp_time_with_straggler_ms)
  std::map<int64_t, RankLanes> ranks;  // by pid
};

TracedRun run(const std::string& name, bool overlap) {
  const fs::path out = temp(name), scenario = scenario_with(name, overlap);
  // SimuMax's DP buckets (40 M parameters each), so that the off case has many buckets to overlap; the megatron
  // level reduces a non-overlapped buffer as one bucket.
  const auto r = run_cli({"run", scenario.string(), "--fidelity", "simumax", "--trace", "-q", "-o", out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  TracedRun result;
  const json summary = json::parse(read_file((out / "summary.json").string()));
  result.step_ms = summary["step_time_ms"].get<double>();
  result.pp_ms = summary["pp_time_with_straggler_ms"].get<double>();
  const json trace = json::parse(read_file((out / "trace.json").string()));
  std::map<std::pair<int64_t, int64_t>, std::string> lane;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") lane[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] != "X" || e["dur"].get<double>() <= 0) continue;
    const std::string& name = lane.at({e["pid"], e["tid"]});
    RankLanes& rl = result.ranks[e["pid"].get<int64_t>()];
    rl.by_lane[name].emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
    rl.tid[name] = e["tid"].get<int64_t>();
  }
  fs::remove_all(out);
  fs::remove(scenario);
  return result;
}

struct DpTime {
  double total_ms = 0;
  double exposed_ms = 0;  // DP communication while nothing computes on the rank (compute, recompute, optimizer)
};

DpTime dp_time(const RankLanes& rl) {
  std::vector<Interval> work;
  for (const char* l : {"compute", "recompute", "optimizer"}) {
    if (rl.by_lane.count(l)) work.insert(work.end(), rl.by_lane.at(l).begin(), rl.by_lane.at(l).end());
  }
  const auto dp = report::merge_intervals(rl.by_lane.at("dp comm"));
  const auto busy = report::merge_intervals(work);
  return {report::covered_length(dp) / 1e3, report::uncovered_length(dp, busy) / 1e3};
}

TEST(OverlapB200, DataParallelOverlapHidesMostOfTheDpCommunication) {
  const TracedRun off = run("off", false);
  const TracedRun on = run("on", true);
  ASSERT_EQ(off.ranks.size(), 2u);  // one rank per pipeline stage
  std::printf("[ overlap  ] step %.1f ms -> %.1f ms\n", off.step_ms, on.step_ms);
  EXPECT_LT(on.step_ms, off.step_ms - 30.0);
  for (const auto& [pid, lanes] : off.ranks) {
    const DpTime before = dp_time(lanes), after = dp_time(on.ranks.at(pid));
    std::printf("[ overlap  ] rank %lld: exposed DP %.1f of %.1f ms -> %.1f of %.1f ms\n",
                static_cast<long long>(pid), before.exposed_ms, before.total_ms, after.exposed_ms, after.total_ms);
    EXPECT_NEAR(before.exposed_ms, before.total_ms, 1e-6);  // SimuMax's order: all of it after the pipeline
    EXPECT_GT(before.exposed_ms, 50.0);
    EXPECT_LT(after.exposed_ms, 0.4 * before.exposed_ms);
  }
}

TEST(OverlapB200, TraceShowsDpBucketsOnTheirOwnLaneBesideCompute) {
  const TracedRun on = run("lanes", true);
  for (const auto& [pid, lanes] : on.ranks) {
    ASSERT_TRUE(lanes.tid.count("dp comm") && lanes.tid.count("compute"));
    EXPECT_NE(lanes.tid.at("dp comm"), lanes.tid.at("compute"));
    const auto dp = report::merge_intervals(lanes.by_lane.at("dp comm"));
    const auto compute = report::merge_intervals(lanes.by_lane.at("compute"));
    // DP time that compute covers on the same rank: the buckets run beside the backward / forward.
    const double beside_ms = (report::covered_length(dp) - report::uncovered_length(dp, compute)) / 1e3;
    EXPECT_GT(beside_ms, 20.0) << "rank " << pid;
  }
}

// The pipeline ends with the last compute (not at the flush barrier, which also waits for the DP buckets still in
// flight): the exposed DP tail is not counted as pipeline bubble.
TEST(OverlapB200, PipelineEndsWithTheLastComputeNotTheDpTail) {
  const TracedRun on = run("pp_end", true);
  double compute_end_us = 0, dp_end_us = 0;
  for (const auto& [pid, lanes] : on.ranks) {
    for (const auto& iv : lanes.by_lane.at("compute")) compute_end_us = std::max(compute_end_us, iv.second);
    for (const auto& iv : lanes.by_lane.at("dp comm")) dp_end_us = std::max(dp_end_us, iv.second);
  }
  EXPECT_NEAR(on.pp_ms, compute_end_us / 1e3, 1e-3);
  EXPECT_GT(dp_end_us / 1e3, on.pp_ms + 1.0);  // the buckets' exposed tail comes after it
}

// A MoE step whose expert parameters are sharded over more than one data-parallel replica (edp 2), with both
// overlaps: every bucket's gather sits before any reduction on the DP stream. An expert gather queued behind a
// dense gradient reduction waited for the backward, whose forward waited for that gather (a cycle: exit 3).
TEST(OverlapMoe, ExpertBucketsWithBothOverlapsLeaveNoCycle) {
  json s;
  s["model"] = (kRoot / "models/mixtral-8x7b.json").string();
  s["model_overrides"] = {{"layer_num", 4}};
  s["system"] = (kRoot / "platforms/gb300.json").string();
  s["strategy"] = {{"seq_len", 1024}, {"micro_batch_size", 1}, {"micro_batch_num", 4}, {"world_size", 32},
                   {"tp_size", 1}, {"pp_size", 2}, {"ep_size", 8}, {"etp_size", 1}, {"zero_state", 1},
                   {"megatron_overlap_grad_reduce", true}, {"megatron_overlap_param_gather", true}};
  const fs::path scenario = temp("moe_edp.json"), out = temp("moe_edp");
  std::ofstream(scenario) << s.dump(1);
  const auto r = run_cli({"run", scenario.string(), "--trace", "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string trace = read_file((out / "trace.json").string());
  EXPECT_NE(trace.find("edp.all_gather params (overlapped)"), std::string::npos);
  EXPECT_NE(trace.find("edp.reduce_scatter grads (overlapped)"), std::string::npos);
  fs::remove_all(out);
  fs::remove(scenario);
}

}  // namespace
}  // namespace simumax::tests
