// The HTML report in a real browser (issue #17): headless Chromium loads the page, runs its script, and the DOM
// it leaves is checked against the run's own files; screenshots go to the build folder (outside git) and their
// paths are printed. Chromium missing is a failure, never a skip: tools/install-deps.sh installs it.
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/whatif_runs.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

std::string find_chromium() {
  if (const char* env = std::getenv("SIMUMAX_CHROMIUM"); env && *env) return env;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    for (const char* name : {"chromium", "chromium-browser"}) {
      const fs::path p = fs::path(dirs.substr(start, end - start)) / name;
      if (access(p.c_str(), X_OK) == 0) return p.string();
    }
    start = end + 1;
  }
  return "";
}

fs::path scratch(const std::string& name) { return scratch_dir("browser", name, false); }

// Runs headless Chromium on `page` with `mode` (--dump-dom or --screenshot=...); returns its stdout.
std::string chromium(const fs::path& page, const std::string& mode, const std::string& window,
                     const std::string& hash = "") {
  const std::string exe = find_chromium();
  const fs::path profile = scratch("profile");
  const CliResult r = run_program(exe, {"--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                                        "--user-data-dir=" + profile.string(), "--virtual-time-budget=10000",
                                        "--window-size=" + window, mode, "file://" + fs::absolute(page).string() + hash});
  EXPECT_EQ(r.exit_code, 0) << exe << " " << mode;
  fs::remove_all(profile);
  return r.out;
}

// The value of attribute `attr` on the first tag matching `tag_regex` (e.g. "<section id=\"timeline\"[^>]*>").
std::string attr(const std::string& dom, const std::string& tag_regex, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(dom, m, std::regex(tag_regex))) return "<no tag " + tag_regex + ">";
  std::smatch a;
  const std::string tag = m.str();
  if (!std::regex_search(tag, a, std::regex(" " + name + "=\"([^\"]*)\""))) return "<no attribute " + name + ">";
  return a[1];
}

std::vector<std::string> all_tags(const std::string& dom, const std::string& tag_regex) {
  std::vector<std::string> out;
  const std::regex re(tag_regex);
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), re); it != std::sregex_iterator(); ++it) out.push_back(it->str());
  return out;
}

// Loads the page, checks the script drew it without an error, saves a screenshot; returns the DOM.
std::string render(const fs::path& page, const std::string& shot_name, const std::string& window,
                   const std::string& hash = "") {
  if (find_chromium().empty()) {
    ADD_FAILURE() << "chromium is not installed: run tools/install-deps.sh (the browser tests never skip)";
    return "";
  }
  const std::string dom = chromium(page, "--dump-dom", window, hash);
  EXPECT_EQ(attr(dom, "<body[^>]*>", "data-rendered"), "yes") << page;
  EXPECT_EQ(attr(dom, "<body[^>]*>", "data-render-error"), "<no attribute data-render-error>");
  const fs::path shots = fs::path(SIMUMAX_SCREENSHOT_DIR);
  fs::create_directories(shots);
  const fs::path shot = shots / (shot_name + ".png");
  fs::remove(shot);
  chromium(page, "--screenshot=" + shot.string(), window, hash);
  EXPECT_TRUE(fs::is_regular_file(shot) && fs::file_size(shot) > 10000) << shot;
  std::cout << "screenshot: " << shot.string() << "\n";
  return dom;
}

TEST(HtmlReportBrowser, DefaultScenarioDrawsEveryLaneSliceAndTheSummarysPeaks) {
  const fs::path dir = scratch("default");
  const CliResult r = run_cli({"run", "scenarios/default.json", "--trace", "--memory", "--html", "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dom = render(dir / "report.html", "report_default", "1300,2600");
  const Json trace = Json::parse(read_file(dir / "trace.json"));
  const Json summary = Json::parse(read_file(dir / "summary.json"));
  size_t slices = 0;
  std::map<std::pair<int64_t, int64_t>, int> lanes;
  for (const Json& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ++slices, lanes[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = 1;
  }
  EXPECT_EQ(attr(dom, "<section id=\"timeline\"[^>]*>", "data-lanes"), std::to_string(lanes.size()));
  EXPECT_EQ(attr(dom, "<section id=\"timeline\"[^>]*>", "data-slices"), std::to_string(slices));
  const std::vector<std::string> peaks = all_tags(dom, "<circle[^>]*class=\"mem-peak\"[^>]*>");
  ASSERT_EQ(peaks.size(), summary["stages"].size());
  for (const std::string& p : peaks) {
    const size_t stage = std::stoul(attr(p, "<circle[^>]*>", "data-pp-stage"));
    const int64_t expected = summary["stages"][stage]["memory"]["peak_alloc_bytes"];
    EXPECT_EQ(attr(p, "<circle[^>]*>", "data-peak-bytes"), std::to_string(expected)) << "stage " << stage;
  }
  const std::vector<std::string> verdicts = all_tags(dom, "<span[^>]*data-fits=\"[^\"]*\"[^>]*>");
  ASSERT_EQ(verdicts.size(), summary["stages"].size());
  for (const std::string& v : verdicts) {
    const size_t stage = std::stoul(attr(v, "<span[^>]*>", "data-stage"));
    const bool fits = summary["stages"][stage]["memory"]["peak_reserved_bytes"].get<double>() <=
                      summary["gpu_memory_bytes"].get<double>();
    EXPECT_EQ(attr(v, "<span[^>]*>", "data-fits"), fits ? "true" : "false");
  }
}

// ranks.json's slowest-ranks view: the latest ranks first as ranks.json orders them (late_ms, then job rank), and a
// lateness histogram that counts every rank, with no row per rank on the page.
TEST(HtmlReportBrowser, RanksViewListsTheLatestRanksFirstAndCountsEveryRank) {
  const fs::path dir = scratch("ranks");
  const CliResult r = run_cli({"run", "scenarios/default.json", "--ranks", "all", "--html", "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string dom = render(dir / "report.html", "report_ranks", "1300,2600");
  const Json ranks = Json::parse(read_file(dir / "ranks.json"));
  std::vector<std::pair<double, int64_t>> late;
  for (const Json& row : ranks["ranks"]) late.emplace_back(-row["late_ms"].get<double>(), row["rank"].get<int64_t>());
  std::sort(late.begin(), late.end());
  const size_t shown = std::min<size_t>(20, late.size());
  EXPECT_EQ(attr(dom, "<section id=\"ranks\"[^>]*>", "data-ranks"), std::to_string(late.size()));
  EXPECT_EQ(attr(dom, "<section id=\"ranks\"[^>]*>", "data-shown"), std::to_string(shown));
  EXPECT_EQ(attr(dom, "<section id=\"ranks\"[^>]*>", "data-slowest-rank"), ranks["slowest_rank"].dump());
  EXPECT_EQ(attr(dom, "<svg[^>]*id=\"ranks-histogram\"[^>]*>", "data-total"), std::to_string(late.size()));
  const std::vector<std::string> rows = all_tags(dom, "<span[^>]*class=\"rank-late\"[^>]*>");
  ASSERT_EQ(rows.size(), shown);
  for (size_t i = 0; i < shown; ++i) {
    EXPECT_EQ(attr(rows[i], "<span[^>]*>", "data-rank"), std::to_string(late[i].second)) << "row " << i;
  }
  EXPECT_EQ(attr(rows[0], "<span[^>]*>", "data-rank"), ranks["slowest_rank"].dump());
}

TEST(HtmlReportBrowser, SearchReportPlotsEveryCandidateAndTheParetoFront) {
  const fs::path dir = scratch("search");
  const CliResult r = run_cli({"search", "--model", "models/llama3-70b.json", "--system", "platforms/b200_bf16.json",
                               "--world-size", "16", "--global-batch-size", "64", "--seq-len", "4096", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const std::string dom = render(dir / "report.html", "report_search", "1300,1500");
  const Json search = Json::parse(read_file(dir / "search.json"));
  EXPECT_EQ(attr(dom, "<section id=\"search\"[^>]*>", "data-candidates"), std::to_string(search["evaluated"].get<int>()));
  EXPECT_EQ(attr(dom, "<section id=\"search\"[^>]*>", "data-feasible"), std::to_string(search["fit"].get<int>()));
  const std::string pareto = attr(dom, "<section id=\"search\"[^>]*>", "data-pareto");
  EXPECT_EQ(std::to_string(all_tags(dom, "<circle[^>]*class=\"pareto\"[^>]*>").size()), pareto);
  EXPECT_NE(dom.find("<table id=\"search-best\">"), std::string::npos);
  // Issue 34: memory over more than a decade (layouts to thousands of GiB) is drawn on a log axis, so the layouts
  // that fit are not a sliver at the left.
  double lo = search["gpu_memory_gib"].get<double>() - search["memory_margin_gib"].get<double>(), hi = 0;
  for (const auto& c : search["candidates"]) {
    if (c["status"] != "evaluated") continue;
    lo = std::min(lo, c["peak_reserved_gib"].get<double>());
    hi = std::max(hi, c["peak_reserved_gib"].get<double>());
  }
  EXPECT_EQ(attr(dom, "<section id=\"search\"[^>]*>", "data-x-scale"), hi / lo > 10 ? "log" : "linear")
      << lo << " .. " << hi << " GiB";
  EXPECT_GT(hi / lo, 10) << "the test's space should span a decade of memory";
  EXPECT_EQ(dom.find("id=\"search-records\""), std::string::npos);
  // A search that kept only the layouts that fit says so above its plot.
  const fs::path fit = scratch("search-fit");
  ASSERT_EQ(run_cli({"search", "--model", "models/llama3-70b.json", "--system", "platforms/b200_bf16.json",
                     "--world-size", "16", "--global-batch-size", "64", "--seq-len", "4096", "--records", "fit", "-q",
                     "-o", fit.string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"report", fit.string(), "-q"}).exit_code, 0);
  const std::string fit_dom = render(fit / "report.html", "report_search_fit", "1300,900");
  EXPECT_NE(fit_dom.find("id=\"search-records\""), std::string::npos);
  EXPECT_EQ(attr(fit_dom, "<section id=\"search\"[^>]*>", "data-candidates"), std::to_string(search["fit"].get<int>()));
}

TEST(HtmlReportBrowser, CompareReportDrawsOursAgainstRealOpByOpAndTheStraggler) {
  const fs::path dir = scratch("compare");
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "--granularity", "op", "-q", "-o", dir.string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"compare", dir.string(), "tests/data/compare/ranks", "-q", "--json", (dir / "compare.json").string()})
                .exit_code, 0);
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const std::string dom = render(dir / "report.html", "report_compare", "1300,4000");
  const Json cmp = Json::parse(read_file(dir / "compare.json"));
  const std::string section = "<section id=\"compare\"[^>]*>";
  EXPECT_EQ(attr(dom, section, "data-ops"), std::to_string(cmp["ops"].size()));
  EXPECT_EQ(all_tags(dom, "<tr>").size() > cmp["ops"].size(), true);
  EXPECT_EQ(attr(dom, section, "data-ranks"), "2");
  EXPECT_EQ(attr(dom, section, "data-straggler-rank"), std::to_string(cmp["straggler"]["rank"].get<int>()));
  const std::vector<std::string> slow = all_tags(dom, "<rect[^>]*class=\"rank-bar straggler\"[^>]*>");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(attr(slow[0], "<rect[^>]*>", "data-rank"), std::to_string(cmp["straggler"]["rank"].get<int>()));
  const Json& total = cmp["comparison"].back()["metrics"]["total_ms"];
  for (const char* side : {"ours", "real"}) {
    const std::string bar = "<rect[^>]*data-metric=\"total_ms\" data-side=\"" + std::string(side) + "\"[^>]*>";
    EXPECT_DOUBLE_EQ(std::stod(attr(dom, bar, "data-value")), total[side].get<double>()) << side;
  }
  EXPECT_NE(dom.find("<table id=\"compare-ops\">"), std::string::npos);
  EXPECT_NE(dom.find("id=\"straggler\""), std::string::npos);
}

TEST(HtmlReportBrowser, Sim512GpuReportIsDecimatedAndOpensQuickly) {
  const fs::path dir = scratch("sim512");
  const CliResult r = run_cli({"run", "scenarios/bench/llama3_70b_512gpu_tp8_pp4_dp16.json", "--executor", "sim",
                               "--ranks", "all", "--trace", "--trace-ranks", "all", "--memory", "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(run_cli({"report", dir.string(), "-q"}).exit_code, 0);
  const std::string dom = render(dir / "report.html", "report_sim512", "1300,4200");
  EXPECT_EQ(attr(dom, "<section id=\"timeline\"[^>]*>", "data-lanes"), "2560");  // 512 ranks x 5 lanes
  EXPECT_NE(dom.find("id=\"decimated\""), std::string::npos);
  EXPECT_EQ(attr(dom, "<section id=\"memory\"[^>]*>", "data-ranks"), "4");  // one curve per pipeline stage
  EXPECT_NE(dom.find("<section id=\"links\">"), std::string::npos);
  const Json links = Json::parse(read_file(dir / "links.json"));
  EXPECT_EQ(attr(dom, "<svg[^>]*id=\"link-series\"[^>]*>", "data-links"), "20");  // the 20 busiest, over time
  EXPECT_EQ(attr(dom, "<svg[^>]*id=\"link-series\"[^>]*>", "data-buckets"),
            std::to_string(links["links"][0]["utilisation_series"].size()));
  EXPECT_EQ(all_tags(dom, "<rect[^>]*class=\"link-row\"[^>]*>").size(), 20u);
  // How long the page took to draw is printed, not asserted: speed is measured by `bench`, not by timed tests
  // (a load on a busy 2-core machine can stall for seconds).
  const int render_ms = std::stoi(attr(dom, "<body[^>]*>", "data-render-ms"));
  std::cout << "512-GPU report drawn " << render_ms << " ms after navigation start: "
            << attr(dom, "<body[^>]*>", "data-timings") << "\n";
  EXPECT_GT(render_ms, 0);
  fs::remove_all(dir);  // ~650 MB of trace and memory files
}

// The lanes (rank, thread) with a complete event in a trace.json.
size_t trace_lanes(const fs::path& trace) {
  std::map<std::pair<int64_t, int64_t>, int> lanes;
  const Json events = Json::parse(read_file(trace))["traceEvents"];
  for (const Json& e : events) {
    if (e["ph"] == "X") lanes[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}] = 1;
  }
  return lanes.size();
}

// A what-if of two platforms (sim runs of every rank, so that each has its busiest links): both timelines with
// their lanes on one time axis, both step times as each run's summary.json, both runs' memory and links.
TEST(HtmlReportBrowser, WhatIfOfTwoPlatformsDrawsBothTimelinesOnOneAxisAndBothStepTimes) {
  const fs::path root = scratch("whatif");
  const WhatIfRuns w = run_default_on_two_systems(root, {"--executor", "sim", "--ranks", "all", "--trace", "--memory"});
  ASSERT_EQ(w.error, "");
  const fs::path page = root / "whatif.html";
  ASSERT_EQ(run_cli({"report", w.a.string(), w.b.string(), "-o", page.string(), "-q"}).exit_code, 0);
  const std::string dom = render(page, "report_whatif", "1300,3400");
  std::cout << "what-if page: " << fs::file_size(page) << " bytes, drawn " << attr(dom, "<body[^>]*>", "data-render-ms")
            << " ms after navigation start: " << attr(dom, "<body[^>]*>", "data-timings") << "\n";
  EXPECT_EQ(attr(dom, "<section id=\"whatif\"[^>]*>", "data-same-scenario"), "true");
  const fs::path dirs[] = {w.a, w.b};
  double longest_us = 0;
  for (int i = 0; i < 2; ++i) {
    const std::string side = i ? "B" : "A", id = i ? "b" : "a";
    const Json summary = Json::parse(read_file(dirs[i] / "summary.json"));
    longest_us = std::max(longest_us, summary["step_time_ms"].get<double>() * 1000);
    const std::string step = "<span class=\"whatif-step\" data-run=\"" + side + "\"[^>]*>";
    EXPECT_DOUBLE_EQ(std::stod(attr(dom, step, "data-step-time-ms")), summary["step_time_ms"].get<double>()) << side;
    const std::string timeline = "<section id=\"timeline-" + id + "\"[^>]*>";
    EXPECT_EQ(attr(dom, timeline, "data-lanes"), std::to_string(trace_lanes(dirs[i] / "trace.json"))) << side;
    const size_t stages = summary["stages"].size();
    EXPECT_EQ(attr(dom, "<section id=\"memory-" + id + "\"[^>]*>", "data-ranks"), std::to_string(stages));
    EXPECT_NE(dom.find("<section id=\"links-" + id + "\">"), std::string::npos) << side;
    EXPECT_EQ(all_tags(dom, "<span[^>]*data-run=\"" + side + "\"[^>]*data-fits=[^>]*>").size(), stages);
  }
  // One time axis: both end where the longer step does.
  for (const char* id : {"a", "b"}) {
    const std::string timeline = std::string("<section id=\"timeline-") + id + "\"[^>]*>";
    EXPECT_NEAR(std::stod(attr(dom, timeline, "data-axis-end-us")), longest_us, 1e-3) << id;
  }
  fs::remove_all(root);
}

// A sweep's page (sweep --html): a row per case with sweep.csv's step time and status, a bar per case that ran,
// the best case per layout; `#sort=step ms` sorts the table as a click on that column does.
TEST(HtmlReportBrowser, SweepPageHasARowPerCaseWithTheStepTimesOfSweepCsv) {
  const fs::path dir = scratch("sweep");
  const fs::path page = dir / "sweep.html";
  fs::create_directories(dir);
  const CliResult r = run_cli({"sweep", "tests/data/sweep/whatif.json", "-q", "-o", (dir / "out").string(), "--html",
                               page.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::vector<std::string>> csv = parse_csv(read_file(dir / "out/sweep.csv"));
  ASSERT_EQ(csv.size(), 13u);
  const auto col = [&](const std::string& name) {
    return static_cast<size_t>(std::find(csv[0].begin(), csv[0].end(), name) - csv[0].begin());
  };
  const std::string dom = render(page, "sweep", "1300,1900", "#sort=step%20ms");
  EXPECT_EQ(attr(dom, "<section id=\"sweep\"[^>]*>", "data-cases"), "12");
  const std::vector<std::string> rows = all_tags(dom, "<tr data-index=[^>]*>");
  ASSERT_EQ(rows.size(), 12u);
  std::vector<double> shown;  // the table's step times, in the order drawn (sorted by step time)
  for (const std::string& row : rows) {
    const size_t i = std::stoul(attr(row, "<tr[^>]*>", "data-index"));
    ASSERT_LT(i, 12u);
    const std::vector<std::string>& line = csv[i + 1];
    EXPECT_EQ(attr(row, "<tr[^>]*>", "data-status"), line[col("status")]) << "case " << i;
    const std::string step = attr(row, "<tr[^>]*>", "data-step-time-ms");
    EXPECT_EQ(step.empty(), line[col("step_time_ms")].empty()) << "case " << i;
    if (!step.empty()) {
      EXPECT_EQ(std::strtod(step.c_str(), nullptr), std::strtod(line[col("step_time_ms")].c_str(), nullptr)) << i;
      shown.push_back(std::strtod(step.c_str(), nullptr));
    }
  }
  EXPECT_EQ(shown.size(), 8u);
  EXPECT_TRUE(std::is_sorted(shown.begin(), shown.end()));
  EXPECT_EQ(attr(dom, "<table[^>]*id=\"sweep-cases\"[^>]*>", "data-sorted-by"), "step ms up");
  const std::vector<std::string> bars = all_tags(dom, "<rect[^>]*class=\"bar-case\"[^>]*>");
  ASSERT_EQ(bars.size(), 8u);  // the 4 invalid cases (tp 3) have a cross, not a bar
  for (const std::string& bar : bars) {
    const size_t i = std::stoul(attr(bar, "<rect[^>]*>", "data-index"));
    EXPECT_EQ(std::strtod(attr(bar, "<rect[^>]*>", "data-step-time-ms").c_str(), nullptr),
              std::strtod(csv[i + 1][col("step_time_ms")].c_str(), nullptr)) << i;
  }
  EXPECT_EQ(all_tags(dom, "<text[^>]*class=\"bar-missing off\"[^>]*>").size(), 4u);
  const size_t best = dom.find("<table id=\"sweep-best\">");
  ASSERT_NE(best, std::string::npos);
  const std::string best_table = dom.substr(best, dom.find("</table>", best) - best);
  EXPECT_EQ(all_tags(best_table, "<tr>").size(), 4u);  // the header and tp 1, 2, 3
  EXPECT_NE(best_table.find("c0006"), std::string::npos);
  EXPECT_NE(best_table.find("c0008"), std::string::npos);
  EXPECT_NE(best_table.find("none fits"), std::string::npos);
}

}  // namespace
}  // namespace simumax::tests
