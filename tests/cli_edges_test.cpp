// Issue #14: the fit verdict (table, summary.json, --require-fit) and the command line's rough edges (-o checks,
// --log-level after the command, a scenario's platform under the fast executor, one ${SHARED} rule, validate's
// --json / --csv, the micro-batch search's header). Runs the CLI from the repository root.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include <nlohmann/json.hpp>

#include "engine/common/target.hpp"
#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
const std::string kShared = SIMUMAX_SHARED_DIR;

fs::path temp_dir(const std::string& tag) { return scratch_dir("edges", tag); }

// Llama3-70B at tp1 pp1 dp8 on A100s (issue #14's example): ~580 GiB a GPU.
std::vector<std::string> llama70b_dp8(const fs::path& out) {
  return {"run", "--model", "models/llama3-70b.json", "--strategy",
          kShared + "/simumax-configs/strategy/tp1_pp1_dp8_mbs1.json", "--system", "platforms/a100_pcie.json", "-o",
          out.string()};
}

TEST(FitVerdict, AMisfitIsLoudInTheTableAndTheSummaryAndFailsOnlyWhenAsked) {
  const fs::path d = temp_dir("misfit");
  const auto r = run_cli(llama70b_dp8(d / "a"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of 80 GiB: DOES NOT FIT\nDOES NOT FIT: "), std::string::npos) << r.out;
  const Json s = Json::parse(read_file((d / "a/summary.json").string()));
  EXPECT_FALSE(s.at("fit").at("fits").get<bool>());
  EXPECT_LT(s.at("fit").at("headroom_gib").get<double>(), -400);
  EXPECT_NEAR(s.at("fit").at("headroom_percent").get<double>(), 100 * s.at("fit").at("headroom_gib").get<double>() / 80,
              1e-9);
  EXPECT_FALSE(s.at("stages").at(0).at("fits").get<bool>());
  auto args = llama70b_dp8(d / "b");
  args.push_back("--require-fit");
  const auto strict = run_cli(args);
  EXPECT_EQ(strict.exit_code, 4);
  EXPECT_NE(strict.err.find("does not fit in GPU memory (--require-fit): exit 4"), std::string::npos) << strict.err;
  EXPECT_TRUE(fs::exists(d / "b/summary.json")) << "the files are written all the same";
  fs::remove_all(d);
}

TEST(FitVerdict, AFitShowsItsHeadroomAndAMarginCanTurnItIntoAMisfit) {
  const fs::path d = temp_dir("fit");
  const std::string scenario = "scenarios/examples/llama3-8b_tp1_pp2_dp4_mbs1_a100.json";
  const auto r = run_cli({"run", scenario, "--require-fit", "-o", (d / "a").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of 80 GiB: fits, headroom "), std::string::npos) << r.out;
  const Json s = Json::parse(read_file((d / "a/summary.json").string()));
  EXPECT_TRUE(s.at("fit").at("fits").get<bool>());
  const double headroom = s.at("fit").at("headroom_gib").get<double>();
  EXPECT_NEAR(headroom, 80 - s.at("peak_reserved_bytes_max").get<double>() / (1024.0 * 1024 * 1024), 1e-9);
  for (const auto& st : s.at("stages")) EXPECT_TRUE(st.at("fits").get<bool>());
  const auto tight = run_cli({"run", scenario, "--require-fit", "--memory-margin-gib", std::to_string(headroom + 1),
                              "-o", (d / "b").string()});
  EXPECT_EQ(tight.exit_code, 4) << tight.out;
  EXPECT_NE(tight.out.find("(after a margin of "), std::string::npos) << tight.out;
  fs::remove_all(d);
}

TEST(FitVerdict, TheSystemsMemoryIsPrintedAsTheConfigSaysIt) {
  const fs::path d = temp_dir("memgbs");
  Json sys = Json::parse(read_file("platforms/a100_pcie.json"));
  sys["accelerator"]["mem_gbs"] = 0.08;
  std::ofstream(d / "tiny.json") << sys.dump(2);
  const auto r = run_cli({"run", "--model", "models/llama3-8b.json", "--strategy",
                          kShared + "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--system",
                          (d / "tiny.json").string(), "-o", (d / "out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(" of 0.08 GiB: DOES NOT FIT"), std::string::npos) << r.out;
  EXPECT_DOUBLE_EQ(Json::parse(read_file((d / "out/summary.json").string())).at("gpu_memory_gib").get<double>(), 0.08);
  fs::remove_all(d);
}

TEST(FitVerdict, TheConsoleSaysWhatSimumaxPrints) {
  const fs::path d = temp_dir("console");
  const auto r = run_cli({"run", "scenarios/examples/llama3-8b_tp1_pp2_dp4_mbs1_a100.json", "-o", d.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("(8.03B parameters), dtype bf16, grad_reduce fp32, recompute: No Recompute\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("\nnets       tp "), std::string::npos) << r.out;
  // Qwen3-32B's shapes are not in SimuMax's A100 tables: every missing one is listed, as SimuMax prints its dict.
  const auto q = run_cli({"run", "--model", "models/qwen3-32b.json", "--strategy",
                          kShared + "/simumax-configs/strategy/tp2_pp1_dp4_mbs1.json", "--system",
                          "platforms/a100_pcie.json", "-o", (d / "q").string()});
  ASSERT_EQ(q.exit_code, 0) << q.err;
  const Json s = Json::parse(read_file((d / "q/summary.json").string()));
  ASSERT_GT(s.at("efficiency_table_misses").get<int>(), 0);
  for (const auto& [op, shapes] : s.at("miss_efficiency").items()) {
    for (const auto& shape : shapes) {
      EXPECT_NE(q.out.find("             " + op + ": " + shape.get<std::string>() + "\n"), std::string::npos) << shape;
    }
  }
  fs::remove_all(d);
}

TEST(Cli, LogLevelIsAcceptedAfterTheCommandAndInfoGivesALinePerStage) {
  const fs::path d = temp_dir("log");
  const auto r = run_cli({"run", "scenarios/default.json", "-q", "-o", d.string(), "--log-level", "info"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* stage : {"config: ", "model: ", "cost: ", "graph: ", "executor: ", "memory: ", "report: "}) {
    EXPECT_NE(r.err.find(stage), std::string::npos) << stage << " missing in:\n" << r.err;
  }
  fs::remove_all(d);
}

TEST(Cli, EveryOutputOptionRefusesAFileOrAnUncreatableFolderWithExit2) {
  const fs::path d = temp_dir("out");
  std::ofstream(d / "a_file") << "x";
  const std::string file = (d / "a_file").string(), folder = d.string(), under_file = file + "/sub";
  const std::vector<std::vector<std::string>> cases = {
      {"run", "scenarios/default.json", "-q", "-o", file},
      {"run", "scenarios/default.json", "-q", "-o", under_file},
      {"search", "--model", "models/llama3-70b.json", "--system", "platforms/b200_bf16.json", "--world-size", "8",
       "--global-batch-size", "8", "--seq-len", "4096", "-q", "-o", file},
      {"validate", kShared + "/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json", "--json", folder},
      {"validate", kShared + "/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json", "--csv", under_file + "/v.csv"},
      {"platform", "platforms/b200_bf16.json", "--nodes", "2", "-o", folder},
      {"calibrate", kShared + "/validation/b200", "-o", under_file + "/c.json"},
  };
  for (const auto& args : cases) {
    const auto r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args.back() << ": " << r.err;
    EXPECT_EQ(r.err.rfind("error: ", 0), 0u) << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
  fs::remove_all(d);
}

TEST(Cli, AScenariosPlatformUnderTheFastExecutorIsNoted) {
  const fs::path d = temp_dir("platform");
  const auto r = run_cli({"run", "scenarios/whatif/llama3_70b_tp8_pp2_dp8_fat_tree_4to1.json", "-q", "-o", d.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("note: the scenario names the platform "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("add --executor sim"), std::string::npos) << r.err;
  fs::remove_all(d);
}

// One ${SHARED} rule for run and validate: $SIMUMAX_SHARED_DIR, else ../shared from the current folder.
TEST(Cli, SharedFallsBackToTheSiblingFolderInRunAsInValidate) {
  const fs::path d = temp_dir("shared");
  fs::create_directories(d / "work");
  fs::create_directory_symlink(fs::absolute(kShared), d / "shared");
  const fs::path root = fs::current_path();
  const char* saved = std::getenv("SIMUMAX_SHARED_DIR");
  const std::string restore = saved ? saved : "";
  ::unsetenv("SIMUMAX_SHARED_DIR");
  fs::current_path(d / "work");
  const auto run = run_cli({"run", (root / "scenarios/examples/llama3-8b_tp1_pp2_dp4_mbs1_a100.json").string(), "-q",
                            "-o", "out"});
  const auto validate = run_cli({"validate", "../shared/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json"});
  fs::current_path(d);
  fs::remove(d / "shared");
  const auto missing = run_cli({"run", (root / "scenarios/examples/llama3-8b_tp1_pp2_dp4_mbs1_a100.json").string(),
                                "-q", "-o", "out2"});
  fs::current_path(root);
  if (saved) ::setenv("SIMUMAX_SHARED_DIR", restore.c_str(), 1);
  EXPECT_EQ(run.exit_code, 0) << run.err;
  EXPECT_EQ(validate.exit_code, 0) << validate.err;
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("SIMUMAX_SHARED_DIR is not set and ../shared is not a folder"), std::string::npos)
      << missing.err;
  fs::remove_all(d);
}

TEST(Cli, ValidateWritesJsonAndCsvWithAFitVerdictPerCase) {
  const fs::path d = temp_dir("validate");
  const auto r = run_cli({"validate", kShared + "/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json",
                          kShared + "/validation/a100/a100_llama3_8b_l32_tp2_pp1_dp4_mbc8.json", "--json",
                          (d / "v.json").string(), "--csv", (d / "v.csv").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json v = Json::parse(read_file((d / "v.json").string()));
  ASSERT_EQ(v.at("cases").size(), 2u);
  EXPECT_EQ(v.at("cases_run"), 2);
  for (const auto& c : v.at("cases")) {
    EXPECT_EQ(c.at("status"), "ok");
    EXPECT_TRUE(c.at("fits").is_boolean());
    EXPECT_GT(c.at("ours_ms").get<double>(), 0);
  }
  EXPECT_TRUE(v.at("time_ours_vs_real_mape_pct").is_number());
  const std::string csv = read_file((d / "v.csv").string());
  EXPECT_EQ(csv.rfind("case,status,reason,ours_ms,simumax_ms,real_ms,", 0), 0u) << csv;
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  fs::remove_all(d);
}

// Issue 34: validate says when a row's "fits NO" judges the config and not the GPU the run had, and when its
// errors are in-sample (the shipped calibration was fitted on these runs).
TEST(Cli, ValidateNotesRunsOverTheConfiguredMemoryAndInSampleErrors) {
  const auto r = run_cli({"validate", kShared + "/validation/b200/llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef.json",
                          kShared + "/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("note: 1 real run(s) used more memory than their system config's GPU has "
                       "(llama3_70b_l12_tp1_cp8_pp1_dp1_seq131072_mbc4_cef: 159.65 GiB measured, mem_gbs 80)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: 1 case(s) are runs the shipped calibration of a100_pcie_bf16 was fitted on (in-sample)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("note: 1 case(s) are runs the shipped calibration of b200_bf16_ceperm was fitted on"),
            std::string::npos)
      << r.out;
}

// Issue 34: a SimuMax user reads which model gave the step time (ours printed 5608 ms where SimuMax prints 5.55 s).
TEST(Cli, TheTableSaysWhoseModelTheStepTimeIs) {
  const fs::path d = temp_dir("fidelity");
  const auto ours = run_cli({"run", "scenarios/default.json", "-o", (d / "a").string()});
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  EXPECT_NE(ours.out.find("(fidelity megatron (what Megatron-LM and TE run; SimuMax's own model: --fidelity simumax), "),
            std::string::npos)
      << ours.out;
  const auto theirs = run_cli({"run", "scenarios/default.json", "--fidelity", "simumax", "-o", (d / "b").string()});
  ASSERT_EQ(theirs.exit_code, 0) << theirs.err;
  EXPECT_NE(theirs.out.find("(fidelity simumax (SimuMax v1.2's model), "), std::string::npos) << theirs.out;
  fs::remove_all(d);
}

// Issue 34: --version on both binaries.
TEST(Cli, VersionIsPrinted) {
  const auto r = run_cli({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(r.out, std::regex("simumax-sim [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << r.out;
}

TEST(Cli, TheMicroBatchSearchSaysWhatItRankedBy) {
  const fs::path d = temp_dir("mbs");
  const auto r = run_cli({"search", "--model", "models/llama3-8b.json", "--system", "platforms/a100_pcie.json",
                          "--strategy", kShared + "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json", "--world-size",
                          "8", "--global-batch-size", "32", "--search", "micro-batch", "-o", d.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("ranked by the largest micro-batch size that fits (SimuMax's rule), then step-time"),
            std::string::npos)
      << r.out;
  fs::remove_all(d);
}

// Issue 34: every JSON file we write says what it is and which release wrote it ("schema", "version" first); the
// files in SimuMax's formats keep SimuMax's keys (docs/simumax-outputs.md).
TEST(Cli, EveryJsonWeWriteCarriesItsSchemaAndVersion) {
  const fs::path d = temp_dir("schema");
  const std::string version = run_cli({"--version"}).out.substr(std::string("simumax-sim ").size());
  const auto stamped = [&](const Json& j, const std::string& schema, const std::string& file) {
    ASSERT_TRUE(j.is_object()) << file;
    EXPECT_EQ(j.value("schema", ""), schema) << file;
    EXPECT_EQ(j.value("version", "") + "\n", version) << file;
  };
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "--memory", "--simumax-outputs", "-q", "-o",
                     (d / "run").string()}).exit_code, 0);
  for (const auto& [file, schema] : std::vector<std::pair<std::string, std::string>>{
           {"summary.json", "simumax_sim_summary_v1"}, {"ranks.json", "simumax_sim_ranks_v1"},
           {"memory_timeline.json", "simumax_sim_memory_timeline_v1"},
           {"memory_snapshot.json", "simumax_sim_memory_snapshot_v1"}}) {
    const std::string text = read_file((d / "run" / file).string());
    stamped(Json::parse(text), schema, file);
    EXPECT_EQ(text.find('"'), text.find("\"schema\"")) << file << ": schema is not the first key";
  }
  stamped(Json::parse(read_file((d / "run/trace.json").string()))["otherData"], "simumax_sim_trace_v1", "trace.json");
  // SimuMax's own files stay SimuMax's: its snapshot schema, no key of ours in compute_result.json.
  EXPECT_EQ(Json::parse(read_file((d / "run/simu_memory_snapshot.json").string()))["schema"],
            "simumax_memory_snapshot_v1");
  EXPECT_FALSE(Json::parse(read_file((d / "run/compute_result.json").string())).contains("version"));
  ASSERT_EQ(run_cli({"search", "--model", "models/llama3-8b.json", "--system", "platforms/a100_pcie.json",
                     "--world-size", "8", "--global-batch-size", "32", "--seq-len", "4096", "--tp", "1,2", "-q", "-o",
                     (d / "search").string()}).exit_code, 0);
  stamped(Json::parse(read_file((d / "search/search.json").string())), "simumax_sim_search_v1", "search.json");
  ASSERT_EQ(run_cli({"validate", kShared + "/validation/a100/a100_llama3_8b_l32_tp1_pp2_dp4_mbc8.json", "--json",
                     (d / "validate.json").string()}).exit_code, 0);
  stamped(Json::parse(read_file((d / "validate.json").string())), "simumax_sim_validate_v1", "validate.json");
  ASSERT_EQ(run_cli({"compare", (d / "run").string(), "tests/data/compare/ranks", "-q", "--json",
                     (d / "compare.json").string()}).exit_code, 0);
  stamped(Json::parse(read_file((d / "compare.json").string())), "simumax_sim_compare_v1", "compare.json");
  fs::remove_all(d);
}

// Issue 34: a 283,500-layout search wrote 244 MB of records; --records fit keeps those that fit (auto does so past
// 100,000 candidates, saying so), and search.json says which records it holds.
TEST(Cli, SearchRecordsCanBeLimitedToThoseThatFit) {
  const fs::path d = temp_dir("records");
  const std::vector<std::string> base = {"search", "--model", "models/llama3-70b.json", "--system",
                                         "platforms/b200_bf16.json", "--world-size", "16", "--global-batch-size", "64",
                                         "--seq-len", "4096", "-q", "-o"};
  auto with = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.push_back((d / out).string());
    args.insert(args.end(), extra.begin(), extra.end());
    return run_cli(args);
  };
  ASSERT_EQ(with("all", {}).exit_code, 0);
  ASSERT_EQ(with("fit", {"--records", "fit"}).exit_code, 0);
  const Json all = Json::parse(read_file((d / "all/search.json").string()));
  const Json fit = Json::parse(read_file((d / "fit/search.json").string()));
  EXPECT_EQ(all["records"], "all");
  EXPECT_EQ(all["candidates"].size(), all["evaluated"].get<size_t>() + all["skipped"].get<size_t>() +
                                          all["failed"].get<size_t>());
  EXPECT_EQ(fit["records"], "fit");
  ASSERT_GT(fit["fit"].get<int>(), 0);
  EXPECT_EQ(fit["candidates"].size(), fit["fit"].get<size_t>());
  EXPECT_LT(fit["candidates"].size(), all["candidates"].size());
  for (const auto& c : fit["candidates"]) EXPECT_TRUE(c["fits"].get<bool>()) << c.dump();
  EXPECT_EQ(parse_csv(read_file((d / "fit/search.csv").string())).size(), fit["fit"].get<size_t>() + 1);
  // The counts and the best are the same either way.
  for (const char* key : {"evaluated", "fit", "too_big", "skipped", "best"}) EXPECT_EQ(fit[key], all[key]) << key;
  EXPECT_NE(with("bad", {"--records", "some"}).exit_code, 0);
  fs::remove_all(d);
}

// bench printed "ratio 0.990" for both kinds of target, so a shortfall read like a pass.
TEST(Bench, TheVerdictSaysMetOrMissedForBothKindsOfTarget) {
  EXPECT_NE(common::target_verdict(0.45, 1, true).find("met "), std::string::npos);
  EXPECT_NE(common::target_verdict(1.2, 1, true).find("MISSED"), std::string::npos);
  EXPECT_NE(common::target_verdict(49500, 50000, false).find("MISSED (ratio 0.990, higher is better)"),
            std::string::npos);
  EXPECT_NE(common::target_verdict(55000, 50000, false).find("met "), std::string::npos);
}

// The 16,384-GPU section runs only when named (it takes minutes); its targets are the 20 s and 1.5 GB.
// A 512-GPU scenario stands in for the big one here.
TEST(Bench, TheScaleSectionRunsOnlyWhenNamedAgainstItsOwnTargets) {
  const auto r = run_cli({"bench", "--only", "scale", "--scale-scenario",
                          "scenarios/bench/llama3_70b_512gpu_tp8_pp4_dp16.json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("sim, every rank of 512 GPUs, rail fat-tree"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target <= 20 "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("target <= 1.5 "), std::string::npos) << r.out;
  const auto other = run_cli({"bench", "--only", "sim", "--big-scenario",
                              "scenarios/bench/llama3_70b_512gpu_tp8_pp4_dp16.json"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(other.out.find("rail fat-tree"), std::string::npos) << other.out;
}

}  // namespace
}  // namespace simumax::tests
