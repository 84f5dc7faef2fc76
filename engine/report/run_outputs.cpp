#include "engine/report/run_outputs.hpp"

#include <cmath>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/report/memory_artifacts.hpp"
#include "engine/report/simumax_memory.hpp"
#include "engine/report/simumax_results.hpp"

namespace simumax::report {

namespace {

void check_output_size(const RunOutputOptions& a, uint64_t memory_bytes, uint64_t trace_bytes) {
  constexpr double kMiB = 1024.0 * 1024.0;
  const double memory_mib = static_cast<double>(memory_bytes) / kMiB, trace_mib = static_cast<double>(trace_bytes) / kMiB;
  common::logger("run")->info("output estimate: memory files {:.1f} MiB, trace {:.1f} MiB", memory_mib, trace_mib);
  const double total_mib = memory_mib + trace_mib;
  if (total_mib <= a.max_output_mb) return;
  throw common::UsageError(fmt::format(
      "the output files would be about {:.0f} MiB (memory files {:.0f} MiB, trace {:.0f} MiB), over the limit of {} "
      "MiB; raise it with --max-output-mb {:.0f}, or write fewer ranks with --trace-ranks",
      total_mib, memory_mib, trace_mib, a.max_output_mb, std::ceil(total_mib * 1.1)));
}

}  // namespace

std::vector<std::string> write_run_outputs(const std::string& dir, const RunView& v, const Summary& summary,
                                           const RunOutputOptions& a) {
  std::vector<std::string> written;
  if (!a.trace && !a.memory && !a.simumax) return written;
  const std::vector<uint32_t> ranks = select_ranks(v.graph, v.timeline, a.trace_ranks);
  if (a.trace_ranks == "all" && static_cast<int64_t>(v.graph.num_ranks) < v.scenario.strategy.world_size) {
    common::logger("run")->warn("--trace-ranks all: this run simulates {} of the {} ranks (one per pipeline stage) "
                                "and writes those; add --ranks all to simulate and write every rank",
                                v.graph.num_ranks, v.scenario.strategy.world_size);
  }
  TraceOptions o;
  o.format = a.trace_format == "simumax" ? TraceFormat::kSimumax : TraceFormat::kChrome;
  o.ranks = ranks;
  o.max_mib = a.trace_max_mb;
  check_output_size(a, a.memory ? estimate_memory_artifact_bytes(v, ranks) : 0,
                    a.trace ? estimate_trace_size(v, o).bytes : 0);
  if (a.simumax) {
    for (auto& p : write_simumax_results(dir, {v.scenario, v.model, v.cost, summary})) written.push_back(p);
    for (auto& p : write_simu_memory(dir, v, ranks)) written.push_back(p);
    // tracing_logs.json, unless --trace --trace-format simumax writes it below.
    if (!(a.trace && a.trace_format == "simumax")) {
      TraceOptions simumax_trace = o;
      simumax_trace.format = TraceFormat::kSimumax;
      const std::string path = dir + "/" + trace_file_name(simumax_trace.format);
      write_trace(path, v, simumax_trace);
      written.push_back(path);
    }
  }
  if (a.memory) {
    for (auto& p : write_memory_artifacts(dir, v, ranks)) written.push_back(p);
  }
  if (a.trace) {
    const std::string path = dir + "/" + trace_file_name(o.format);
    write_trace(path, v, o);
    written.push_back(path);
  }
  return written;
}

}  // namespace simumax::report
