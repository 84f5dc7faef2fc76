// The optional outputs of a run (`simumax-sim run --trace / --memory / --simumax-outputs`, serve): the timeline
// trace, the memory files and SimuMax's files, written after one estimate of their size.
#pragma once

#include <string>
#include <vector>

#include "engine/report/summary.hpp"
#include "engine/report/trace_writer.hpp"

namespace simumax::report {

struct RunOutputOptions {
  bool trace = false;                   // write trace.json (or tracing_logs.json)
  std::string trace_ranks = "stages";   // all | stages | a list of job ranks such as 0,8,16-23
  double trace_max_mb = 512;            // refuse a trace estimated larger than this (MiB)
  std::string trace_format = "chrome";  // chrome | simumax
  bool memory = false;                  // write memory_timeline.json, memory_snapshot.json/.pickle
  double max_output_mb = 2048;          // refuse when the trace and memory files together are estimated larger (MiB)
  bool simumax = false;                 // SimuMax's files under their own names (--simumax-outputs)
};

// The files `simumax` writes (SimuMax's PerfLLM.analysis and simulate names).
inline constexpr const char* kSimumaxFiles[] = {"compute_result.json",      "mem_result.json",
                                                 "base_info.json",           "simu_memory_result.json",
                                                 "simu_memory_snapshot.json", "tracing_logs.json",
                                                 "net_info.json"};

// Writes what `o` asks for into the existing folder `dir` and returns the paths written. Throws
// common::UsageError for a bad trace_ranks, a trace over trace_max_mb, or files estimated over max_output_mb
// together (nothing of them is written then). The estimates are logged at info.
std::vector<std::string> write_run_outputs(const std::string& dir, const RunView& v, const Summary& summary,
                                           const RunOutputOptions& o);

}  // namespace simumax::report
