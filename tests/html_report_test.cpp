// `simumax-sim report` and `run --html` (issue #17, docs/report.md): the page is self-contained and deterministic,
// its data agrees with the run's own files, decimation, the search view, and bad folders / files.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/report_page.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

fs::path scratch(const std::string& name) { return scratch_dir("html", name, false); }

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}


// A run of the default scenario with trace and memory, written once for the tests of this file.
const fs::path& default_run() {
  static const fs::path dir = [] {
    const fs::path d = scratch("default");
    const CliResult r = run_cli({"run", "scenarios/default.json", "--trace", "--memory", "-q", "-o", d.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return d;
  }();
  return dir;
}

TEST(HtmlReport, PageIsSelfContainedAndByteIdenticalForTheSameFolder) {
  const fs::path out = scratch("page");
  fs::create_directories(out);
  const CliResult a = run_cli({"report", default_run().string(), "-o", (out / "a.html").string()});
  const CliResult b = run_cli({"report", default_run().string(), "-o", (out / "b.html").string(), "-q"});
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(a.out.find("wrote " + (out / "a.html").string()), std::string::npos);
  const std::string page = read_file(out / "a.html");
  EXPECT_EQ(page, read_file(out / "b.html"));
  // Nothing is fetched: no external script, style sheet, image or font.
  for (const char* ref : {"<script src", "<link", "<img", "@import", "url(", "https://"}) {
    EXPECT_EQ(page.find(ref), std::string::npos) << ref;
  }
  EXPECT_NE(page.find("function drawTimeline"), std::string::npos);
  EXPECT_NE(page.find("function drawSearch"), std::string::npos);
}

TEST(HtmlReport, DataAgreesWithTheRunsFiles) {
  const fs::path out = scratch("data") / "r.html";
  fs::create_directories(out.parent_path());
  ASSERT_EQ(run_cli({"report", default_run().string(), "-o", out.string(), "-q"}).exit_code, 0);
  const Json d = page_data(read_file(out));
  const Json trace = Json::parse(read_file(default_run() / "trace.json"));
  const Json summary = Json::parse(read_file(default_run() / "summary.json"));
  size_t slices = 0;
  std::set<std::pair<int64_t, int64_t>> lanes;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices, lanes.insert({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
  }
  EXPECT_EQ(d["timeline"]["total_slices"].get<size_t>(), slices);
  EXPECT_EQ(d["timeline"]["shown_slices"].get<size_t>(), slices);  // far below the decimation limit
  EXPECT_EQ(d["timeline"]["lanes"].size(), lanes.size());
  EXPECT_DOUBLE_EQ(d["timeline"]["end_us"].get<double>(), trace["otherData"]["step_time_us"].get<double>());
  ASSERT_EQ(d["summary"]["stages"].size(), summary["stages"].size());
  const double gpu = summary["gpu_memory_bytes"];
  for (size_t i = 0; i < summary["stages"].size(); ++i) {
    const Json& row = d["summary"]["stages"][i];
    const double reserved = summary["stages"][i]["memory"]["peak_reserved_bytes"];
    EXPECT_DOUBLE_EQ(row["headroom_bytes"].get<double>(), gpu - reserved);
    EXPECT_EQ(row["fits"].get<bool>(), reserved <= gpu);
  }
  ASSERT_EQ(d["memory"]["ranks"].size(), summary["stages"].size());  // one traced rank per stage
  for (const Json& r : d["memory"]["ranks"]) {
    const Json& st = summary["stages"][r["pp_stage"].get<size_t>()]["memory"];
    EXPECT_EQ(r["peak_allocated_bytes"].get<double>(), st["peak_alloc_bytes"].get<double>());
    EXPECT_EQ(r["at_peak"]["task"], st["peak_task"]);
  }
}

TEST(HtmlReport, FitVerdictIsSummaryJsonsOwn) {
  const fs::path dir = scratch("fits");
  fs::create_directories(dir);
  Json s = Json::parse(read_file(default_run() / "summary.json"));
  s["stages"][0]["fits"] = false;  // summary.json's own verdict is shown, not one judged from the GPU memory
  write(dir / "summary.json", s.dump());
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const Json d = page_data(read_file(dir / "report.html"));
  EXPECT_FALSE(d["summary"]["stages"][0]["fits"].get<bool>());
  EXPECT_EQ(d["summary"]["stages"][0]["fit_source"], "summary.json");
  EXPECT_TRUE(d["summary"]["stages"][1]["fits"].get<bool>());
  // A stage without a verdict (a summary.json older than the fit verdict) is refused as every reader of
  // summary.json refuses it (report::read_summary), naming the field.
  s["stages"][1].erase("fits");
  write(dir / "summary.json", s.dump());
  const CliResult r = run_cli({"report", dir.string(), "-q"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "summary.json").string() +
                       ": /stages/1/fits: required field is missing (expected a boolean)\n");
}

TEST(HtmlReport, TimelineAboveMaxSlicesIsDecimatedAndSaysSo) {
  const fs::path dir = scratch("op");
  const CliResult r = run_cli({"run", "scenarios/default.json", "--granularity", "op", "--trace", "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_cli({"report", dir.string(), "--max-slices", "1000", "-q"}).exit_code, 0);
  const Json t = page_data(read_file(dir / "report.html"))["timeline"];
  ASSERT_GT(t["total_slices"].get<size_t>(), 1000u);
  EXPECT_LE(t["shown_slices"].get<size_t>(), 1000u);
  EXPECT_EQ(t["slices"]["ts"].size(), t["shown_slices"].get<size_t>());
  EXPECT_GT(t["merge_below_us"].get<double>(), 0);
  size_t merged = 0;
  for (const Json& m : t["slices"]["merged"]) merged += m.get<size_t>();
  EXPECT_EQ(merged, t["total_slices"].get<size_t>());  // every slice of the trace is in exactly one drawn slice
}

TEST(HtmlReport, SearchViewHasEveryEvaluatedCandidateAndAParetoFrontOfFeasibleOnes) {
  const fs::path dir = scratch("search");
  const CliResult r = run_cli({"search", "--model", "models/llama3-70b.json", "--system", "platforms/b200_bf16.json",
                               "--world-size", "16", "--global-batch-size", "64", "--seq-len", "4096", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const Json s = page_data(read_file(dir / "report.html"))["search"];
  const Json& c = s["candidates"];
  EXPECT_EQ(c.size(), s["evaluated"].get<size_t>());
  ASSERT_FALSE(s["pareto"].empty());
  for (const Json& i : s["pareto"]) {
    const Json& p = c[i.get<size_t>()];
    EXPECT_TRUE(p["fits"].get<bool>());
    for (const Json& q : c) {  // no feasible candidate is both faster and smaller
      if (!q["fits"].get<bool>()) continue;
      EXPECT_FALSE(q["step_time_ms"] < p["step_time_ms"] && q["peak_reserved_gib"] < p["peak_reserved_gib"]) << q["label"];
    }
  }
}

TEST(HtmlReport, RunHtmlWritesTheReportIntoTheRunFolder) {
  const fs::path dir = scratch("run-html");
  const CliResult r = run_cli({"run", "scenarios/default.json", "--html", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("wrote " + (dir / "report.html").string()), std::string::npos);
  const std::string page = read_file(dir / "report.html");
  EXPECT_TRUE(page_data(page).contains("summary"));
  EXPECT_FALSE(page_data(page).contains("timeline"));  // no --trace: the page says what is not drawn
}

TEST(HtmlReport, CompareJsonInTheFolderGivesOursAgainstRealOpByOpAndTheStraggler) {
  const fs::path dir = scratch("compare");
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "--granularity", "op", "-q", "-o", dir.string()}).exit_code, 0);
  const CliResult c = run_cli({"compare", dir.string(), "tests/data/compare/ranks", "-q", "--json", (dir / "compare.json").string()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const Json d = page_data(read_file(dir / "report.html"))["compare"];
  const Json cmp = Json::parse(read_file(dir / "compare.json"));
  const Json& mean = cmp["comparison"].back()["metrics"];
  ASSERT_FALSE(d["metrics"]["time"].empty());
  EXPECT_EQ(d["metrics"]["time"][0]["name"], "total_ms");  // compare's own order, not the file's sorted keys
  EXPECT_EQ(d["metrics"]["counts"][0]["name"], "kernels");
  for (const Json& row : d["metrics"]["time"]) {
    const std::string name = row["name"];
    EXPECT_EQ(row["ours"], mean[name]["ours"]) << name;
    EXPECT_EQ(row["real"], mean[name]["real"]) << name;
    EXPECT_EQ(row["error_pct"], mean[name]["error_pct"]) << name;
  }
  EXPECT_EQ(d["metrics"]["time"].size() + d["metrics"]["counts"].size(), mean.size());
  ASSERT_EQ(d["ops"].size(), cmp["ops"].size());
  EXPECT_EQ(d["total_ops"], cmp["ops"].size());
  for (size_t i = 0; i < d["ops"].size(); ++i) {
    EXPECT_EQ(d["ops"][i]["name"], cmp["ops"][i]["ours"]["name"]);
    EXPECT_EQ(d["ops"][i].contains("real"), !cmp["ops"][i]["real"].is_null());
  }
  ASSERT_EQ(d["ranks"].size(), 2u);
  EXPECT_EQ(d["straggler"]["rank"], cmp["straggler"]["rank"]);
  EXPECT_EQ(d["straggler"]["ratio"], cmp["straggler"]["straggler_ratio"]);
  // A later run into the folder removes the compare of the earlier one with its other files.
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "-q", "-o", dir.string()}).exit_code, 0);
  EXPECT_FALSE(fs::exists(dir / "compare.json"));
}

TEST(HtmlReport, MarkupInNamesCannotEndTheDataOrTitle) {
  const fs::path dir = scratch("x<b>");
  fs::create_directories(dir);
  Json s = Json::parse(read_file(default_run() / "summary.json"));
  s["name"] = "</script><script>alert(1)</script>";
  write(dir / "summary.json", s.dump());
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const std::string page = read_file(dir / "report.html");
  EXPECT_EQ(page.find("<script>alert"), std::string::npos);
  EXPECT_EQ(page.find("x<b>"), std::string::npos);
  EXPECT_NE(page.find("x&lt;b&gt;"), std::string::npos);
  EXPECT_EQ(page_data(page)["summary"]["name"], "</script><script>alert(1)</script>");
}

struct BadCase {
  const char* file;
  std::string text;
  const char* expected;  // the message after "error: <dir>/"
};

TEST(HtmlReport, BadFilesNameTheFileAndFieldAndExit2WithoutEchoingThem) {
  const Json good = Json::parse(read_file(default_run() / "summary.json"));
  Json no_peak = good;
  no_peak["stages"][1]["memory"].erase("peak_reserved_bytes");
  Json text_step = good;
  text_step["step_time_ms"] = "SECRET-VALUE";
  Json mfu_2 = good;
  mfu_2["mfu"] = 2.0;
  const BadCase cases[] = {
      {"summary.json", "{\"step_time_ms\": SECRET-VALUE", "summary.json: invalid JSON at byte 18"},
      {"summary.json", no_peak.dump(),
       "summary.json: /stages/1/memory/peak_reserved_bytes: required field is missing (expected a number)"},
      {"summary.json", text_step.dump(), "summary.json: /step_time_ms: expected a number"},
      {"search.json", "{\"candidates\": [{\"status\": \"evaluated\", \"label\": \"SECRET-VALUE\"}]}",
       "search.json: /candidates/0/step_time_ms: required field is missing (expected a number)"},
      // Issue 32: figures no run gives, which the page drew.
      {"summary.json", mfu_2.dump(),
       "summary.json: /mfu: expected a fraction in (0, 1], got 2 for dtype bf16, grad_reduce fp32"},
      {"search.json",
       "{\"candidates\": [{\"status\": \"evaluated\", \"label\": \"x\", \"step_time_ms\": 10, "
       "\"peak_reserved_gib\": 1, \"fits\": true, \"mfu\": 20}]}",
       "search.json: /candidates/0/mfu: expected a fraction in (0, 6], got 20"},
      {"trace.json", "[]", "trace.json: /traceEvents: no complete events (ph \"X\"): nothing to draw"},
      {"compare.json", "{\"real\": {\"path\": \"r.json\", \"kind\": \"SECRET-VALUE\"}}",
       "compare.json: /real/steps: required field is missing (expected an array)"},
  };
  for (const BadCase& c : cases) {
    const fs::path dir = scratch("bad");
    fs::create_directories(dir);
    if (std::string(c.file) != "summary.json") write(dir / "summary.json", good.dump());
    write(dir / c.file, c.text);
    const CliResult r = run_cli({"report", dir.string()});
    EXPECT_EQ(r.exit_code, 2) << c.file;
    EXPECT_EQ(r.err, "error: " + (dir / c.expected).string() + "\n");
    EXPECT_EQ(r.err.find("SECRET"), std::string::npos);
    EXPECT_FALSE(fs::exists(dir / "report.html"));
  }
}

TEST(HtmlReport, FolderWithNothingToReportExits2) {
  const fs::path dir = scratch("empty");
  fs::create_directories(dir);
  CliResult r = run_cli({"report", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + dir.string() +
                       ": has neither summary.json (a run), search.json (a search) nor sweep.json (a sweep): nothing to "
                       "report\n");
  r = run_cli({"report", (dir / "missing").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err,
            "error: " + (dir / "missing").string() + ": not a folder (expected a run, search or sweep output folder)\n");
}

}  // namespace
}  // namespace simumax::tests
