// Our side of a comparison: one rank's simulated step from the trace.json that `simumax-sim run --trace` writes,
// and/or the step time and peak memory of the run's summary.json.
//
// What this reader needs from trace.json (the Chrome Trace Event Format the trace writer emits):
//   - {"traceEvents": [...]} (or a bare array), plain or gzip;
//   - one complete event (ph "X", ts and dur in µs, name = our task name such as "attn.linear_qkv.fwd" or
//     "tp.all_reduce ...") per task, with pid = the rank and tid = its lane;
//   - thread_name metadata (ph "M", name "thread_name", args.name) naming each lane: a lane whose name mentions
//     comm, send, recv, p2p or nccl holds communication ("tp comm", "dp comm", "pp send/recv"), any other lane
//     compute ("compute", "recompute", "optimizer"); "sync" / "barrier" / "wait" lanes are not GPU work and are
//     skipped; the "host" lane is the CPU issuing the kernels (docs/host.md), summed apart. Without the metadata, the task name alone decides, through the kernel class table.
// Everything else (flows, counters, args, process names) is ignored. The step is the trace's whole span over all
// ranks, from its first event to its last: a rank waiting for a pipeline peer is idle (bubble) in that window.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/step_breakdown.hpp"

namespace simumax::compare {

// Our tasks of one name on the chosen rank (one op of one layer and pass: "attn.linear_qkv.fwd").
struct OurOp {
  std::string name;
  std::string cls;          // class/subclass through the kernel class table
  int64_t calls = 0;
  double total_ms = 0;
  double median_us = 0;
  double flops = 0;         // per call (args.flops), 0 when the trace has none
  std::string shape_key;    // args.shape_key ("b=1, m=4096, k=4096, n=12288, layout=TN, ...")
};

struct SimulatedRun {
  std::string trace_path;                // empty when the run folder had no trace
  std::string summary_path;              // empty when there was no summary.json
  int64_t rank = -1;                     // the rank whose step is broken down (-1: no trace)
  std::vector<int64_t> ranks;            // the ranks the trace holds
  bool preferred_rank_missing = false;   // RankChoice::preferred was given but is not in the trace
  std::optional<StepBreakdown> step;     // from the trace
  std::vector<OurOp> ops;                // from the trace, by total time
  std::optional<double> host_ms;         // the host lane's busy time (absent: no host task on the rank)
  int64_t host_tasks = 0;
  std::optional<double> summary_step_ms;           // summary.json step_time_ms
  std::optional<double> peak_alloc_bytes;          // summary.json peak_alloc_bytes_max
  std::optional<double> peak_reserved_bytes;       // summary.json peak_reserved_bytes_max
};

struct RankChoice {
  std::optional<int64_t> rank;       // asked for (--rank): must be in the trace
  std::optional<int64_t> preferred;  // the real trace's rank: used when present, else the lowest rank
};

// `path` is a trace file, a summary.json, or a run folder holding trace.json (or trace.json.gz) and/or
// summary.json. Throws ConfigError(path, "", what) when nothing usable is there, when the trace has no complete
// events, or when the asked rank is not in the trace (the message lists the ranks that are); a summary.json is
// read by report::read_summary (and refused as it refuses it).
SimulatedRun load_simulated_run(const std::string& path, const RankChoice& choice, const KernelClassTable& table);

}  // namespace simumax::compare
