// simumax-sim report: a run's or a search's output folder -> one self-contained HTML file (docs/report.md).
#include <filesystem>
#include <iostream>
#include <memory>

#include "engine/report/html_report.hpp"
#include "engine/report/text_file.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct ReportArgs {
  std::string dir;
  std::string out;  // default: <dir>/report.html
  report::HtmlReportOptions options;
  bool quiet = false;
};

int do_report(const ReportArgs& a) {
  const std::string out = a.out.empty() ? (std::filesystem::path(a.dir) / "report.html").string() : a.out;
  report::write_file_atomically(out, report::html_report(a.dir, a.options));
  if (!a.quiet) std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

std::function<int()> add_report(CLI::App& app) {
  auto a = std::make_shared<ReportArgs>();
  CLI::App* sub = app.add_subcommand(
      "report", "write one self-contained HTML report (no network needed) of a run or search output folder");
  sub->add_option("dir", a->dir,
                  "the folder `run` or `search` wrote: summary.json, and trace.json / memory_timeline.json (run with "
                  "--trace --memory) / links.json / search.json / compare.json (compare --json DIR/compare.json) when "
                  "present")
      ->required();
  sub->add_option("-o,--out", a->out, "the HTML file to write (default: DIR/report.html)");
  sub->add_option("--max-slices", a->options.max_slices,
                  "timeline slices above this are decimated (short slices of one kind merged; the page says so)")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1000}, size_t{100000000}));
  sub->add_flag("-q,--quiet", a->quiet, "print nothing");
  sub->footer("The page draws the summary with a fit verdict per stage, the pipeline timeline (zoom, hover), the "
              "memory curve of each traced rank, the busiest links of a sim run and their utilisation over time, a "
              "search's step time against peak memory, and a compare's ours against the real run (step breakdown, "
              "op by op, ranks). Same folder -> byte-identical HTML.");
  return [sub, a]() { return sub->parsed() ? do_report(*a) : -1; };
}

}  // namespace simumax::tools
