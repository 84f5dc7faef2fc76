// The `sim` executor: runs the task DAG on SimGrid, where communication tasks become flows that share the
// links of a platform (contention), and everything else runs as exact timers.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/executor/task_sink.hpp"
#include "engine/executor/timeline.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/platform/platform_spec.hpp"

namespace simumax::executor {

struct SimOptions {
  // The platform: a (user-edited) platform XML, checked before SimGrid reads it; if empty, platform_xml(*spec)
  // (written to a temporary file and loaded, so what runs is exactly what `simumax-sim platform` writes).
  std::string platform_xml_path;
  // The cluster of the system config. Besides generating the platform, it is the reference fabric flows are
  // sized on (see run_sim), also under a platform_xml_path.
  std::optional<platform::PlatformSpec> spec;
  // GPUs per node of the naming convention (node{r/gpn}.gpu{r%gpn}); 0: take spec->gpus_per_node.
  // A platform_xml_path needs one of the two.
  int64_t gpus_per_node = 0;
  bool log_simgrid = false;  // false: SimGrid's own log is silenced (critical messages only)
  // Told every task's start and end as the run goes, in date order (TaskSink's contract); null: none. It must
  // outlive the call.
  TaskSink* sink = nullptr;
  // false: the returned Timeline has no start/end arrays (16 bytes a task saved; makespan, executor and links
  // are still set), for a run whose per-task times only a sink needs.
  bool keep_timeline = true;
  // true: a flow whose links can carry it at its lone rate (its slowest link's bandwidth) beside the timers
  // already on them, with no SimGrid flow there, runs as a timer of bytes / lone rate; when a flow that does not
  // fit joins one of its links, it goes to SimGrid with the bytes it has left, so the same max-min sharing
  // applies from then on. Exact (to rounding) on routes without latency; flows with route latency always go to
  // SimGrid. false: every flow goes to SimGrid (for comparison).
  bool flow_timers = true;
  // Our log level inside libsimumax_sim.so, which has its own copy of the logging set-up (common::log_level()
  // of the caller); empty: leave it.
  std::string log_level;
};

// Runs `graph` on the platform and returns when each task started and ended (executor = "sim"), and what
// each link carried (Timeline::links: bytes, flows, busy time, utilisation = bytes / (bandwidth x makespan)).
// A task starts when its last predecessor ends (as in run_fast). A non-network task lasts Task::seconds (a
// timer, exact). A network task (Task::network) waits a timer, then sends its flows between the hosts of its
// group's ranks (NVLink endpoint node{n}.gpu{g} within a node, NIC endpoint nic{r} across nodes; never a
// host to itself) and ends when its last flow ends: CommPattern::kRing one flow per ring edge, kAllToAll one
// per ordered pair, kPeer members[0] -> members[1]. Every flow carries (seconds - latency_seconds) x the
// share of the task's most loaded link on the reference fabric: with options.spec, each GPU's own NVLink and
// NIC link at the spec's bandwidths on one non-blocking switch (what the cost model prices); without, the
// platform itself. So on the reference fabric (or any generated topology whose uplinks are not a lone task's
// bottleneck) an idle task lasts exactly Task::seconds; a platform with slower links makes it slower, and
// links carrying flows of several tasks at once slow them down (contention).
// With no link carrying flows of two tasks at once, the result equals run_fast's (measured: <= 1e-13 relative).
// Flows that their links carry at full speed run as our own timers and reach SimGrid only when sharing begins
// (SimOptions::flow_timers): the same times, without SimGrid's cost per flow.
//
// REQUIRES: at most ONE call per process, and no other SimGrid engine in the process: SimGrid keeps global
// state (a second engine inherits the first one's clock). Run each simulation in its own process. A second
// call throws common::InternalError. The engine is deliberately never torn down (teardown of a large
// simulation costs as much as the run); write the results and exit.
// Throws common::ConfigError for a bad platform XML (see platform::check_platform_xml) or a platform that lacks
// a host the graph needs; common::InternalError if some task never completes (a cycle), naming a few of them.
// run_sim loads libsimumax_sim.so on first use (see sim_loader.cpp); run_sim_in_process is the same function
// inside that library.
Timeline run_sim(const graph::TaskGraph& graph, const SimOptions& options);
Timeline run_sim_in_process(const graph::TaskGraph& graph, const SimOptions& options);

}  // namespace simumax::executor
