// What an executor returns: when every task of the DAG started and ended.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/executor/link_usage.hpp"

namespace simumax::executor {

struct Timeline {
  std::vector<double> start;   // seconds, per task
  std::vector<double> end;     // seconds, per task
  double makespan = 0;         // latest end
  std::string executor;        // "fast" or "sim"
  std::vector<LinkUsage> links;  // sim: every link that carried a flow, busiest (highest utilisation) first
  double link_bucket_seconds = 0;  // sim: the width of the links' time buckets (LinkUsage::*_series)
};

}  // namespace simumax::executor
