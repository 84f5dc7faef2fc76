// What each platform link carried during a `sim` run: bytes, busy time and utilisation, for the report and
// links.json (the bottlenecks of a what-if platform).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace simumax::executor {

struct LinkUsage {
  std::string name;                  // the SimGrid link ("inter.nic3_UP", "leaf2.uplink_DOWN")
  double bandwidth_bytes_per_s = 0;  // its bandwidth in the platform
  double bytes = 0;                  // bytes of the flows that crossed it
  uint64_t flows = 0;                // how many flows crossed it
  double busy_seconds = 0;           // time with at least one flow on it
  double utilisation = 0;            // bytes / (bandwidth x makespan): its average load over the step
  // Over time, in buckets of Timeline::link_bucket_seconds from 0 (only the busiest links have them, see
  // LinkTracker::kSeriesLinks): the fraction of the bucket with at least one flow on the link, and the bytes it
  // carried in the bucket / (bandwidth x bucket), each flow's bytes spread evenly over its life (so a bucket can
  // read above 1 where sharing flows changed rate during their lives).
  std::vector<double> busy_series;
  std::vector<double> utilisation_series;
};

}  // namespace simumax::executor
