#include "engine/graph/sm_contention.hpp"

namespace simumax::graph {

SmContention::SmContention(uint32_t num_ranks, bool enabled)
    : enabled_(enabled), ranks_(enabled ? num_ranks : 0) {}

void SmContention::issue(uint32_t rank, uint8_t stream, double seconds, double share) {
  if (!enabled_) return;
  cost::InFlight& f = ranks_[rank][stream];
  f.seconds += seconds;  // a stream runs its collectives one after another
  f.share = share;
}

void SmContention::issue(const std::vector<uint32_t>& lanes, uint8_t stream, double seconds, double share) {
  for (uint32_t r : lanes) issue(r, stream, seconds, share);
}

void SmContention::joined(const std::vector<uint32_t>& lanes, uint8_t stream) {
  if (!enabled_) return;
  for (uint32_t r : lanes) ranks_[r][stream].seconds = 0;
}

double SmContention::run(uint32_t rank, double seconds) {
  return enabled_ ? cost::run_beside(ranks_[rank], seconds) : seconds;
}

double SmContention::run(const std::vector<uint32_t>& lanes, double seconds) {
  if (!enabled_) return seconds;
  // Lanes in lockstep have run the same program, so they have the same collectives in flight.
  double wall = seconds;
  for (uint32_t r : lanes) wall = cost::run_beside(ranks_[r], seconds);
  return wall;
}

}  // namespace simumax::graph
