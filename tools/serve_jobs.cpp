#include "tools/serve_jobs.hpp"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>
#include <utility>

#include "engine/common/error.hpp"
#include "engine/config/config_schema.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/run_outputs.hpp"
#include "engine/report/serve_request.hpp"
#include "engine/report/rank_stats.hpp"
#include "engine/report/summary.hpp"
#include "engine/report/text_file.hpp"
#include "engine/compare/trace_compare.hpp"
#include "engine/simulate.hpp"

namespace simumax::tools {

namespace {

namespace fs = std::filesystem;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A config error names a file of the scratch folder: the user knows it by its name alone ("scenario.json: ...").
[[noreturn]] void rethrow_without(const std::string& dir, const common::ConfigError& e) {
  std::string what = e.what();
  for (size_t at; (at = what.find(dir + "/")) != std::string::npos;) what.erase(at, dir.size() + 1);
  throw common::UsageError(what);
}

struct ScenarioRun {
  config::Scenario scenario;
  RunResult result;
};

// Writes the run's optional files (report::write_run_outputs) into `dir`.
void write_outputs(const ScratchDir& dir, const ScenarioRun& run, const report::RunOutputOptions& outputs) {
  const RunResult& r = run.result;
  const report::RunView view{run.scenario, r.model, r.cost, r.graph, r.timeline, r.summary.granularity};
  report::write_run_outputs(dir.path(), view, r.summary, outputs);
}

// Writes the request's scenario into `dir` and runs it there with `lowering`; summary.json and ranks.json are written.
ScenarioRun run_in(const ScratchDir& dir, const std::string& body, const graph::LoweringOptions& lowering) {
  const std::string scenario = report::inline_scenario_text(body);
  const std::string file = dir.path() + "/scenario.json";
  try {
    report::write_file_atomically(file, scenario);
    config::Scenario s = config::load_scenario(file);
    RunOptions options;
    options.lowering = lowering;
    options.max_tasks = kServeMaxTasks;
    RunResult r = simulate(s, options);
    report::write_summary_json(dir.path(), r.summary);
    report::write_ranks_json(dir.path(), {s.name, r.summary.executor, r.summary.scope}, r.graph, r.timing, r.memory);
    return {std::move(s), std::move(r)};
  } catch (const common::ConfigError& e) {
    rethrow_without(dir.path(), e);
  } catch (const common::UsageError& e) {
    const std::string what = e.what();
    if (what.find("over --max-tasks") == std::string::npos) throw;
    throw common::UsageError(what + " (serve's limit, for a request; the CLI's run takes larger steps)");
  }
}

}  // namespace

namespace {
std::mutex live_mutex;
std::set<std::string> live_dirs;  // the ScratchDirs now
}  // namespace

ScratchDir::ScratchDir() {
  std::string tmpl = (fs::temp_directory_path() / "simumax-serve-XXXXXX").string();
  std::lock_guard<std::mutex> lock(live_mutex);
  if (!::mkdtemp(tmpl.data())) throw common::InternalError("cannot create a temporary folder");
  path_ = tmpl;
  live_dirs.insert(path_);
}

ScratchDir::~ScratchDir() {
  std::lock_guard<std::mutex> lock(live_mutex);
  std::error_code ec;
  fs::remove_all(path_, ec);
  live_dirs.erase(path_);
}

void remove_scratch_dirs() {
  std::lock_guard<std::mutex> lock(live_mutex);
  for (const std::string& d : live_dirs) {
    // A run may still be writing into it: a file made during the removal makes it fail once.
    std::error_code ec;
    for (int tries = 0; tries < 3 && (fs::remove_all(d, ec), fs::exists(d)); ++tries) {
    }
  }
  live_dirs.clear();
}

const std::vector<std::string>& serve_run_files() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> f = {"scenario.json", "summary.json", "ranks.json", "trace.json", "memory_timeline.json",
                                  "memory_snapshot.json", "memory_snapshot.pickle", "report.html"};
    for (const char* name : report::kSimumaxFiles) f.emplace_back(name);
    return f;
  }();
  return files;
}

std::string run_request(const std::string& body) {
  ScratchDir dir;
  ScenarioRun run = run_in(dir, body, {});
  report::RunOutputOptions outputs;
  outputs.trace = true;
  outputs.memory = true;
  write_outputs(dir, run, outputs);
  return report::report_data_json(dir.path(), report::HtmlReportOptions{});
}

std::string schema_request(const std::string& body) {
  ScratchDir dir;
  const std::string file = dir.path() + "/scenario.json";
  try {
    report::write_file_atomically(file, report::inline_scenario_text(body));
    return config::scenario_schema_json(file);
  } catch (const common::ConfigError& e) {
    rethrow_without(dir.path(), e);
  }
}

std::string run_file_request(const std::string& body, const std::string& file) {
  const auto& names = serve_run_files();
  if (std::find(names.begin(), names.end(), file) == names.end()) {
    std::string valid;
    for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
    throw common::UsageError("file: expected one of " + valid);
  }
  ScratchDir dir;
  ScenarioRun run = run_in(dir, body, {});
  report::RunOutputOptions outputs;
  outputs.trace = true;
  outputs.memory = true;
  outputs.simumax = std::find(std::begin(report::kSimumaxFiles), std::end(report::kSimumaxFiles), file) !=
                    std::end(report::kSimumaxFiles);
  write_outputs(dir, run, outputs);
  if (file == "report.html") report::write_html_report(dir.path(), {});
  return slurp(dir.path() + "/" + file);
}

std::string compare_request(const std::string& body, const std::string& real_path, const std::string& kernel_classes) {
  ScratchDir dir;
  graph::LoweringOptions op;
  op.granularity = graph::Granularity::kOp;  // the op-by-op table lines up our ops with the real ones
  ScenarioRun run = run_in(dir, body, op);
  report::RunOutputOptions outputs;
  outputs.trace = true;
  write_outputs(dir, run, outputs);
  compare::CompareOptions o;
  o.ours = dir.path();
  o.real = real_path;
  o.kernel_classes = kernel_classes;
  const compare::Comparison c = compare::compare_runs(o);
  report::write_file_atomically(dir.path() + "/compare.json", compare::comparison_json(c));
  return report::report_data_json(dir.path(), report::HtmlReportOptions{});
}

}  // namespace simumax::tools
