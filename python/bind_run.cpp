// Scenarios and runs for Python: the configs read with the CLI's checks, one step simulated in-process, and the
// run's reports (summary, table, trace, memory files) written through the engine's own writers.
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "engine/common/enum_names.hpp"
#include "engine/common/error.hpp"
#include "engine/config/config_text.hpp"
#include "engine/report/run_outputs.hpp"
#include "engine/report/simumax_results.hpp"
#include "engine/report/simumax_strings.hpp"
#include "engine/report/rank_stats.hpp"
#include "engine/report/run_folder.hpp"
#include "engine/report/summary.hpp"
#include "engine/simulate.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;

namespace simumax::python {

namespace {

using ScenarioPtr = std::shared_ptr<config::Scenario>;

// A finished run and the scenario it ran (the report writers read both).
struct Run {
  ScenarioPtr scenario;
  RunResult result;
  report::RunView view() const {
    return {*scenario, result.model, result.cost, result.graph, result.timeline, result.summary.granularity};
  }
};

config::ConfigKind parse_kind(const std::string& kind) {
  if (kind == "model") return config::ConfigKind::kModel;
  if (kind == "strategy") return config::ConfigKind::kStrategy;
  if (kind == "system") return config::ConfigKind::kSystem;
  throw common::UsageError("config kind '" + kind + "': expected model, strategy or system");
}

void set_fidelity(config::Scenario& s, const std::string& fidelity) {
  if (fidelity.empty()) return;
  s.strategy.fidelity = common::enum_from_name(config::kFidelities, fidelity, "fidelity");
}

// SimGrid's engine installs its own SIGINT handler (it prints a status and exits the process): after a `sim`
// run, Ctrl-C in the interpreter must still be Python's KeyboardInterrupt.
class KeepSignalHandler {
 public:
  explicit KeepSignalHandler(int signal) : signal_(signal) { sigaction(signal_, nullptr, &saved_); }
  ~KeepSignalHandler() { sigaction(signal_, &saved_, nullptr); }
  KeepSignalHandler(const KeepSignalHandler&) = delete;
  KeepSignalHandler& operator=(const KeepSignalHandler&) = delete;

 private:
  int signal_;
  struct sigaction saved_ {};
};

std::shared_ptr<Run> run(const config::Scenario& s, const std::string& executor, const std::string& granularity,
                         const std::string& ranks, const std::optional<std::string>& platform,
                         const std::string& fidelity, double max_tasks) {
  auto out = std::make_shared<Run>();
  out->scenario = std::make_shared<config::Scenario>(s);
  set_fidelity(*out->scenario, fidelity);
  RunOptions o;
  o.executor = common::enum_from_name(kExecutorKinds, executor, "executor");
  o.lowering.granularity = common::enum_from_name(graph::kGranularities, granularity, "granularity");
  o.lowering.scope = common::enum_from_name(graph::kRankScopes, ranks, "ranks");
  if (!(max_tasks > 0)) throw common::UsageError("max_tasks must be positive");
  o.max_tasks = max_tasks;
  if (platform && o.executor != ExecutorKind::kSim) throw common::UsageError("platform needs executor='sim'");
  o.platform_xml = platform;
  if (o.executor == ExecutorKind::kSim && !o.platform_xml && s.platform_path) o.platform_xml = s.platform_path;
  const KeepSignalHandler keep_sigint(SIGINT), keep_sigterm(SIGTERM);
  py::gil_scoped_release unlocked;
  out->result = simulate(*out->scenario, o);
  return out;
}

}  // namespace

void bind_run(py::module_& m) {
  py::class_<config::Scenario, ScenarioPtr>(m, "Scenario", "three SimuMax configs, read and checked")
      .def_readwrite("name", &config::Scenario::name)
      .def_readonly("model_path", &config::Scenario::model_path)
      .def_readonly("strategy_path", &config::Scenario::strategy_path)
      .def_readonly("system_path", &config::Scenario::system_path)
      .def_property_readonly("fidelity", [](const config::Scenario& s) { return config::to_string(s.strategy.fidelity); });

  m.def("read_config_json", [](const std::string& kind, const std::string& path) {
    return config::read_config_json(parse_kind(kind), path);
  }, py::arg("kind"), py::arg("path"),
        "a SimuMax config file read and checked as `kind` (model, strategy, system), as compact JSON text");
  m.def("load_scenario", [](const std::string& path) { return std::make_shared<config::Scenario>(config::load_scenario(path)); },
        py::arg("path"), "a scenario file, as `simumax-sim run` reads it");
  m.def("load_scenario_text", [](const std::string& text, const std::string& label) {
    return std::make_shared<config::Scenario>(config::load_scenario_text(text, label));
  }, py::arg("text"), py::arg("label"), "a scenario from JSON text; errors name `label`");
  m.def("scenario_from_texts", [](const std::string& model, const std::string& model_label, const std::string& strategy,
                                  const std::string& strategy_label, const std::string& system,
                                  const std::string& system_label, const std::string& name, bool check) {
    return std::make_shared<config::Scenario>(config::scenario_from_texts(
        {model, model_label}, config::ConfigText{strategy, strategy_label}, {system, system_label}, name, check));
  }, py::arg("model"), py::arg("model_label"), py::arg("strategy"), py::arg("strategy_label"), py::arg("system"),
        py::arg("system_label"), py::arg("name"), py::arg("check") = true,
        "the three configs from JSON texts; errors name each text's label");

  py::class_<Run, std::shared_ptr<Run>>(m, "Run", "one simulated step")
      .def_property_readonly("scenario", [](const Run& r) { return r.scenario; })
      .def("summary_json", [](const Run& r) { return report::summary_json(r.result.summary); },
           "summary.json's text")
      .def("ranks_json", [](const Run& r) {
        return report::ranks_json({r.scenario->name, r.result.summary.executor, r.result.summary.scope},
                                  r.result.graph, r.result.timing, r.result.memory);
      }, "ranks.json's text (one row per simulated rank, docs/report.md)")
      .def("summary_table", [](const Run& r) { return report::summary_table(r.result.summary); },
           "the table `simumax-sim run` prints")
      .def("write_summary", [](const Run& r, const std::string& dir) {
        return report::write_summary_json(dir, r.result.summary);
      }, py::arg("dir"), "writes summary.json into the existing folder `dir`; returns its path")
      .def("write_simumax_results", [](const Run& r, const std::string& dir) {
        return report::write_simumax_results(dir, {*r.scenario, r.result.model, r.result.cost, r.result.summary});
      }, py::arg("dir"),
           "writes SimuMax's compute_result.json, mem_result.json, base_info.json and net_info.json (its "
           "analysis(save_path) "
           "files) into the existing folder `dir`; returns their paths")
      .def("simumax_json", [](const Run& r, const std::string& file) {
        const report::SimumaxView v{*r.scenario, r.result.model, r.result.cost, r.result.summary};
        if (file == "mem_result") return report::simumax_mem_result_json(v);
        if (file == "compute_result") return report::simumax_compute_result_json(v);
        if (file == "base_info") return report::simumax_base_info_json(v);
        if (file == "net_info") return report::simumax_net_info_json(v);
        throw common::UsageError("file='" + file + "': expected mem_result, compute_result, base_info or net_info");
      }, py::arg("file"), "the text of SimuMax's mem_result.json, compute_result.json, base_info.json or net_info.json")
      .def("simumax_strings", [](const Run& r) {
        const config::StrategyConfig& st = r.scenario->strategy;
        return std::map<std::string, std::string>{{"parallelism", report::simumax_parallelism(st)},
                                                  {"recompute_status", report::simumax_recompute_status(st)},
                                                  {"dtype", report::simumax_dtype(st)}};
      }, "SimuMax's strategy strings of the run: parallelism, recompute_status, dtype")
      .def("write_outputs", [](const Run& r, const std::string& dir, bool trace, const std::string& ranks,
                               const std::string& format, bool memory, bool simumax, double max_mb) {
        report::RunOutputOptions o;
        o.trace = trace;
        o.trace_ranks = ranks;
        if (format != "chrome" && format != "simumax") {
          throw common::UsageError("trace_format='" + format + "': expected one of chrome, simumax");
        }
        o.trace_format = format;
        o.memory = memory;
        o.simumax = simumax;
        o.max_output_mb = max_mb;
        py::gil_scoped_release unlocked;
        return report::write_run_outputs(dir, r.view(), r.result.summary, o);
      }, py::arg("dir"), py::arg("trace") = false, py::arg("ranks") = "stages", py::arg("format") = "chrome",
           py::arg("memory") = false, py::arg("simumax") = false, py::arg("max_mb") = report::RunOutputOptions{}.max_output_mb,
           "writes what `run --trace / --memory / --simumax-outputs` write into the existing folder `dir` (after one "
           "estimate of their size, refused over max_mb MiB); returns the paths written");

  m.def("remove_earlier_run", [](const std::string& dir) { report::remove_earlier_run(dir, std::nullopt); },
        py::arg("dir"), "removes the files an earlier run wrote into the existing folder `dir` (summary.json, the "
                        "trace, memory and SimuMax files, ...); nothing else is touched");
  m.def("run", &run, py::arg("scenario"), py::arg("executor") = "fast", py::arg("granularity") = "layer",
        py::arg("ranks") = "stages", py::arg("platform") = std::nullopt, py::arg("fidelity") = "",
        py::arg("max_tasks") = RunOptions{}.max_tasks,
        "simulates one step of `scenario` in this process (executor 'sim': once per process, SimGrid's rule)");
}

}  // namespace simumax::python
