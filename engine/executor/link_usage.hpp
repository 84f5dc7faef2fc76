// What each platform link carried during a `sim` run: bytes, busy time and utilisation, for the report and
// links.json (the bottlenecks of a what-if platform).
#pragma once

#include <cstdint>
#include <string>

namespace simumax::executor {

struct LinkUsage {
  std::string name;                  // the SimGrid link ("inter.nic3_UP", "leaf2.uplink_DOWN")
  double bandwidth_bytes_per_s = 0;  // its bandwidth in the platform
  double bytes = 0;                  // bytes of the flows that crossed it
  uint64_t flows = 0;                // how many flows crossed it
  double busy_seconds = 0;           // time with at least one flow on it
  double utilisation = 0;            // bytes / (bandwidth x makespan): its average load over the step
};

}  // namespace simumax::executor
