#include "engine/simulate.hpp"

#include <fstream>
#include <optional>

#include <spdlog/fmt/fmt.h>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/executor/fast_executor.hpp"
#include "engine/executor/rank_timing.hpp"
#include "engine/executor/sim_executor.hpp"
#include "engine/memory/memory_stream.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/report/text_file.hpp"

namespace simumax {

const char* to_string(ExecutorKind k) { return k == ExecutorKind::kSim ? "sim" : "fast"; }

double estimated_bytes(double estimated_tasks, const RunOptions& options) {
  const bool timeline = options.executor == ExecutorKind::kFast || options.keep_timeline || options.keep_memory_curves;
  return estimated_tasks * (timeline ? 48 : 34);
}

namespace {

// One logger for every run: search calls run_step hundreds of thousands of times.
const std::shared_ptr<spdlog::logger>& engine_log() {
  static const auto log = common::logger("engine");
  return log;
}

// The stages' info lines where they are not wanted (RunOptions::log_stages false): a logger with no sink.
const std::shared_ptr<spdlog::logger>& silent_log() {
  static const auto log = [] {
    auto l = std::make_shared<spdlog::logger>("engine (silent)");
    l->set_level(spdlog::level::off);
    return l;
  }();
  return log;
}

// `sink` (may be null) is told every task's start and end; the fast executor's timeline is replayed into it.
executor::Timeline run_executor(const config::Scenario& s, const graph::TaskGraph& g, const RunOptions& o,
                                executor::TaskSink* sink) {
  if (o.executor == ExecutorKind::kFast) {
    executor::Timeline tl = executor::run_fast(g);
    if (sink) executor::replay_timeline(g, tl, *sink);
    return tl;
  }
  executor::SimOptions so;
  so.sink = sink;
  so.keep_timeline = o.keep_timeline || !sink || o.keep_memory_curves;
  const auto spec = platform::platform_from_system(s.system, s.strategy.world_size);
  so.spec = spec;  // with a user XML, the spec only names GPUs per node (the XML is checked by run_sim)
  // The sim library's stage line ("platform + run" wall time) at info: it has its own copy of the log set-up.
  const auto level = spdlog::level::to_string_view(engine_log()->level());
  so.log_level.assign(level.data(), level.size());
  if (o.platform_xml) {
    so.platform_xml_path = *o.platform_xml;
  } else {
    if (!o.platform_out.empty()) {
      report::write_file_atomically(o.platform_out, platform::platform_xml(spec));
    }
  }
  return executor::run_sim(g, so);
}

// What simulate() folds as the executor runs.
struct Folded {
  executor::StepTiming timing;
  std::vector<memory::RankMemory> memory;
};

StepRun run_step_folding(const config::Scenario& s, const RunOptions& options, Folded* folded);

}  // namespace

StepRun run_step(const config::Scenario& s, const RunOptions& options) {
  return run_step_folding(s, options, nullptr);
}

namespace {

// run_step; with `folded`, the executor also feeds a RankTimingSink and a MemoryStream, whose memory replaces
// analyze_memory's (the same peaks, a test checks it), so that the sim executor need not keep the timeline.
StepRun run_step_folding(const config::Scenario& s, const RunOptions& options, Folded* folded) {
  // `--log-level info` promises one line per pipeline stage (README): config, model, cost, graph, executor,
  // memory, report.
  const auto& log = options.log_stages ? engine_log() : silent_log();
  log->info("config: {} (world {} = tp {} x cp {} x pp {} x dp {}, {} fidelity)", s.name, s.strategy.world_size,
            s.strategy.tp_size, s.strategy.cp_size, s.strategy.pp_size, s.strategy.dp_size(),
            config::to_string(s.strategy.fidelity));
  StepRun r;
  r.model = model::build_step_model(s, options.op_cache);
  log->info("model: {} distinct chunks over {} pipeline stages, padded vocab {}", r.model.chunks.size(),
            s.strategy.pp_size, r.model.padded_vocab);
  r.cost = cost::cost_step(s, r.model, options.cost_cache);
  log->info("cost: one pipeline send/recv {:.6g} ms, straggler ratio {:.6g}", r.cost.p2p.seconds * 1e3,
            r.cost.straggler_ratio);
  const double tasks = graph::estimate_tasks(s, r.model, options.lowering);
  log->info("about {:.3g} tasks to lower ({} granularity, {} ranks)", tasks,
            graph::to_string(options.lowering.granularity), graph::to_string(options.lowering.scope));
  if (tasks > options.max_tasks) {
    throw common::UsageError(fmt::format(
        "this step would lower to about {:.3g} tasks (~{:.0f} GB of memory), over --max-tasks {:.3g}: use a coarser "
        "--granularity, --ranks stages, fewer micro-batches or layers, or raise --max-tasks",
        tasks, estimated_bytes(tasks, options) / 1e9, options.max_tasks));
  }
  r.graph = graph::lower_step(s, r.model, r.cost, options.lowering);
  log->info("graph: lowered {} tasks over {} ranks ({} granularity)", r.graph.size(), r.graph.num_ranks,
            graph::to_string(options.lowering.granularity));
  std::optional<executor::RankTimingSink> timing;
  std::optional<memory::MemoryStream> stream;
  std::optional<executor::SinkFanOut> sinks;
  if (folded) {
    timing.emplace(r.graph);
    stream.emplace(r.graph, s.strategy.mem_factor);
    sinks.emplace(std::vector<executor::TaskSink*>{&*timing, &*stream});
  }
  r.timeline = run_executor(s, r.graph, options, folded ? &*sinks : nullptr);
  log->info("executor: {} ran the step in {:.6g} ms of simulated time", to_string(options.executor),
            r.timeline.makespan * 1e3);
  memory::MemoryOptions mo;
  mo.mem_factor = s.strategy.mem_factor;
  mo.keep_curves = options.keep_memory_curves;
  if (folded) {
    folded->timing = timing->take();
    r.memory = stream->finish();
    if (options.keep_memory_curves) {
      auto curves = memory::analyze_memory(r.graph, r.timeline, mo);
      for (size_t i = 0; i < curves.size(); ++i) r.memory[i].curve = std::move(curves[i].curve);
    }
  } else {
    r.memory = memory::analyze_memory(r.graph, r.timeline, mo);
  }
  log->info("memory: {} ranks analysed", r.memory.size());
  return r;
}

}  // namespace

RunResult simulate(const config::Scenario& s, const RunOptions& options) {
  RunResult r;
  Folded folded;
  static_cast<StepRun&>(r) = run_step_folding(s, options, &folded);
  r.timing = std::move(folded.timing);
  r.summary = report::summarize(s, r.model, r.cost, r.graph, r.timeline.executor, r.timing, r.memory);
  r.summary.granularity = graph::to_string(options.lowering.granularity);
  r.summary.scope = graph::to_string(options.lowering.scope);
  engine_log()->info("report: step {:.6g} ms, peak {:.6g} GiB reserved of {:.6g} GiB", r.summary.step_time_ms,
                     r.summary.peak_reserved_bytes_max / (1024.0 * 1024.0 * 1024.0), r.summary.gpu_memory_gib);
  return r;
}

}  // namespace simumax
