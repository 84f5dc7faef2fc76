// SimGrid's engine for one `sim` run: created once per process, the platform loaded (a user's XML checked first,
// as SimGrid aborts on what it rejects) and every rank of the graph mapped to its GPU and NIC hosts.
#pragma once

#include "engine/executor/flow_plan.hpp"
#include "engine/executor/sim_executor.hpp"

namespace simgrid::s4u {
class Engine;
}  // namespace simgrid::s4u

namespace simumax::executor::detail {

struct LoadedPlatform {
  simgrid::s4u::Engine* engine = nullptr;  // never deleted (sim_executor.hpp's contract)
  RankHosts hosts;
};

// Throws common::ConfigError for a user platform that is bad or lacks a rank's host, common::InternalError for
// options that name no platform, a second engine in one process, or a generated platform SimGrid rejects.
LoadedPlatform load_platform(const graph::TaskGraph& graph, const SimOptions& options);

}  // namespace simumax::executor::detail
