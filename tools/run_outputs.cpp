#include "tools/run_outputs.hpp"

#include <cmath>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/report/memory_artifacts.hpp"
#include "engine/report/simumax_memory.hpp"
#include "engine/report/simumax_results.hpp"
#include "engine/report/trace_writer.hpp"

namespace simumax::tools {

void add_output_options(CLI::App& sub, OutputArgs& a) {
  sub.add_flag("--trace", a.trace, "write trace.json: every task of the traced ranks (Chrome / Perfetto)");
  sub.add_option("--trace-ranks", a.trace_ranks,
                 "ranks in --trace and --memory: all, stages (one per pipeline stage) or a list like 0,8,16-23")
      ->capture_default_str();
  sub.add_option("--trace-max-mb", a.trace_max_mb, "refuse to write a trace estimated larger than this (MiB)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub.add_option("--trace-format", a.trace_format,
                 "chrome: trace.json; simumax: SimuMax's tracing_logs.json layout")
      ->capture_default_str()
      ->check(CLI::IsMember({"chrome", "simumax"}));
  sub.add_option("--max-output-mb", a.max_output_mb,
                 "refuse to write a trace and memory files estimated larger than this together (MiB)")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  sub.add_flag("--simumax-outputs", a.simumax,
               "also write SimuMax's files under their own names, keys and units: compute_result.json, "
               "mem_result.json, base_info.json, simu_memory_result.json, simu_memory_snapshot.json and "
               "tracing_logs.json (for --trace-ranks)");
  sub.add_flag("--memory", a.memory,
               "write memory_timeline.json, memory_snapshot.json and memory_snapshot.pickle (PyTorch memory_viz)");
}

namespace {

void check_output_size(const OutputArgs& a, uint64_t memory_bytes, uint64_t trace_bytes) {
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

std::vector<std::string> write_outputs(const std::string& dir, const config::Scenario& s, const RunResult& r,
                                       const OutputArgs& a) {
  std::vector<std::string> written;
  if (!a.trace && !a.memory && !a.simumax) return written;
  const report::RunView v{s, r.model, r.cost, r.graph, r.timeline, r.summary.granularity};
  const std::vector<uint32_t> ranks = report::select_ranks(r.graph, r.timeline, a.trace_ranks);
  if (a.trace_ranks == "all" && static_cast<int64_t>(r.graph.num_ranks) < s.strategy.world_size) {
    common::logger("run")->warn("--trace-ranks all: this run simulates {} of the {} ranks (one per pipeline stage) "
                                "and writes those; add --ranks all to simulate and write every rank",
                                r.graph.num_ranks, s.strategy.world_size);
  }
  report::TraceOptions o;
  o.format = a.trace_format == "simumax" ? report::TraceFormat::kSimumax : report::TraceFormat::kChrome;
  o.ranks = ranks;
  o.max_mib = a.trace_max_mb;
  check_output_size(a, a.memory ? report::estimate_memory_artifact_bytes(v, ranks) : 0,
                    a.trace ? report::estimate_trace_size(v, o).bytes : 0);
  if (a.simumax) {
    for (auto& p : report::write_simumax_results(dir, {s, r.model, r.cost, r.summary})) written.push_back(p);
    for (auto& p : report::write_simu_memory(dir, v, ranks)) written.push_back(p);
    // tracing_logs.json, unless --trace --trace-format simumax writes it below.
    if (!(a.trace && a.trace_format == "simumax")) {
      report::TraceOptions simumax_trace = o;
      simumax_trace.format = report::TraceFormat::kSimumax;
      const std::string path = dir + "/" + report::trace_file_name(simumax_trace.format);
      report::write_trace(path, v, simumax_trace);
      written.push_back(path);
    }
  }
  if (a.memory) {
    report::write_memory_artifacts(dir, v, ranks);
    for (const char* f : {"memory_timeline.json", "memory_snapshot.json", "memory_snapshot.pickle"}) {
      written.push_back(dir + "/" + f);
    }
  }
  if (a.trace) {
    const std::string path = dir + "/" + report::trace_file_name(o.format);
    report::write_trace(path, v, o);
    written.push_back(path);
  }
  return written;
}

}  // namespace simumax::tools
