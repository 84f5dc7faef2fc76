// The optional outputs of `simumax-sim run`: the timeline trace (--trace) and the memory files (--memory).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/simulate.hpp"

namespace simumax::tools {

struct OutputArgs {
  bool trace = false;                  // write trace.json (or tracing_logs.json)
  std::string trace_ranks = "stages";  // all | stages | a list of job ranks such as 0,8,16-23
  double trace_max_mb = 512;           // refuse a trace estimated larger than this (MiB)
  std::string trace_format = "chrome";  // chrome | simumax
  bool memory = false;                 // write memory_timeline.json, memory_snapshot.json/.pickle
  double max_output_mb = 2048;         // refuse when the trace and memory files together are estimated larger (MiB)
  bool simumax = false;                // SimuMax's files under their own names (--simumax-outputs)
};

void add_output_options(CLI::App& sub, OutputArgs& a);

// The files --simumax-outputs writes (SimuMax's PerfLLM.analysis and simulate names).
inline constexpr const char* kSimumaxFiles[] = {"compute_result.json",      "mem_result.json",
                                                 "base_info.json",           "simu_memory_result.json",
                                                 "simu_memory_snapshot.json", "tracing_logs.json"};

// Writes what `a` asks for into the folder `dir` and returns the paths written. Throws common::UsageError for a
// bad --trace-ranks, a trace over --trace-max-mb, or files estimated over --max-output-mb together (nothing of
// them is written then). The estimates are logged at info.
std::vector<std::string> write_outputs(const std::string& dir, const config::Scenario& s, const RunResult& r,
                                       const OutputArgs& a);

}  // namespace simumax::tools
