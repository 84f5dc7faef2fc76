// simumax-sim report: a run's or a search's output folder -> one self-contained HTML file; two run folders -> a
// what-if page of the two side by side (docs/report.md).
#include <filesystem>
#include <iostream>
#include <memory>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/text_file.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct ReportArgs {
  std::vector<std::string> dirs;    // one folder: its report; two: the what-if of the two runs
  std::vector<std::string> labels;  // "A=text" / "B=text" (what-if only)
  std::string out;                  // default: <dir>/report.html; required for a what-if
  report::HtmlReportOptions options;
  bool quiet = false;
};

// A what-if side's name: --label X=text, else the folder's name; the whole path when both folders have one name.
std::vector<report::WhatIfRun> whatif_runs(const ReportArgs& a) {
  namespace fs = std::filesystem;
  std::vector<report::WhatIfRun> runs;
  for (const std::string& d : a.dirs) runs.push_back({d, fs::path(d).lexically_normal().filename().string()});
  for (auto& r : runs) {
    if (r.label.empty()) r.label = fs::path(r.dir).lexically_normal().string();  // "." or a trailing "/"
  }
  if (runs[0].label == runs[1].label) {
    runs[0].label = fs::path(runs[0].dir).lexically_normal().string();
    runs[1].label = fs::path(runs[1].dir).lexically_normal().string();
  }
  for (const std::string& l : a.labels) {
    if (l.size() < 3 || (l[0] != 'A' && l[0] != 'B') || l[1] != '=') {
      throw common::UsageError("--label " + l + ": expected A=<name> or B=<name> (A: the first folder, B: the second)");
    }
    runs[l[0] == 'A' ? 0 : 1].label = l.substr(2);
  }
  return runs;
}

int do_report(const ReportArgs& a) {
  if (a.dirs.size() == 1 && !a.labels.empty()) {
    throw common::UsageError("--label names the two runs of a what-if: give two folders (report DIR_A DIR_B -o FILE)");
  }
  if (a.dirs.size() == 2 && a.out.empty()) {
    throw common::UsageError("report DIR_A DIR_B: give -o FILE (the what-if page belongs to neither run's folder)");
  }
  const std::string out = a.out.empty() ? (std::filesystem::path(a.dirs[0]) / "report.html").string() : a.out;
  if (a.dirs.size() == 1) {
    report::write_file_atomically(out, report::html_report(a.dirs[0], a.options));
  } else {
    const std::vector<report::WhatIfRun> runs = whatif_runs(a);
    report::write_file_atomically(out, report::html_whatif_report(runs[0], runs[1], a.options));
    const std::vector<std::string> differ = report::whatif_scenario_differences(runs[0], runs[1]);
    if (!differ.empty() && !a.quiet) {
      std::cerr << "note: the two runs differ in more than the platform (the page says so):";
      for (size_t i = 0; i < differ.size(); ++i) std::cerr << (i ? "; " : " ") << differ[i];
      std::cerr << "\n";
    }
  }
  if (!a.quiet) std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

std::function<int()> add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report", "write one self-contained HTML report (no network needed) of a run, search or sweep output folder, "
                "or a what-if of two runs side by side");
  sub->add_option("dir", a->dirs,
                  "the folder `run` or `search` wrote: summary.json, and trace.json / memory_timeline.json (run with "
                  "--trace --memory) / links.json / search.json / compare.json (compare --json DIR/compare.json) when "
                  "present, or the sweep.json of a sweep's folder. Two run folders (DIR_A DIR_B): a what-if page of the two")
      ->required()
      ->expected(1, 2)
      ->type_name("DIR [DIR_B]");
  sub->add_option("-o,--out", a->out, "the HTML file to write (default: DIR/report.html; required for two folders)");
  sub->add_option("--label", a->labels,
                  "what-if only: A=<name> or B=<name> names the first or second run on the page (default: the "
                  "folder's name)");
  sub->add_option("--max-slices", a->options.max_slices,
                  "timeline slices above this are decimated (short slices of one kind merged; the page says so)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1000}, size_t{100000000}));
  sub->add_flag("-q,--quiet", a->quiet, "print nothing (a what-if's note on differing scenarios included)");
  sub->footer("The page draws the summary with a fit verdict per stage, the pipeline timeline (zoom, hover), the "
              "memory curve of each traced rank, the busiest links of a sim run and their utilisation over time, a "
              "search's step time against peak memory, and a compare's ours against the real run (step breakdown, "
              "op by op, ranks). With two run folders (the same scenario on two platforms, e.g. `run --system`): "
              "one table of both summaries with B - A (step time, MFU, exposed communication, peak memory and fit "
              "per stage), both timelines and memory curves on one time axis, and the busiest links of each; when "
              "the runs differ in more than the platform (layout, batch, model, executor...) the page lists the "
              "fields and still draws both. Same folders -> byte-identical HTML.");
  return [sub, a]() { return sub->parsed() ? do_report(*a) : -1; };
}

}  // namespace simumax::tools
