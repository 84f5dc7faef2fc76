// `simumax-sim sweep` (issue #16, docs/sweep.md) without a Slurm cluster: the local run, its bad input, sbatch
// missing, rejecting or hanging (a stand-in script), and --merge of shards run by hand as array tasks would.
// tests/sweep_slurm_test.sh does the same through a real one-node Slurm.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/report_page.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;

const std::string kWhatif = "tests/data/sweep/whatif.json";
const std::string kThousand = "tests/data/sweep/thousand.json";

fs::path scratch(const std::string& name) { return scratch_dir("sweep", name); }

std::string write(const fs::path& path, const std::string& text) {
  std::ofstream(path) << text;
  return path.string();
}

// A stand-in for sbatch: a shell script with this body.
std::string fake_sbatch(const fs::path& dir, const std::string& body) {
  const std::string path = write(dir / "sbatch", "#!/bin/sh\n" + body + "\n");
  fs::permissions(path, fs::perms::owner_all);
  return path;
}


size_t count_lines(const std::string& text) { return static_cast<size_t>(std::count(text.begin(), text.end(), '\n')); }

TEST(Sweep, LocalRunWritesOneRowPerCaseInCaseOrderWhateverTheJobs) {
  const fs::path dir = scratch("local");
  const auto one = run_cli({"sweep", kWhatif, "-j", "1", "-o", (dir / "j1").string()});
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_NE(one.out.find("12 cases: 8 ok, 4 invalid, 0 failed"), std::string::npos) << one.out;
  const auto two = run_cli({"sweep", kWhatif, "-j", "2", "-q", "-o", (dir / "j2").string()});
  ASSERT_EQ(two.exit_code, 0) << two.err;
  const std::string csv = read_file((dir / "j1/sweep.csv").string());
  EXPECT_EQ(csv, read_file((dir / "j2/sweep.csv").string()));
  EXPECT_EQ(read_file((dir / "j1/sweep.json").string()), read_file((dir / "j2/sweep.json").string()));
  ASSERT_EQ(count_lines(csv), 13u);
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "index,name,label,system.networks.inter_node.bandwidth.gbps,strategy.tp_size,platform,status,error,"
            "executor,step_time_ms,mfu,tokens_per_s,peak_reserved_gib,peak_alloc_gib,fits,headroom_gib,straggler_late_ms,"
            "straggler_rank,max_exposed_comm_ms");
  // The first key varies slowest, the platforms fastest; an illegal combination is a row, not a stop.
  EXPECT_NE(csv.find("\n1,c0001,gbps=12.5 tp_size=1 platform=fat-tree-4to1,12.5,1,fat-tree-4to1,ok,,sim,"),
            std::string::npos);
  EXPECT_NE(csv.find("\n4,c0004,gbps=12.5 tp_size=3 platform=single-switch,12.5,3,single-switch,invalid,"),
            std::string::npos);
  EXPECT_NE(csv.find("case c0004 (gbps=12.5 tp_size=3 platform=single-switch): 32 is not a multiple of tp_size"),
            std::string::npos);
  // Each case kept its folder; a generated platform is there.
  EXPECT_TRUE(fs::exists(dir / "j1/cases/c0001/summary.json"));
  EXPECT_TRUE(fs::exists(dir / "j1/cases/c0001/platform.xml"));
  EXPECT_TRUE(fs::exists(dir / "j1/cases/c0004/outcome.txt"));
}

TEST(Sweep, IbBandwidthChangesTheStepTimeOfEveryRankOnSimGrid) {
  const fs::path dir = scratch("ib");
  ASSERT_EQ(run_cli({"sweep", kWhatif, "-q", "-o", dir.string()}).exit_code, 0);
  const std::string json = read_file((dir / "sweep.json").string());
  auto step_of = [&](const std::string& name) {
    const size_t at = json.find("\"step_time_ms\"", json.find("\"name\": \"" + name + "\""));
    return std::stod(json.substr(json.find(':', at) + 1));
  };
  EXPECT_GT(step_of("c0000"), 2 * step_of("c0006"));  // 12.5 vs 50 Gb/s per node, tp 1
}

// A case is `run` of the same scenario: the same summary.json but for its name, on the base scenario's own platform.
TEST(Sweep, ACaseIsWhatRunGivesOnTheBasesOwnPlatform) {
  const fs::path dir = scratch("as_run");
  const std::string base = fs::absolute("scenarios/whatif/llama3_70b_tp8_pp2_dp8_fat_tree_4to1.json").string();
  const std::string file =
      write(dir / "sweep.json", "{\"base\": \"" + base + "\", \"run\": {\"executor\": \"sim\", \"ranks\": \"all\"}}");
  ASSERT_EQ(run_cli({"sweep", file, "-q", "-o", (dir / "sweep").string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"run", base, "--executor", "sim", "--ranks", "all", "-q", "-o", (dir / "run").string()}).exit_code, 0);
  auto without_name = [](std::string text) {
    const size_t at = text.find("\"name\"");
    return text.erase(at, text.find('\n', at) - at);
  };
  EXPECT_EQ(without_name(read_file((dir / "sweep/cases/c0000/summary.json").string())),
            without_name(read_file((dir / "run/summary.json").string())));
  EXPECT_EQ(without_name(read_file((dir / "sweep/cases/c0000/ranks.json").string())),
            without_name(read_file((dir / "run/ranks.json").string())));
  // The straggler columns (run with --ranks all): ranks.json's slowest rank, its lateness, the largest exposed comm.
  const nlohmann::json ranks = nlohmann::json::parse(read_file((dir / "run/ranks.json").string()));
  const nlohmann::json row = nlohmann::json::parse(read_file((dir / "sweep/sweep.json").string()))["cases"][0];
  double exposed = 0;
  for (const nlohmann::json& r : ranks["ranks"]) exposed = std::max(exposed, r["exposed_comm_ms"].get<double>());
  const int64_t slowest = ranks["slowest_rank"];
  EXPECT_EQ(row["straggler_rank"].get<int64_t>(), slowest);
  EXPECT_EQ(row["straggler_late_ms"].get<double>(), ranks["ranks"][static_cast<size_t>(slowest)]["late_ms"].get<double>());
  EXPECT_EQ(row["max_exposed_comm_ms"].get<double>(), exposed);
  EXPECT_GT(exposed, 0);
}

TEST(Sweep, ThousandCasesRunLocally) {
  const fs::path dir = scratch("thousand");
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = run_cli({"sweep", kThousand, "-o", dir.string()});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("1000 cases: 1000 ok, 0 invalid, 0 failed"), std::string::npos) << r.out;
  EXPECT_EQ(count_lines(read_file((dir / "sweep.csv").string())), 1001u);
  std::cout << "1000 cases in " << s << " s\n";
}

// A case that dies (here: killed by --case-timeout) is a failed row; fast cases share processes, and a case's row
// must not depend on which batch it fell in (-j 1 makes batches of 2 here, -j 2 batches of 1).
TEST(Sweep, ACaseKilledByTheTimeoutIsAFailedRowWhateverItsBatch) {
  const fs::path dir = scratch("timeout");
  const std::string file = write(dir / "sweep.json", "{\"base\": \"" + fs::absolute("scenarios/default.json").string() +
                                                         "\", \"overrides\": {\"model.layer_num\": [2, 4, 6, 8, "
                                                         "10, 12, 14, 16]}}");
  for (const char* jobs : {"1", "2"}) {
    const auto r = run_cli({"sweep", file, "-j", jobs, "--case-timeout", "0.001", "-o", (dir / jobs).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.err.find("8 cases: 0 ok, 0 invalid, 8 failed"), std::string::npos) << r.err;
  }
  const std::string csv = read_file((dir / "1/sweep.csv").string());
  EXPECT_EQ(csv, read_file((dir / "2/sweep.csv").string()));
  EXPECT_NE(csv.find(",failed,timed out after 0.001 s (--case-timeout),"), std::string::npos) << csv;
}

// Ctrl-C: exit 130 with a line, no half-written sweep.csv, and no case process left running.
TEST(Sweep, InterruptExits130AndStopsItsCases) {
  const fs::path dir = scratch("interrupt");
  const std::string err = (dir / "stderr.txt").string(), out = (dir / "out").string();
  const pid_t pid = spawn_cli({"sweep", kThousand, "-j", "2", "-o", out}, err);
  ASSERT_GT(pid, 0);
  // Interrupt once the first cases have finished.
  for (int i = 0; i < 200 && !fs::exists(out + "/cases/c0000/summary.json"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_NE(read_file(err).find("interrupted"), std::string::npos);
  EXPECT_FALSE(fs::exists(out + "/sweep.csv"));
  // The case processes got SIGTERM with their parent: no summary appears afterwards.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  size_t before = 0, after = 0;
  for (const auto& e : fs::recursive_directory_iterator(out)) before += e.path().filename() == "summary.json";
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  for (const auto& e : fs::recursive_directory_iterator(out)) after += e.path().filename() == "summary.json";
  EXPECT_EQ(before, after);
  EXPECT_LT(after, 1000u);
}

struct BadSweep {
  std::string name, text, args, message;
};

void PrintTo(const BadSweep& b, std::ostream* os) { *os << b.name; }

class SweepBadInput : public testing::TestWithParam<BadSweep> {};

TEST_P(SweepBadInput, IsRefusedWithExit2AndSaysWhy) {
  const fs::path dir = scratch("bad_" + GetParam().name);
  const std::string file = write(dir / "sweep.json", GetParam().text);
  std::vector<std::string> args = {"sweep", file, "-o", (dir / "out").string()};
  if (!GetParam().args.empty()) args.push_back(GetParam().args);
  const auto r = run_cli(args);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find(GetParam().message), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out/sweep.csv"));
}

const std::string kBase = "\"base\": \"" + fs::absolute("scenarios/default.json").string() + "\"";

INSTANTIATE_TEST_SUITE_P(
    Cases, SweepBadInput,
    testing::Values(
        // Issue 32: 200,000 levels crashed the sweep (a recursive copy of the value).
        BadSweep{"deep_nesting",
                 "{" + kBase + ", \"overrides\": {\"strategy.tp_size\": " + std::string(200000, '[') +
                     std::string(200000, ']') + "}}",
                 "", "nested deeper than 100 levels (line 1, column "},
        BadSweep{"unknown_key", "{" + kBase + ", \"overrides\": {\"strategy.tp_sise\": [1, 2]}}", "",
                 "/overrides/strategy.tp_sise: unknown override key 'strategy.tp_sise' in case c0000 (tp_sise=1), as "
                 "in every case: strategy has no field 'tp_sise' in the base scenario; did you mean 'tp_size'?"},
        BadSweep{"unknown_nested_key",
                 "{" + kBase + ", \"overrides\": {\"system.networks.inter_node.bandwith.gbps\": [100]}}", "",
                 "system.networks.inter_node has no field 'bandwith' in the base scenario; did you mean 'bandwidth'?"},
        BadSweep{"unknown_part", "{" + kBase + ", \"overrides\": {\"stratgy.tp_size\": [1]}}", "",
                 "unknown override key 'stratgy.tp_size' in case c0000 (tp_size=1)"},
        BadSweep{"empty_list", "{" + kBase + ", \"overrides\": {\"model.layer_num\": [4], \"strategy.tp_size\": []}}",
                 "", "/overrides/strategy.tp_size: empty list: the product of the sweep has no case"},
        BadSweep{"empty_platforms", "{" + kBase + ", \"platforms\": [], \"run\": {\"executor\": \"sim\"}}", "",
                 "/platforms: empty list: the product of the sweep has no case"},
        BadSweep{"too_many", "{" + kBase + ", \"overrides\": {\"model.layer_num\": [2, 4, 6], \"strategy.tp_size\": [1, 2]}}",
                 "--max-cases=5", "the sweep has 6 cases, more than --max-cases 5; raise --max-cases"},
        BadSweep{"platform_without_sim", "{" + kBase + ", \"platforms\": [{\"topology\": \"rail\"}]}", "",
                 "a platform is simulated only by the sim executor"},
        BadSweep{"not_a_list", "{" + kBase + ", \"overrides\": {\"strategy.tp_size\": 2}}", "",
                 "/overrides/strategy.tp_size: expected a list of values, got 2"},
        BadSweep{"unknown_field", "{" + kBase + ", \"overide\": {}}", "", "/overide: unknown field; did you mean"}),
    [](const testing::TestParamInfo<BadSweep>& p) { return p.param.name; });

TEST(Sweep, SbatchMissingRejectingOrSilentIsExit2) {
  const fs::path dir = scratch("sbatch");
  const auto missing = run_cli({"sweep", kWhatif, "--slurm", "--sbatch", "/nonexistent/sbatch", "-o", (dir / "a").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("'/nonexistent/sbatch' not found: is Slurm installed here?"), std::string::npos)
      << missing.err;
  const std::string rejecting = fake_sbatch(dir, "echo 'sbatch: error: invalid partition specified: gpu' >&2; exit 1");
  const auto rejected = run_cli({"sweep", kWhatif, "--slurm", "--sbatch", rejecting, "-o", (dir / "b").string()});
  EXPECT_EQ(rejected.exit_code, 2);
  EXPECT_NE(rejected.err.find("sbatch rejected the job (exit 1): sbatch: error: invalid partition specified: gpu"),
            std::string::npos)
      << rejected.err;
  const std::string silent = fake_sbatch(dir, "sleep 30");
  const auto t0 = std::chrono::steady_clock::now();
  const auto hung = run_cli(
      {"sweep", kWhatif, "--slurm", "--sbatch", silent, "--sbatch-timeout", "1", "-o", (dir / "c").string()});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 10);
  EXPECT_EQ(hung.exit_code, 2);
  EXPECT_NE(hung.err.find("sbatch did not answer in 1 s"), std::string::npos) << hung.err;
}

// A newline in the output folder would end job.sh's comment line and run what follows (issue 32).
TEST(Sweep, SlurmRefusesAPathThatWouldInjectIntoJobSh) {
  const fs::path dir = scratch("inject");
  const std::string sbatch = fake_sbatch(dir, "echo 4242");
  const std::string out = (dir / "x\ntouch pwned\n").string();
  const auto r = run_cli({"sweep", kWhatif, "--slurm", "--sbatch", sbatch, "-o", out});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("error: --slurm: -o has a control character"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// What Slurm would do, by hand: submit (a stand-in sbatch records its arguments), run each array task's command,
// merge; the merged files equal the local run's byte for byte, and a missing or cut shard is named.
TEST(Sweep, MergedShardsEqualTheLocalRunAndMissingOnesAreNamed) {
  const fs::path dir = scratch("merge");
  const std::string sbatch = fake_sbatch(dir, "echo \"$@\" > " + (dir / "sbatch_args").string() + "; echo 4242");
  const std::string out = (dir / "slurm").string();
  const auto submit = run_cli({"sweep", kWhatif, "--slurm", "--shards", "5", "--sbatch", sbatch, "-o", out});
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  EXPECT_NE(submit.out.find("submitted Slurm job 4242: 5 array tasks for 12 cases"), std::string::npos) << submit.out;
  const std::string args = read_file((dir / "sbatch_args").string());
  EXPECT_NE(args.find("--parsable --array=0-4 --output="), std::string::npos) << args;
  EXPECT_NE(read_file(out + "/slurm/job.sh").find("--shard \"$SLURM_ARRAY_TASK_ID\""), std::string::npos);
  const auto early = run_cli({"sweep", "--merge", out});
  EXPECT_EQ(early.exit_code, 2);
  EXPECT_NE(early.err.find("5 of 5 shards of " + out + " cannot be merged"), std::string::npos) << early.err;
  for (int shard = 0; shard < 5; ++shard) {
    const auto task = run_cli({"sweep", kWhatif, "--shard", std::to_string(shard), "-o", out, "-q"});
    ASSERT_EQ(task.exit_code, 0) << task.err;
  }
  const auto merged = run_cli({"sweep", "--merge", out, "--html", out + "/merged.html"});
  ASSERT_EQ(merged.exit_code, 0) << merged.err;
  const std::string local = (dir / "local").string();
  ASSERT_EQ(run_cli({"sweep", kWhatif, "-q", "-o", local, "--html", (dir / "local.html").string()}).exit_code, 0);
  EXPECT_EQ(read_file(out + "/sweep.csv"), read_file(local + "/sweep.csv"));
  EXPECT_EQ(read_file(out + "/sweep.json"), read_file(local + "/sweep.json"));
  // The page is of sweep.json alone, titled with the sweep's name: a merge and a local run give the same bytes.
  const std::string page = read_file(out + "/merged.html");
  EXPECT_EQ(page, read_file((dir / "local.html").string()));
  EXPECT_NE(page.find("<title>simumax-sim sweep: whatif</title>"), std::string::npos);
  // A shard edited by hand to an MFU no run gives is refused, not drawn (issue 32).
  const std::string zero = read_file(out + "/shards/shard-0.jsonl");
  write(out + "/shards/shard-0.jsonl", std::regex_replace(zero, std::regex("\"mfu\":[0-9.e+-]+"), "\"mfu\":20.0"));
  const auto edited = run_cli({"sweep", "--merge", out});
  EXPECT_EQ(edited.exit_code, 2);
  EXPECT_NE(edited.err.find("case 0: /mfu: an ok row: expected a fraction in (0, 6], got 20"), std::string::npos) << edited.err;
  write(out + "/shards/shard-0.jsonl", zero);
  // Shard 1 lost, shard 3 cut short: both named with their cases and their task's log.
  fs::remove(out + "/shards/shard-1.jsonl");
  const std::string three = read_file(out + "/shards/shard-3.jsonl");
  write(out + "/shards/shard-3.jsonl", three.substr(0, three.size() / 2));
  const auto broken = run_cli({"sweep", "--merge", out});
  EXPECT_EQ(broken.exit_code, 2);
  EXPECT_NE(broken.err.find("2 of 5 shards of " + out + " cannot be merged"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("shard 1 (cases c0002 to c0003): missing"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find("shard 3 (cases c0007 to c0008): incomplete"), std::string::npos) << broken.err;
  EXPECT_NE(broken.err.find(out + "/slurm/task-3.out"), std::string::npos) << broken.err;
}

// The page of a local sweep (--html) holds every case with the numbers of sweep.csv, and the best case per layout.
TEST(Sweep, HtmlPageHasEveryCaseWithTheNumbersOfSweepCsv) {
  const fs::path dir = scratch("html");
  const std::string out = (dir / "out").string(), html = (dir / "sweep.html").string();
  const auto r = run_cli({"sweep", kWhatif, "-o", out, "--html", html});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + out + "/sweep.csv, " + out + "/sweep.json, " + html), std::string::npos) << r.out;
  const std::string page = read_file(html);
  for (const char* ref : {"<script src", "<link", "<img", "@import", "url(", "https://"}) {
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;  // self-contained: nothing fetched
  }
  const nlohmann::json data = page_data(page);
  ASSERT_TRUE(data.is_object());
  const nlohmann::json& w = data["sweep"];
  const auto csv = parse_csv(read_file(out + "/sweep.csv"));
  ASSERT_EQ(csv.size(), 13u);
  const std::vector<std::string>& head = csv[0];
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(head.begin(), head.end(), name) - head.begin());
  };
  ASSERT_EQ(w["cases"].size(), 12u);
  for (size_t i = 0; i < 12; ++i) {
    const std::vector<std::string>& row = csv[i + 1];
    const nlohmann::json& c = w["cases"][i];
    EXPECT_EQ(c["name"], row[col("name")]);
    EXPECT_EQ(c["label"], row[col("label")]);
    EXPECT_EQ(c["status"], row[col("status")]);
    EXPECT_EQ(c["platform"], row[col("platform")]);
    EXPECT_EQ(c["values"][0], row[col("system.networks.inter_node.bandwidth.gbps")]);
    EXPECT_EQ(c["values"][1], row[col("strategy.tp_size")]);
    EXPECT_EQ(c["error"].is_null() ? "" : c["error"].get<std::string>(), row[col("error")]);
    EXPECT_EQ(c["fits"].is_null() ? "" : c["fits"].dump(), row[col("fits")]);
    for (const char* k :
         {"step_time_ms", "mfu", "tokens_per_s", "peak_reserved_gib", "peak_alloc_gib", "headroom_gib"}) {
      const std::string cell = row[col(k)];
      if (cell.empty()) {
        EXPECT_TRUE(c[k].is_null()) << "case " << i << " " << k;
      } else {
        EXPECT_EQ(c[k].get<double>(), std::strtod(cell.c_str(), nullptr)) << "case " << i << " " << k;  // exact
      }
    }
  }
  // Grouped by the slower axes (gbps x tp_size), one bar per platform; the best that fits per tp_size (the
  // layout): the lowest index of the ties between the two platforms; none for tp 3, whose cases are invalid.
  EXPECT_EQ(w["series_axis"], "platform");
  EXPECT_EQ(w["series"], nlohmann::json({"single-switch", "fat-tree-4to1"}));
  EXPECT_EQ(w["groups"].size(), 6u);
  EXPECT_EQ(w["groups"][3], "gbps=50 tp_size=1");
  ASSERT_EQ(w["layouts"].size(), 3u);
  EXPECT_EQ(w["layouts"][0], nlohmann::json({{"label", "tp_size=1"}, {"cases", 4}, {"fit", 4}, {"best", 6}}));
  EXPECT_EQ(w["layouts"][1]["best"], 8);
  EXPECT_TRUE(w["layouts"][2]["best"].is_null());
  // `report` of the sweep's folder draws the same view.
  const std::string report = (dir / "report.html").string();
  ASSERT_EQ(run_cli({"report", out, "-o", report, "-q"}).exit_code, 0);
  EXPECT_EQ(page_data(read_file(report))["sweep"], w);
}

TEST(Sweep, HtmlPageOfABadSweepJsonOrToNowhereIsExit2) {
  const fs::path dir = scratch("html_bad");
  const std::string out = (dir / "out").string();
  const auto nowhere = run_cli({"sweep", kWhatif, "-q", "-o", out, "--html", (dir / "no/such/folder/p.html").string()});
  EXPECT_EQ(nowhere.exit_code, 2);
  EXPECT_NE(nowhere.err.find("--html " + (dir / "no/such/folder/p.html").string() + ": its folder"), std::string::npos)
      << nowhere.err;
  EXPECT_FALSE(fs::exists(out + "/sweep.csv"));  // refused before any case ran
  const auto slurm = run_cli({"sweep", kWhatif, "--slurm", "-o", out, "--html", (dir / "p.html").string()});
  EXPECT_EQ(slurm.exit_code, 2);
  EXPECT_NE(slurm.err.find("by sweep --merge OUT --html FILE"), std::string::npos) << slurm.err;
  ASSERT_EQ(run_cli({"sweep", kWhatif, "-q", "-o", out}).exit_code, 0);
  const std::string good = read_file(out + "/sweep.json");
  std::string json = good;
  const size_t at = json.find("\"step_time_ms\": 1171");
  ASSERT_NE(at, std::string::npos);
  json.replace(at, json.find(',', at) - at, "\"step_time_ms\": \"1171\"");
  write(out + "/sweep.json", json);
  const auto bad = run_cli({"report", out, "-o", (dir / "p.html").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find(out + "/sweep.json: /cases/0/step_time_ms: expected a number"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(dir / "p.html"));
  // Other edits: the field named, exit 2, never a crash.
  const std::vector<std::pair<std::pair<std::string, std::string>, std::string>> edits = {
      {{"\"case_count\": 12", "\"case_count\": -1"}, "/cases: has 12 cases, but /case_count is -1"},
      {{"\"index\": 3,", "\"index\": 4,"}, "/cases/3/index: expected 3 (cases in case order)"},
      {{"\"strategy.tp_size\": 2,", "\"tp\": 2,"}, "/cases/2/strategy.tp_size: required field is missing"},
      {{"\"fits\": true", "\"fits\": 1"}, "/cases/0/fits: expected a boolean"},
      {{"\"platform\": \"fat-tree-4to1\",\n", ""}, "/cases/1/platform: required field is missing"},
      {{"\"axes\": \"", "\"axes\": 7, \"x\": \""}, "/axes: expected a string"},
      // Issue 32: an ok case's figures are a result's (a negative step time was drawn).
      {{"\"step_time_ms\": 1171", "\"step_time_ms\": -1171"},
       "/cases/0/step_time_ms: an ok case: expected a positive step time, got -1171"}};
  for (const auto& [edit, message] : edits) {
    std::string text = good;
    const size_t where = text.find(edit.first);
    ASSERT_NE(where, std::string::npos) << edit.first;
    write(out + "/sweep.json", text.replace(where, edit.first.size(), edit.second));
    const auto r = run_cli({"report", out, "-o", (dir / "p.html").string()});
    EXPECT_EQ(r.exit_code, 2) << edit.first;
    EXPECT_NE(r.err.find(out + "/sweep.json: " + message), std::string::npos) << r.err;
  }
  write(out + "/sweep.json", "{\"name\": \"cut");
  const auto cut = run_cli({"report", out, "-o", (dir / "p.html").string()});
  EXPECT_EQ(cut.exit_code, 2);
  EXPECT_NE(cut.err.find(out + "/sweep.json: invalid JSON at byte"), std::string::npos) << cut.err;
}

}  // namespace
}  // namespace simumax::tests
