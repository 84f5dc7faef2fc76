#include "tools/cli_options.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include "engine/common/enum_names.hpp"
#include "engine/common/error.hpp"
#include "tools/cli_checks.hpp"

namespace simumax::tools {

void add_config_options(CLI::App& sub, ConfigArgs& a) {
  sub.add_option("--model", a.model, "SimuMax model JSON (instead of a scenario)");
  sub.add_option("--strategy", a.strategy, "SimuMax strategy JSON (instead of a scenario)");
  sub.add_option("--system", a.system, "SimuMax system JSON (instead of a scenario)");
}

void add_engine_options(CLI::App& sub, EngineArgs& a) {
  sub.add_option("--executor", a.executor, "fast (in-process, analytical) or sim (SimGrid)")->capture_default_str()
      ->check(CLI::IsMember({"fast", "sim"}));
  sub.add_option("--granularity", a.granularity, "tasks per chunk, layer or op")->capture_default_str()
      ->check(CLI::IsMember({"chunk", "layer", "op"}));
  sub.add_option("--ranks", a.ranks, "stages: one rank per pipeline stage; all: every rank")->capture_default_str()
      ->check(CLI::IsMember({"stages", "all"}));
  sub.add_option("--platform", a.platform, "SimGrid platform XML for --executor sim (default: generated)");
  add_fidelity_option(sub, a.fidelity);
  sub.add_option("--max-tasks", a.max_tasks,
                 "refuse a step estimated above this many tasks before building it (34-48 bytes each)")
      ->capture_default_str()
      ->check(positive_number());
}

void add_output_options(CLI::App& sub, report::RunOutputOptions& a) {
  sub.add_flag("--trace", a.trace, "write trace.json: every task of the traced ranks (Chrome / Perfetto)");
  sub.add_option("--trace-ranks", a.trace_ranks,
                 "ranks in --trace and --memory: all, stages (one per pipeline stage) or a list like 0,8,16-23")
      ->capture_default_str();
  sub.add_option("--trace-max-mb", a.trace_max_mb, "refuse to write a trace estimated larger than this (MiB)")
      ->capture_default_str()
      ->check(positive_number());
  sub.add_option("--trace-format", a.trace_format,
                 "chrome: trace.json; simumax: SimuMax's tracing_logs.json layout")
      ->capture_default_str()
      ->check(CLI::IsMember({"chrome", "simumax"}));
  sub.add_option("--max-output-mb", a.max_output_mb,
                 "refuse to write a trace and memory files estimated larger than this together (MiB)")
      ->capture_default_str()
      ->check(positive_number());
  sub.add_flag("--simumax-outputs", a.simumax,
               "also write SimuMax's files under their own names, keys and units: compute_result.json, "
               "mem_result.json, base_info.json, net_info.json, simu_memory_result.json, simu_memory_snapshot.json "
               "and tracing_logs.json (for --trace-ranks)");
  sub.add_flag("--memory", a.memory,
               "write memory_timeline.json, memory_snapshot.json and memory_snapshot.pickle (PyTorch memory_viz)");
}

void add_fidelity_option(CLI::App& sub, std::string& fidelity) {
  sub.add_option("--fidelity", fidelity,
                 "megatron: what Megatron-LM + TransformerEngine execute (the default); simumax: SimuMax v1.2's "
                 "analytical model, exactly (default: the strategy's \"fidelity\" key, else megatron)")
      ->check(CLI::IsMember({"megatron", "simumax"}));
}

std::vector<std::string> case_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    if (std::filesystem::is_directory(p)) {
      for (const auto& e : std::filesystem::recursive_directory_iterator(p)) {
        if (e.is_regular_file() && e.path().extension() == ".json") files.push_back(e.path().string());
      }
    } else if (std::filesystem::exists(p)) {
      files.push_back(p);
    } else {
      throw common::UsageError(p + ": no such file or folder");
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string default_shared_dir() { return config::shared_dir().value_or("../shared"); }

void make_output_folder(const std::string& dir, const char* option) {
  std::error_code ec;
  if (std::filesystem::exists(dir, ec) && !std::filesystem::is_directory(dir, ec)) {
    throw common::UsageError(std::string(option) + " " + dir + ": a file of that name exists; give a folder");
  }
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir)) {
    throw common::UsageError(std::string(option) + " " + dir + ": cannot create the output folder" +
                             (ec ? ": " + ec.message() : std::string()));
  }
}

void check_output_file(const std::string& path, const char* option) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw common::UsageError(std::string(option) + " " + path + ": is a folder; give a file name");
  }
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) make_output_folder(parent.string(), option);
}

void apply_fidelity(config::Scenario& s, const std::string& fidelity) {
  if (fidelity.empty()) return;
  s.strategy.fidelity = common::enum_from_name(config::kFidelities, fidelity, "--fidelity");
}

config::Scenario load_scenario_or_configs(const std::string& scenario, const ConfigArgs& a) {
  const bool any_file = !a.model.empty() || !a.strategy.empty() || !a.system.empty();
  if (!scenario.empty() && any_file) {
    throw common::UsageError("give either a scenario file or --model/--strategy/--system, not both");
  }
  if (!scenario.empty()) return config::load_scenario(scenario);
  if (a.model.empty() || a.strategy.empty() || a.system.empty()) {
    throw common::UsageError("give a scenario file, or all three of --model, --strategy and --system");
  }
  return config::load_configs(a.model, a.strategy, a.system);
}

RunOptions make_run_options(const EngineArgs& a) {
  RunOptions o;
  o.executor = common::enum_from_name(kExecutorKinds, a.executor, "--executor");
  o.lowering.granularity = common::enum_from_name(graph::kGranularities, a.granularity, "--granularity");
  o.lowering.scope = common::enum_from_name(graph::kRankScopes, a.ranks, "--ranks");
  o.max_tasks = a.max_tasks;
  if (!a.platform.empty()) {
    if (o.executor != ExecutorKind::kSim) throw common::UsageError("--platform needs --executor sim");
    o.platform_xml = a.platform;
  }
  return o;
}

}  // namespace simumax::tools
