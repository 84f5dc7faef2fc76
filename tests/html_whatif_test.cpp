// `simumax-sim report DIR_A DIR_B` (issue #17, docs/report.md "What-if of two runs"): the page holds both runs
// as their own reports would, says when they differ in more than the platform, and refuses a folder that is not
// a run output with exit 2 naming the folder and the missing file.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/report_page.hpp"
#include "tests/whatif_runs.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

fs::path scratch(const std::string& name) { return scratch_dir("whatif-page", name, false); }


// The default scenario on full and half bandwidth, with trace and memory, run once for the tests of this file.
const WhatIfRuns& two_systems() {
  static const WhatIfRuns runs = [] {
    WhatIfRuns r = run_default_on_two_systems(scratch("runs"), {"--trace", "--memory"});
    EXPECT_EQ(r.error, "");
    return r;
  }();
  return runs;
}

TEST(HtmlWhatIf, TwoSystemsGiveBothRunsStepTimesAsTheirSummaryJsonAndTheSameScenario) {
  const WhatIfRuns& w = two_systems();
  const fs::path out = scratch("page");
  fs::create_directories(out);
  const CliResult r = run_cli({"report", w.a.string(), w.b.string(), "-o", (out / "whatif.html").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "wrote " + (out / "whatif.html").string() + "\n");
  EXPECT_EQ(r.err, "");  // the same scenario: no note
  const std::string page = read_file(out / "whatif.html");
  ASSERT_EQ(run_cli({"report", w.a.string(), w.b.string(), "-o", (out / "again.html").string(), "-q"}).exit_code, 0);
  EXPECT_EQ(page, read_file(out / "again.html"));  // deterministic
  for (const char* ref : {"<script src", "<link", "<img", "@import", "url(", "https://"}) {
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;  // self-contained, as the report
  }
  EXPECT_NE(page.find("<title>simumax-sim what-if: full-bandwidth against half-bandwidth</title>"), std::string::npos);
  const Json d = page_data(page)["whatif"];
  EXPECT_EQ(d["labels"], Json::array({"full-bandwidth", "half-bandwidth"}));
  ASSERT_EQ(d["runs"].size(), 2u);
  const fs::path dirs[] = {w.a, w.b};
  double step[2] = {};
  for (int i = 0; i < 2; ++i) {
    const Json summary = Json::parse(read_file(dirs[i] / "summary.json"));
    const Json& run = d["runs"][i];
    step[i] = summary["step_time_ms"];
    EXPECT_EQ(run["summary"]["step_time_ms"].get<double>(), step[i]);
    EXPECT_NEAR(run["timeline"]["end_us"].get<double>(), step[i] * 1000, 1e-3);  // trace.json: 1 ns
    ASSERT_EQ(run["memory"]["ranks"].size(), summary["stages"].size());
    // Each rank's communication and its exposed part (no compute on the rank) from every slice of its trace.
    const Json& comm = run["timeline"]["comm"];
    ASSERT_EQ(comm["rank"].size(), summary["stages"].size());  // one traced rank per stage
    for (size_t k = 0; k < comm["rank"].size(); ++k) {
      EXPECT_GT(comm["comm_us"][k].get<double>(), 0);
      EXPECT_LE(comm["exposed_us"][k].get<double>(), comm["comm_us"][k].get<double>());
    }
  }
  EXPECT_GT(step[1], step[0]);  // half the bandwidth: slower
  EXPECT_EQ(d["differences"]["scenario"], Json::array());  // the same scenario: no warning on the page
  // A label for each side, and the same page of the two swapped.
  ASSERT_EQ(run_cli({"report", w.b.string(), w.a.string(), "--label", "A=NVLink 450 GB/s", "--label",
                     "B=NVLink 900 GB/s</script><b>", "-o", (out / "swapped.html").string(), "-q"})
                .exit_code,
            0);
  const std::string swapped = read_file(out / "swapped.html");
  EXPECT_EQ(swapped.find("</script><b>"), std::string::npos);  // a label is text: escaped in the title and data
  const Json s = page_data(swapped)["whatif"];
  EXPECT_EQ(s["labels"], Json::array({"NVLink 450 GB/s", "NVLink 900 GB/s</script><b>"}));
  EXPECT_EQ(s["runs"][0]["summary"]["step_time_ms"].get<double>(), step[1]);
}

// The exposed communication the what-if table shows, on a trace made by hand: rank 0 computes 0-10 µs while its
// DP all-reduce runs 5-20 µs (15 µs of communication, 10 exposed); rank 1 only communicates, twice over 0-4 µs.
TEST(HtmlWhatIf, ExposedCommunicationIsTheRanksCommWithNoComputeOnTheRank) {
  const fs::path dir = scratch("exposed");
  fs::create_directories(dir);
  fs::copy_file(two_systems().a / "summary.json", dir / "summary.json");
  std::ofstream(dir / "trace.json") << R"({"traceEvents": [
    {"ph": "X", "pid": 0, "tid": 0, "name": "fwd", "ts": 0, "dur": 10, "cat": "compute", "args": {"pass": "forward"}},
    {"ph": "X", "pid": 0, "tid": 6, "name": "ar", "ts": 5, "dur": 15, "cat": "dp_comm"},
    {"ph": "X", "pid": 1, "tid": 6, "name": "ar", "ts": 0, "dur": 4, "cat": "dp_comm"},
    {"ph": "X", "pid": 1, "tid": 5, "name": "send", "ts": 1, "dur": 2, "cat": "pp_comm"}]})";
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const Json comm = page_data(read_file(dir / "report.html"))["timeline"]["comm"];
  EXPECT_EQ(comm, Json({{"rank", {0, 1}}, {"comm_us", {15.0, 4.0}}, {"exposed_us", {10.0, 4.0}}}));
}

TEST(HtmlWhatIf, RunsOfTwoScenariosAreShownWithTheFieldsInWhichTheyDiffer) {
  const WhatIfRuns& w = two_systems();
  const fs::path dir = scratch("tp2");
  Json scenario = Json::parse(read_file("scenarios/default.json"));
  scenario["model"] = fs::absolute("models/llama3-70b.json").string();
  scenario["system"] = fs::absolute("platforms/b200_bf16.json").string();
  scenario["strategy"]["tp_size"] = 2;
  fs::create_directories(dir);
  std::ofstream(dir / "tp2.json") << scenario.dump();
  ASSERT_EQ(run_cli({"run", (dir / "tp2.json").string(), "-q", "-o", (dir / "run").string()}).exit_code, 0);
  const CliResult r = run_cli({"report", w.a.string(), (dir / "run").string(), "-o", (dir / "w.html").string(),
                               "--label", "B=tp2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;  // still drawn: the page says what differs, and so does the CLI
  EXPECT_EQ(r.err, "note: the two runs differ in more than the platform (the page says so): parallel/dp "
                   "(full-bandwidth: 4, tp2: 2); parallel/tp (full-bandwidth: 1, tp2: 2); batch/global_batch_size "
                   "(full-bandwidth: 32, tp2: 16)\n");
  const Json d = page_data(read_file(dir / "w.html"))["whatif"];
  std::set<std::string> fields;
  for (const Json& f : d["differences"]["scenario"]) fields.insert(f["field"].get<std::string>());
  EXPECT_EQ(fields, (std::set<std::string>{"parallel/dp", "parallel/tp", "batch/global_batch_size"}));
  for (const Json& f : d["differences"]["scenario"]) {
    if (f["field"] == "parallel/tp") {
      EXPECT_EQ(f, Json({{"field", "parallel/tp"}, {"a", 1}, {"b", 2}}));
    }
  }
  EXPECT_FALSE(d["runs"][1].contains("timeline"));  // no --trace: the page says it is not drawn
}

TEST(HtmlWhatIf, AFolderThatIsNotARunOutputExits2NamingItAndTheMissingFile) {
  const WhatIfRuns& w = two_systems();
  const fs::path dir = scratch("bad");
  const fs::path search = dir / "search", out = dir / "w.html";
  fs::create_directories(search);
  std::ofstream(search / "search.json") << "{}";
  CliResult r = run_cli({"report", w.a.string(), search.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + search.string() + ": has no summary.json: not a run output folder (a what-if "
                                                  "compares two folders `simumax-sim run` wrote)\n");
  r = run_cli({"report", (dir / "missing").string(), w.b.string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "missing").string() + ": not a folder (expected a run output folder)\n");
  // A bad file in either folder: the report's own message, naming the file and the field.
  fs::create_directories(dir / "broken");
  Json summary = Json::parse(read_file(w.b / "summary.json"));
  summary.erase("step_time_ms");
  std::ofstream(dir / "broken" / "summary.json") << summary.dump();
  r = run_cli({"report", w.a.string(), (dir / "broken").string(), "-o", out.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "broken" / "summary.json").string() +
                       ": /step_time_ms: required field is missing (expected a number)\n");
  // Usage: two folders need -o; --label is A=... or B=..., and only for two folders; at most two folders.
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"report", w.a.string(), w.b.string()},
        {"report", w.a.string(), w.b.string(), "--label", "C=x", "-o", out.string()},
        {"report", w.a.string(), "--label", "A=x", "-o", out.string()},
        {"report", w.a.string(), w.b.string(), w.a.string(), "-o", out.string()}}) {
    r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args.size();
    EXPECT_NE(r.err.find("error: "), std::string::npos);
  }
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace simumax::tests
