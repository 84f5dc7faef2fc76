// Fidelity levels and calibration through the CLI (issue #10, docs/accuracy.md).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;

const std::string kB200 = SIMUMAX_SHARED_DIR "/validation/b200/";
const std::string kA100 = SIMUMAX_SHARED_DIR "/validation/a100/";

fs::path scratch(const std::string& name) { return scratch_dir("calibrate", name); }

// platforms/b200_bf16.json with `calibration` set, written into `dir`.
std::string b200_with_calibration(const fs::path& dir, const nlohmann::json& calibration) {
  auto sys = nlohmann::json::parse(read_file("platforms/b200_bf16.json"));
  sys["calibration"] = calibration;
  const fs::path p = dir / "system.json";
  std::ofstream(p) << sys.dump(1);
  return p.string();
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

TEST(Calibration, ShippedForTheMachinesWithPublicRunsAndOverriddenByTheSystemConfig) {
  const fs::path dir = scratch("shipped");
  // platforms/b200_bf16.json has SimuMax's sys_name "b200_bf16_ceperm" and no calibration of its own.
  const auto shipped = summary_of({"run", "scenarios/default.json"}, dir / "shipped");
  EXPECT_EQ(shipped["calibration"]["source"].get<std::string>().rfind("shipped: ", 0), 0u);
  EXPECT_DOUBLE_EQ(shipped["calibration"]["compute_derate"].get<double>(), 0.0515);
  EXPECT_DOUBLE_EQ(shipped["calibration"]["kernel_floor_us"].get<double>(), 12.09);
  // An empty "calibration" is the defaults: no derate, the floor is the "default" bandwidth's latency_us (30).
  const auto own = summary_of({"run", "--model", "models/llama3-70b.json", "--strategy",
                               SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system",
                               b200_with_calibration(dir, nlohmann::json::object())},
                              dir / "own");
  EXPECT_EQ(own["calibration"]["source"], "system config");
  EXPECT_EQ(own["calibration"]["compute_derate"].get<double>(), 0.0);
  EXPECT_EQ(own["calibration"]["kernel_floor_us"].get<double>(), 30.0);
  // The simumax level uses no calibration.
  EXPECT_FALSE(summary_of({"run", "scenarios/default.json", "--fidelity", "simumax"}, dir / "sm").contains("calibration"));
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

TEST(Calibrate, PairsScenariosWithMegatronLogsAndSkipsTheWarmUp) {
  const fs::path dir = scratch("logs");
  std::vector<std::string> args = {"calibrate"};
  const double steady[] = {1500, 1490, 1470};
  for (int i = 0; i < 3; ++i) {
    const fs::path log = dir / ("train" + std::to_string(i) + ".log");
    // The first interval averages over the warm-up; the steady step is the median of the others.
    std::ofstream(log) << " iteration        1/      30 | elapsed time per iteration (ms): 9000.0 |\n"
                       << " iteration        2/      30 | elapsed time per iteration (ms): " << steady[i] << " |\n"
                       << " iteration        3/      30 | elapsed time per iteration (ms): " << steady[i] + 20 << " |\n";
    args.insert(args.end(), {"--log", "scenarios/default.json=" + log.string()});
  }
  args.insert(args.end(), {"--params", "kernel_floor_us", "-o", (dir / "cal.json").string()});
  const auto r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1510.0"), std::string::npos) << r.out;  // median of 1500 and 1520
  EXPECT_NE(r.out.find("1480.0"), std::string::npos) << r.out;
  EXPECT_TRUE(fs::exists(dir / "cal.json"));
}

TEST(Calibrate, RefusesAFitOutsideThePhysicalRangeAndWritesNothing) {
  // Runs "measured" three times slower than any derate explains.
  const fs::path dir = scratch("range_fit");
  std::vector<std::string> args = {"calibrate"};
  for (const char* name : {"llama3_70b_l12_tp8_pp1_dp1_mbc4_cef", "llama3_70b_l12_tp8_pp1_dp1_mbc8_cef"}) {
    auto c = nlohmann::json::parse(read_file(kB200 + name + ".json"));
    c["real_ms"] = c["real_ms"].get<double>() * 3;
    const fs::path p = dir / (std::string(name) + ".json");
    std::ofstream(p) << c.dump();
    args.push_back(p.string());
  }
  args.insert(args.end(), {"--shared", SIMUMAX_SHARED_DIR, "--params", "compute_derate", "--no-leave-out", "-o",
                           (dir / "cal.json").string()});
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the fitted compute_derate lies outside its physical range, so nothing was written"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "cal.json"));
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

// calibrate --trace: the real 8-GPU trace's GEMM shapes into a100's matmul table, every base entry kept
// (engine/calibrate/trace_evidence_test.cpp checks the 2 % reproduction of the real times).
TEST(Calibrate, LearnsGemmEfficienciesFromARealTrace) {
  const fs::path dir = scratch("trace");
  const std::string out = (dir / "a100_from_trace.json").string();
  const auto r = run_cli({"calibrate", "--trace", SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz",
                          "--system", "platforms/a100_pcie.json", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("from 1776 of 1776 GEMM calls; 0 without a shape"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("attention: nothing learnt: the traces have no attention kernel"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("learnt 2 network ops from 60 of 60 NCCL calls"), std::string::npos) << r.out;
  const auto base = nlohmann::json::parse(read_file("platforms/a100_pcie.json"));
  const auto learnt = nlohmann::json::parse(read_file(out));
  const auto& table = learnt["accelerator"]["op"]["matmul"]["accurate_efficient_factor"];
  for (const auto& [key, v] : base["accelerator"]["op"]["matmul"]["accurate_efficient_factor"].items()) {
    EXPECT_EQ(table[key], v) << key;
  }
  EXPECT_GT(table.size(), base["accelerator"]["op"]["matmul"]["accurate_efficient_factor"].size());
  EXPECT_TRUE(table.contains("b=1, m=1024, k=1705, n=512, layout=TN, accumulate=False, out_dtype=fp32"));
  // The all-to-all and all-reduce of its 8 ranks (PCIe tier on this config); the other ops and tiers as they were.
  for (const auto& [net, v] : base["networks"].items()) {
    if (net != "intra_node_pcie_8x") {
      EXPECT_EQ(learnt["networks"][net], v) << net;
    }
  }
  for (const auto& [op, v] : base["networks"]["intra_node_pcie_8x"]["op"].items()) {
    if (op != "all2all" && op != "all_reduce") {
      EXPECT_EQ(learnt["networks"]["intra_node_pcie_8x"]["op"][op], v) << op;
    }
  }
  EXPECT_TRUE(learnt["networks"]["intra_node_pcie_8x"]["op"]["all_reduce"]["fixed_latency_us_by_comm_num"].contains("8"));
  // The written config runs.
  const auto s = summary_of({"run", "--model", "models/llama3-8b.json", "--strategy",
                             SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system", out},
                            dir / "run");
  EXPECT_GT(s["step_time_ms"].get<double>(), 0);
}

// Attention shapes and collectives with their messages (a synthetic PyTorch 2.x trace,
// tests/data/compare/make_calibrate_traces.py) into sdp_fwd / sdp_bwd and the NVLink tier.
TEST(Calibrate, LearnsAttentionAndCollectivesFromATrace) {
  const fs::path dir = scratch("trace_attention");
  const std::string out = (dir / "dgx_learnt.json").string();
  const auto r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_attention_nccl.json", "--system",
                          "platforms/dgx_a100.json", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("learnt 2 attention shapes (1 sdp_fwd, 1 sdp_bwd) from 6 of 6 attention calls"),
            std::string::npos) << r.out;
  EXPECT_NE(r.out.find("learnt 2 network ops from 5 of 5 NCCL calls"), std::string::npos) << r.out;
  const auto learnt = nlohmann::json::parse(read_file(out));
  const std::string key = "batch=2, seq_len=4096, head_num=32, kv_head_num=8, qk_head_dim=128, v_head_dim=128, "
                          "qkv_contiguous=True";
  EXPECT_TRUE(learnt["accelerator"]["op"]["sdp_fwd"]["accurate_efficient_factor"].contains(key));
  EXPECT_TRUE(learnt["accelerator"]["op"]["sdp_bwd"]["accurate_efficient_factor"].contains(key));
  const auto& ar = learnt["networks"]["high_intra_node"]["op"]["all_reduce"];
  EXPECT_NEAR(ar["latency_us"].get<double>(), 20.0 / 6, 0.01);
  EXPECT_EQ(ar["fixed_latency_us_by_comm_num"]["4"], 0.0);
  // Every message size also in measured_collectives, timed back at the megatron fidelity (printed before/after).
  EXPECT_NE(r.out.find("simumax us    error megatron us    error"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("measured_collectives.high_intra_node.all_reduce: group 4: 3 sizes"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("2 network ops and 5 measured_collectives points"), std::string::npos) << r.out;
  EXPECT_EQ(learnt["measured_collectives"]["high_intra_node"]["all_reduce"]["4"].size(), 3u);
  const auto s = summary_of({"run", "--model", "models/llama3-8b.json", "--strategy",
                             SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system", out},
                            dir / "run");
  EXPECT_GT(s["step_time_ms"].get<double>(), 0);
}

// Both kinds of evidence make one config with SimuMax's parameter names: what --trace learnt (the sdp tables, the
// network line, measured_collectives) is kept, key for key, when step times then fit "calibration" on a scenario
// that runs on it. Given together in one run (the scenarios naming the base config), the same bytes are written.
TEST(Calibrate, TraceThenStepTimesWriteOneConfig) {
  const fs::path dir = scratch("trace_then_steps");
  const std::string learnt_path = (dir / "learnt.json").string();
  auto r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_attention_nccl.json", "--system",
                    "platforms/dgx_a100.json", "-o", learnt_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto scenario = nlohmann::json::parse(read_file("scenarios/default.json"));
  scenario["model"] = fs::absolute("models/llama3-70b.json").string();
  scenario["system"] = learnt_path;
  const fs::path scenario_path = dir / "scenario.json";
  std::ofstream(scenario_path) << scenario.dump(1);
  const double sim_ms = summary_of({"run", scenario_path.string()}, dir / "run")["step_time_ms"].get<double>();
  // The same scenario on the base config, for the one-run call.
  scenario["system"] = fs::absolute("platforms/dgx_a100.json").string();
  const fs::path on_base = dir / "on_base.json";
  std::ofstream(on_base) << scenario.dump(1);
  std::vector<std::string> args = {"calibrate"}, one_run = {"calibrate"};
  for (int i = 0; i < 3; ++i) {
    const fs::path log = dir / ("train" + std::to_string(i) + ".log");
    std::ofstream(log) << " iteration        1/      30 | elapsed time per iteration (ms): 9000.0 |\n"
                       << " iteration        2/      30 | elapsed time per iteration (ms): "
                       << sim_ms * (1.04 + 0.01 * i) << " |\n";
    args.insert(args.end(), {"--log", scenario_path.string() + "=" + log.string()});
    one_run.insert(one_run.end(), {"--log", on_base.string() + "=" + log.string()});
  }
  const std::string out = (dir / "one.json").string();
  args.insert(args.end(), {"--params", "compute_derate", "--no-leave-out", "-o", out});
  r = run_cli(args);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  auto one = nlohmann::json::parse(read_file(out));
  EXPECT_TRUE(one["calibration"].contains("compute_derate"));
  one.erase("calibration");
  EXPECT_EQ(one, nlohmann::json::parse(read_file(learnt_path)));
  EXPECT_TRUE(one["measured_collectives"]["high_intra_node"].contains("all_reduce"));
  EXPECT_TRUE(one["networks"]["high_intra_node"]["op"]["all_reduce"].contains("efficient_factor"));
  EXPECT_FALSE(one["accelerator"]["op"]["sdp_fwd"]["accurate_efficient_factor"].empty());

  const std::string together = (dir / "together.json").string();
  one_run.insert(one_run.end(), {"--trace", "tests/data/compare/calibrate_attention_nccl.json", "--system",
                                 "platforms/dgx_a100.json", "--params", "compute_derate", "--no-leave-out", "-o",
                                 together});
  r = run_cli(one_run);
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  EXPECT_TRUE(read_file(together) == read_file(out)) << "the one-run config differs from the two-step one";
  // What each kind of evidence taught, in that order.
  const size_t traces = r.out.find("learnt 2 attention shapes (1 sdp_fwd, 1 sdp_bwd)");
  const size_t steps = r.out.find("fitted on every case");
  ASSERT_NE(traces, std::string::npos) << r.out;
  ASSERT_NE(steps, std::string::npos) << r.out;
  EXPECT_LT(traces, steps);
  EXPECT_NE(r.out.find("compute_derate   "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("2 network ops and 5 measured_collectives points added or replaced from the traces and "
                       "\"calibration\" fitted on 3 step times"),
            std::string::npos) << r.out;
}

// In one run, the step times must be runs on the base config the traces are learnt into: a scenario naming
// another is refused by file and field (exit 2) before any trace is read, and nothing is written.
TEST(Calibrate, TraceAndStepTimesOfAnotherMachineAreRefused) {
  const fs::path dir = scratch("trace_and_steps_bad");
  const fs::path log = dir / "train.log";
  std::ofstream(log) << " iteration        1/      30 | elapsed time per iteration (ms): 9000.0 |\n"
                     << " iteration        2/      30 | elapsed time per iteration (ms): 1500.0 |\n";
  const std::string pair = "scenarios/default.json=" + log.string();
  const auto r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_attention_nccl.json", "--system",
                          "platforms/dgx_a100.json", "--log", pair, "--log", pair, "--log", pair, "-o",
                          (dir / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("scenarios/default.json: /system: is "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("but --system is platforms/dgx_a100.json"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("learnt"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
}

// A trace with nothing to learn (no shapes, no collective; or collectives without a message) says why, exit 2,
// and writes nothing.
TEST(Calibrate, TraceWithNothingToLearnOrNoSystemIsRefused) {
  const fs::path dir = scratch("trace_bad");
  auto r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_no_evidence.json", "--system",
                    "platforms/a100_pcie.json", "-o", (dir / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nothing to learn"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("record_shapes=True"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("collectives: nothing learnt: the traces have no NCCL kernel in a profiled step"),
            std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
  r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_unsized_nccl.json", "--system",
               "platforms/a100_pcie.json", "-o", (dir / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("1 without a message size or group size"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("collectives: nothing learnt: no NCCL call records its message"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("not learnt: 1 call of all_reduce: no message size or group size recorded"),
            std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(dir / "x.json"));
  r = run_cli({"calibrate", "--trace", SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz", "-o",
               (dir / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--trace needs --system BASE.json"), std::string::npos) << r.err;
}

// The host's launch time from a trace (tests/data/compare/make_calibrate_traces.py: 120 launch calls of 7, 8
// and 9 us), then its per-op time fitted on host-bound step times (data/megatron, DGX H100) on top: one config.
TEST(Calibrate, LearnsTheHostFromATraceAndFitsItsOpTimeOnStepTimes) {
  const fs::path dir = scratch("host");
  const std::string learnt = (dir / "h100_launch.json").string();
  auto r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_host_launches.json", "--system",
                    "platforms/dgx_h100.json", "-o", learnt});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("host.launch_us: 8.00 us (the median launch call of 120 kernels in 1 trace)"),
            std::string::npos) << r.out;
  // Its thread is busy 1.48 ms for the 120 launches (kineto_insight_test): 12.3 us per launch in all.
  EXPECT_NE(r.out.find("host thread 100 busy 1.480 of 1.710 ms per step for 120 launches: 12.3 us per launch in all"),
            std::string::npos) << r.out;
  auto sys = nlohmann::json::parse(read_file(learnt));
  EXPECT_EQ(sys["host"], nlohmann::json::parse(R"({"launch_us": 8.0, "op_us": 0.0, "cpu_speed": 1.0})"));
  EXPECT_FALSE(sys.contains("calibration"));
  // Too few launches to learn from: the one-kernel trace teaches nothing, and says why.
  r = run_cli({"calibrate", "--trace", "tests/data/compare/calibrate_no_evidence.json", "--system",
               "platforms/dgx_h100.json", "-o", (dir / "x.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.out.find("host: nothing learnt: 1 kernel launch call in the profiled steps (at least 100 needed)"),
            std::string::npos) << r.out;
  // Step times of host-bound runs: op_us fitted with the launch time the trace measured kept; "host" written.
  const std::string cases = "data/megatron/cases/dgx_h100/";
  const std::string out = (dir / "h100_host.json").string();
  r = run_cli({"calibrate", cases + "gpt3_mcore_te_tp1_pp4_vp1_dev_dgx_h100.json",
               cases + "gpt3_mcore_te_tp2_pp2_cp2_dev_dgx_h100.json",
               cases + "gpt3_mcore_te_tp1_pp1_resume_torch_dist_dist_optimizer_dev_dgx_h100.json", "--trace",
               "tests/data/compare/calibrate_host_launches.json", "--system", "platforms/dgx_h100.json", "--shared",
               ".", "--params", "op_us", "--no-leave-out", "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  sys = nlohmann::json::parse(read_file(out));
  EXPECT_EQ(sys["host"]["launch_us"], 8.0);
  EXPECT_GT(sys["host"]["op_us"].get<double>(), 50);  // these runs are host-bound: 8 us per launch is not enough
  EXPECT_NE(r.out.find("op_us"), std::string::npos) << r.out;
  const auto s = summary_of({"run", "--model", "models/llama3-8b.json", "--strategy",
                             SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system", out},
                            dir / "run");
  EXPECT_GT(s["step_time_ms"].get<double>(), 0);
  EXPECT_EQ(s["host"], sys["host"]);  // summary.json says which host the lane ran with
  // Three host parameters that step times cannot tell apart: refused before any run.
  r = run_cli({"calibrate", cases, "--shared", ".", "--params", "launch_us,op_us,cpu_speed", "-o",
               (dir / "y.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("fit at most two of them"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "y.json"));
}

TEST(Calibration, DerateOutsideItsPhysicalRangeIsAConfigError) {
  const fs::path dir = scratch("range");
  const std::string sys = b200_with_calibration(dir, {{"compute_derate", 0.9}});
  const auto r = run_cli({"run", "--model", "models/llama3-8b.json", "--strategy",
                          SIMUMAX_SHARED_DIR "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system", sys,
                          "-q", "-o", (dir / "o").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(sys + ": /calibration/compute_derate: expected a fraction in [-0.2, 0.5] (a slow-down of "
                             "compute kernels), got 0.9"),
            std::string::npos)
      << r.err;
}

}  // namespace
}  // namespace simumax::tests
