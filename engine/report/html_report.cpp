#include "engine/report/html_report.hpp"

#include <filesystem>
#include <string_view>

#include "engine/common/error.hpp"
#include "engine/report/report_views.hpp"
#include "engine/report/text_file.hpp"
#include "engine/report/web_assets.hpp"

namespace simumax::report {

namespace {

namespace fs = std::filesystem;

bool has(const std::string& dir, const char* name) {
  std::error_code ec;
  return fs::is_regular_file(fs::path(dir) / name, ec);
}

std::string at(const std::string& dir, const char* name) { return (fs::path(dir) / name).string(); }

std::string escape_html(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// JSON inside <script type="application/json">: "</script>" or "<!--" in a string must not end the element, so
// every '<' is written as \u003c (outside strings JSON has no '<').
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<') out += "\\u003c";
    else out += c;
  }
  return out;
}

// Replaces the first occurrence of `mark` in `page` (the template) with `text`; inserted text is never rescanned.
void fill(std::string& page, std::string_view mark, std::string_view text) {
  const size_t at_pos = page.find(mark);
  if (at_pos == std::string::npos) throw common::InternalError("web/report.html has no " + std::string(mark));
  page.replace(at_pos, mark.size(), text);
}

html::Json report_data(const std::string& dir, const HtmlReportOptions& options) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw common::ConfigError(dir, "", "not a folder (expected a run, search or sweep output folder)");
  }
  if (!has(dir, "summary.json") && !has(dir, "search.json") && !has(dir, "sweep.json")) {
    throw common::ConfigError(dir, "", "has neither summary.json (a run), search.json (a search) nor sweep.json (a "
                                       "sweep): nothing to report");
  }
  html::Json data = html::Json::object();
  data["generator"] = "simumax-sim report";
  if (has(dir, "summary.json")) data["summary"] = html::summary_view(read_summary(at(dir, "summary.json")));
  if (has(dir, "trace.json")) data["timeline"] = html::trace_view(at(dir, "trace.json"), options.max_slices);
  if (has(dir, "memory_timeline.json")) {
    const html::JsonDoc timeline = html::read_json_doc(at(dir, "memory_timeline.json"));
    if (has(dir, "memory_snapshot.json")) {
      const html::JsonDoc snapshot = html::read_json_doc(at(dir, "memory_snapshot.json"), "allocations");
      data["memory"] = html::memory_view(timeline, &snapshot, options.max_memory_points);
    } else {
      data["memory"] = html::memory_view(timeline, nullptr, options.max_memory_points);
    }
  }
  if (has(dir, "ranks.json")) {
    data["ranks"] = html::ranks_view(read_rank_stats(at(dir, "ranks.json")), options.max_ranks, options.rank_bins);
  }
  if (has(dir, "links.json")) data["links"] = html::links_view(html::read_json_doc(at(dir, "links.json")));
  if (has(dir, "compare.json")) {
    data["compare"] = html::compare_view(html::read_json_doc(at(dir, "compare.json")), options.max_compare_ops);
  }
  if (has(dir, "search.json")) data["search"] = html::search_view(html::read_json_doc(at(dir, "search.json")));
  if (has(dir, "sweep.json")) data["sweep"] = html::sweep_view(html::read_json_doc(at(dir, "sweep.json")));
  return data;
}

html::Json whatif_data(const WhatIfRun& a, const WhatIfRun& b, const HtmlReportOptions& options) {
  html::Json runs = html::Json::array();
  for (const WhatIfRun* r : {&a, &b}) {
    std::error_code ec;
    if (!fs::is_directory(r->dir, ec)) {
      throw common::ConfigError(r->dir, "", "not a folder (expected a run output folder)");
    }
    if (!has(r->dir, "summary.json")) {
      throw common::ConfigError(r->dir, "", "has no summary.json: not a run output folder (a what-if compares two "
                                            "folders `simumax-sim run` wrote)");
    }
    html::Json d = report_data(r->dir, options);
    d.erase("search");  // a what-if draws the runs, not a search or compare that shares their folder
    d.erase("compare");
    runs.push_back(std::move(d));
  }
  html::Json differences = html::whatif_differences(read_summary(at(a.dir, "summary.json")),
                                                    read_summary(at(b.dir, "summary.json")));
  html::Json w = {{"labels", {a.label, b.label}}, {"runs", std::move(runs)}, {"differences", std::move(differences)}};
  return {{"generator", "simumax-sim report"}, {"whatif", std::move(w)}};
}

}  // namespace

std::string report_data_json(const std::string& dir, const HtmlReportOptions& options) {
  return report_data(dir, options).dump();
}

std::vector<std::string> whatif_scenario_differences(const WhatIfRun& a, const WhatIfRun& b) {
  for (const WhatIfRun* r : {&a, &b}) {
    if (!has(r->dir, "summary.json")) {
      throw common::ConfigError(r->dir, "", "has no summary.json: not a run output folder");
    }
  }
  const html::Json d = html::whatif_differences(read_summary(at(a.dir, "summary.json")),
                                                read_summary(at(b.dir, "summary.json")));
  std::vector<std::string> out;
  const auto text = [](const html::Json& v) {
    return v.is_null() ? std::string("none") : v.is_string() ? v.get<std::string>() : v.dump();
  };
  for (const html::Json& f : d["scenario"]) {
    out.push_back(f["field"].get<std::string>() + " (" + a.label + ": " + text(f["a"]) + ", " + b.label + ": " +
                  text(f["b"]) + ")");
  }
  return out;
}

std::string whatif_data_json(const WhatIfRun& a, const WhatIfRun& b, const HtmlReportOptions& options) {
  return whatif_data(a, b, options).dump();
}

namespace {

std::string page_of(const std::string& title, const std::string& data, const std::string& extra_js) {
  std::string page(web::kReportHtml);
  fill(page, "@TITLE@", escape_html(title));  // <title> and <h1>
  fill(page, "@TITLE@", escape_html(title));
  fill(page, "/*@CSS@*/", web::kReportCss);
  fill(page, "@DATA@", script_safe(data));
  fill(page, "/*@JS@*/", std::string(web::kReportJs) + "\n" + web::kReportCompareJs + "\n" + web::kReportWhatIfJs +
                             "\n" + web::kReportSweepJs + "\n" + web::kReportChartsJs + "\n" +
                             extra_js);
  return page;
}

}  // namespace

std::string html_report(const std::string& dir, const HtmlReportOptions& options) {
  const std::string name =
      options.title_name.empty() ? fs::path(dir).lexically_normal().filename().string() : options.title_name;
  return page_of("simumax-sim report: " + name, report_data_json(dir, options), "");
}

std::string write_html_report(const std::string& dir, const HtmlReportOptions& options) {
  const std::string path = dir + "/report.html";
  write_file_atomically(path, html_report(dir, options));
  return path;
}

std::string html_whatif_report(const WhatIfRun& a, const WhatIfRun& b, const HtmlReportOptions& options) {
  return page_of("simumax-sim what-if: " + a.label + " against " + b.label, whatif_data_json(a, b, options), "");
}

std::string sweep_data_json(const std::string& dir) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) throw common::ConfigError(dir, "", "not a folder (expected a sweep's output folder)");
  if (!has(dir, "sweep.json")) {
    throw common::ConfigError(dir, "",
                              "has no sweep.json: not a sweep's output folder (sweep, or sweep --merge, writes it)");
  }
  html::Json data = {{"generator", "simumax-sim sweep"},
                     {"sweep", html::sweep_view(html::read_json_doc(at(dir, "sweep.json")))}};
  return data.dump();
}

std::string html_sweep_report(const std::string& dir) {
  const std::string data = sweep_data_json(dir);
  // The title is the sweep's name, not the folder's: a local run and a merge of its shards give the same page.
  const std::string name = html::Json::parse(data)["sweep"]["name"].get<std::string>();
  return page_of("simumax-sim sweep: " + name, data, "");
}

std::string html_app_page() {
  return page_of("simumax-sim", "{\"app\":true,\"generator\":\"simumax-sim serve\"}", web::kAppJs);
}

}  // namespace simumax::report
