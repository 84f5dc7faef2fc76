#include "engine/cost/pair_clock.hpp"

#include <algorithm>

namespace simumax::cost {

double PairClock::compute(double seconds) {
  const double start = frontier();
  pending_ = 0;
  double wall = 0, work = seconds, t = start;
  // The all-to-alls run one after another, so at most one is in flight at any time.
  while (first_live_ < a2a_.size() && a2a_[first_live_].second <= t) ++first_live_;
  for (size_t i = first_live_; share_ > 0 && work > 0 && i < a2a_.size(); ++i) {
    const auto [from, to] = a2a_[i];
    if (from > t) {  // full speed until it starts
      if (t + work <= from) break;
      wall += from - t;
      work -= from - t;
      t = from;
    }
    const double need = work * (1 + share_);
    if (t + need <= to) {
      wall += need;
      work = 0;
      break;
    }
    wall += to - t;
    work -= (to - t) / (1 + share_);
    t = to;
  }
  wall += work;
  compute_end_ = start + wall;
  return wall;
}

size_t PairClock::issue(double seconds) {
  const double start = std::max(comm_end_, frontier());
  comm_end_ = start + seconds;
  a2a_.emplace_back(start, comm_end_);
  return a2a_.size() - 1;
}

void PairClock::wait(size_t id) { pending_ = std::max(pending_, a2a_[id].second); }

double PairClock::frontier() const { return std::max(compute_end_, pending_); }

double PairClock::end() const { return std::max(frontier(), comm_end_); }

}  // namespace simumax::cost
