// The self-contained HTML report of a run or search folder (`simumax-sim report`, `run --html`): the folder's
// JSON outputs are read here, reduced to what the page draws, and inlined with the page's own JS/CSS (web/).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace simumax::report {

struct HtmlReportOptions {
  // Timeline slices above this are decimated (runs of short slices of one kind on a lane are merged; the page
  // says how many were merged). Default 300,000: the page then opens in well under a second.
  size_t max_slices = 300000;
  // Memory curve points per rank above this keep, per run of consecutive samples, the highest one (and always
  // the peak): the chart is ~900 px wide, and more points only slow the page.
  size_t max_memory_points = 1500;
  // Op-by-op lines of compare.json drawn (compare --json has every op; the page says how many it left out).
  size_t max_compare_ops = 200;
  // ranks.json's slowest-ranks view: the latest ranks listed, and the bins of the lateness histogram over all ranks.
  size_t max_ranks = 20;
  size_t rank_bins = 40;
  // The run's name in the page's title; empty: the folder's name (run writes the page in its staging folder and
  // gives the run folder's).
  std::string title_name;
};

// The files a report reads from `dir`, each optional: summary.json, trace.json, memory_timeline.json,
// memory_snapshot.json (what is live at the peak), links.json (sim runs), ranks.json (the slowest ranks), search.json (a search output),
// compare.json (`compare OURS REAL --json DIR/compare.json`).
// REQUIRES: nothing; throws common::ConfigError(file, json-pointer, what) for a file that is not what
// simumax-sim writes, and for a folder with neither summary.json nor search.json. Never echoes file contents.
// Same files and options -> byte-identical page.
std::string html_report(const std::string& dir, const HtmlReportOptions& options);
// Writes html_report(dir, options) as `dir`/report.html (complete, or not at all); returns its path. The page
// reads the folder's other files, so it is written last. Throws as html_report, and common::UsageError if the
// file cannot be written.
std::string write_html_report(const std::string& dir, const HtmlReportOptions& options);

// One side of a what-if: a run's output folder and the name the page gives it.
struct WhatIfRun {
  std::string dir;
  std::string label;
};

// A what-if of two runs (`simumax-sim report DIR_A DIR_B`): the same sections as html_report for each run, side
// by side (the summary as one table with B − A, the timelines and memory curves on one time axis, the busiest
// links of each), and the fields in which the two differ besides the platform (the page says so and draws the
// rest all the same). A search's or compare's part of a folder is not drawn.
// REQUIRES: nothing; throws common::ConfigError(dir, "", ...) naming the folder and the missing file when a folder
// is not a run output (no summary.json), and as html_report for a file that is not what simumax-sim writes.
// Same folders, labels and options -> byte-identical page.
std::string html_whatif_report(const WhatIfRun& a, const WhatIfRun& b, const HtmlReportOptions& options);

// The fields in which the two runs' summary.json differ besides the platform (what the what-if page warns about),
// as "parallel/tp (A: 1, B: 2)" with the runs' labels; empty for the same scenario. Throws as html_whatif_report.
std::vector<std::string> whatif_scenario_differences(const WhatIfRun& a, const WhatIfRun& b);

// The what-if page's data (what html_whatif_report inlines): for tests.
std::string whatif_data_json(const WhatIfRun& a, const WhatIfRun& b, const HtmlReportOptions& options);

// The page of a sweep (`simumax-sim sweep --html FILE`, `sweep --merge DIR --html FILE`): `dir`/sweep.json drawn as
// a sortable table of every case, the step time of each case grouped by the swept values, and the best case per
// layout. Reads sweep.json only (not the case folders), and its title is the sweep's name, not the folder's: a
// local run and a merge of the same sweep give the same bytes.
// REQUIRES: nothing; throws common::ConfigError(dir, "", ...) when `dir` is not a folder or has no sweep.json, and
// ConfigError(dir/sweep.json, json-pointer, what) for a file that is not what sweep writes.
std::string html_sweep_report(const std::string& dir);

// The sweep page's data (what html_sweep_report inlines): for tests.
std::string sweep_data_json(const std::string& dir);

// The page of `simumax-sim serve`: the report's template and scripts with web/app.js, and no data (the app
// fetches it from the server).
std::string html_app_page();

// The page's data (one JSON object, what html_report inlines): for tests and for `serve`.
std::string report_data_json(const std::string& dir, const HtmlReportOptions& options);

}  // namespace simumax::report
