// simumax-sim run: one scenario (or three config files) -> summary table + summary.json.
#include <filesystem>
#include <iostream>
#include <optional>
#include <sstream>

#include "engine/common/units.hpp"
#include "engine/simulate.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/links_json.hpp"
#include "engine/report/rank_stats.hpp"
#include "engine/report/run_folder.hpp"
#include "engine/report/run_outputs.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct RunArgs {
  std::string scenario;
  ConfigArgs configs;
  EngineArgs engine;
  std::string out_dir;
  bool quiet = false;
  report::RunOutputOptions outputs;
  double margin_gib = 0;
  bool require_fit = false;
  bool html = false;  // also write report.html (docs/report.md)
};

int do_run(const RunArgs& a) {
  config::Scenario s = load_scenario_or_configs(a.scenario, a.configs);
  apply_fidelity(s, a.engine.fidelity);
  RunOptions o = make_run_options(a.engine);
  const std::string dir = a.out_dir.empty() ? "out/" + s.name : a.out_dir;
  make_output_folder(dir);
  report::lock_run_folder(dir);
  // Every file is written into the staging folder and moved in at the end: a run refused or failing late leaves
  // the earlier run's files as they were.
  report::RunStaging stage(dir);
  if (o.executor == ExecutorKind::kSim && !o.platform_xml && s.platform_path) o.platform_xml = s.platform_path;
  // The fast executor has no network to put a platform on: say so rather than give the single-switch time
  // silently (a scenario's platform is for --executor sim; README "Interconnect what-ifs").
  if (o.executor == ExecutorKind::kFast && s.platform_path) {
    std::cerr << "note: the scenario names the platform " << *s.platform_path
              << ", which the fast executor does not use (no contention, no topology); add --executor sim to run "
                 "on it\n";
  }
  if (o.executor == ExecutorKind::kSim && !o.platform_xml) o.platform_out = stage.path() + "/platform.xml";
  // Only the trace and the memory files draw every task: without them the sim executor keeps no per-task times
  // (the summary and ranks.json are folded as the tasks end).
  o.keep_timeline = a.outputs.trace || a.outputs.memory || a.outputs.simumax;
  RunResult r = simulate(s, o);
  report::judge_fit(r.summary, a.margin_gib * common::kGiB);
  std::ostringstream out;  // printed once the files are in the run folder, under their names there
  const std::string summary = report::write_summary_json(stage.path(), r.summary);
  out << report::summary_table(r.summary) << "\nwrote " << summary << "\n";
  const std::string ranks = report::write_ranks_json(stage.path(), {s.name, r.summary.executor, r.summary.scope},
                                                      r.graph, r.timing, r.memory);
  out << "wrote " << ranks << "\n";
  const report::RunView view{s, r.model, r.cost, r.graph, r.timeline, r.summary.granularity};
  for (const std::string& path : report::write_run_outputs(stage.path(), view, r.summary, a.outputs)) {
    out << "wrote " << path << "\n";
  }
  if (o.executor == ExecutorKind::kSim) {
    const std::string links = report::write_links_json(stage.path(), r.timeline);
    out << report::busiest_links_table(r.timeline, 5) << "wrote " << links << "\n";
  }
  if (a.html) {  // last: the page reads the files written above
    report::HtmlReportOptions page;
    page.title_name = std::filesystem::path(dir).lexically_normal().filename().string();
    out << "wrote " << report::write_html_report(stage.path(), page) << "\n";
  }
  stage.commit(o.platform_xml);
  if (!a.quiet) std::cout << stage.final_paths(out.str());
  if (!r.summary.fits && a.require_fit) {
    std::cerr << "error: " << s.name << " does not fit in GPU memory (--require-fit): exit " << kExitDoesNotFit << "\n";
    return kExitDoesNotFit;
  }
  return 0;
}

}  // namespace

std::function<int()> add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "simulate one training step and report time and memory");
  sub->add_option("scenario", args->scenario, "scenario JSON file (or use --model/--strategy/--system)");
  add_config_options(*sub, args->configs);
  add_engine_options(*sub, args->engine);
  sub->add_option("-o,--out", args->out_dir, "output folder (default: out/<scenario name>)");
  sub->add_flag("-q,--quiet", args->quiet, "print nothing; only write the files");
  add_output_options(*sub, args->outputs);
  sub->add_flag("--html", args->html, "also write report.html, the self-contained HTML report (docs/report.md)");
  sub->add_option("--memory-margin-gib", args->margin_gib,
                  "GiB the fit verdict keeps free on every GPU beyond the peak reserved memory (search's default is "
                  "6, SimuMax's gmi_error)")
      ->capture_default_str()
      ->check(non_negative_number());
  sub->add_flag("--require-fit", args->require_fit,
                "exit with code 4 when a stage does not fit in GPU memory (the files are written all the same)");
  sub->footer(
      "A stage fits when its peak reserved memory plus --memory-margin-gib is at most the GPU memory (the system's "
      "mem_gbs); the table and summary.json give the verdict and the headroom of every stage.\n"
      "Exit codes: 0 done; 2 bad input or a bad -o (an existing file, a folder that cannot be created); 3 a bug of "
      "ours; 4 --require-fit and a stage does not fit; 130 interrupted.");
  return [sub, args]() { return sub->parsed() ? do_run(*args) : -1; };
}

}  // namespace simumax::tools
