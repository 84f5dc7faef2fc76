// simumax-sim run: one scenario (or three config files) -> summary table + summary.json.
#include <filesystem>
#include <fstream>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/simulate.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"
#include "tools/link_report.hpp"
#include "tools/run_outputs.hpp"

namespace simumax::tools {

namespace {

struct RunArgs {
  std::string scenario;
  ConfigArgs configs;
  EngineArgs engine;
  std::string out_dir;
  bool quiet = false;
  OutputArgs outputs;
};

int do_run(const RunArgs& a) {
  config::Scenario s = load_scenario_or_configs(a.scenario, a.configs);
  apply_fidelity(s, a.engine.fidelity);
  RunOptions o = make_run_options(a.engine);
  const std::string dir = a.out_dir.empty() ? "out/" + s.name : a.out_dir;
  std::filesystem::create_directories(dir);
  if (o.executor == ExecutorKind::kSim && !o.platform_xml && s.platform_path) o.platform_xml = s.platform_path;
  if (o.executor == ExecutorKind::kSim && !o.platform_xml) o.platform_out = dir + "/platform.xml";
  const RunResult r = simulate(s, o);
  std::ofstream(dir + "/summary.json") << report::summary_json(r.summary);
  if (!a.quiet) {
    std::cout << report::summary_table(r.summary);
    std::cout << "\nwrote " << dir << "/summary.json\n";
  }
  for (const std::string& path : write_outputs(dir, s, r, a.outputs)) {
    if (!a.quiet) std::cout << "wrote " << path << "\n";
  }
  if (o.executor == ExecutorKind::kSim) {
    const std::string links = write_links_json(dir, r.timeline);
    if (!a.quiet) std::cout << busiest_links_table(r.timeline, 5) << "wrote " << links << "\n";
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
  return [sub, args]() { return sub->parsed() ? do_run(*args) : -1; };
}

}  // namespace simumax::tools
