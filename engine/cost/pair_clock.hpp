// The timing of an overlapped forward-backward pair (Megatron's combined 1F1B, docs/overlap.md): a compute stream
// and one communication stream that carries the EP all-to-alls, with the arithmetic the task DAG does, so that a
// layer- or chunk-sized task gets the time its op-sized tasks take.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace simumax::cost {

// Program order on one GPU: compute items run one after another on the compute stream; an all-to-all starts after
// what the compute stream has issued before it (its producer) and after the stream's previous all-to-all; a
// compute item also waits for the all-to-alls it was told to (wait). Times are seconds from the pair's start, both
// streams idle then.
class PairClock {
 public:
  // `share`: while an all-to-all is in flight, compute takes 1 + share times longer (cost::run_beside's rule).
  explicit PairClock(double share) : share_(share) {}
  // Compute of `seconds` on idle SMs, next on the compute stream: its wall time.
  double compute(double seconds);
  // An all-to-all of `seconds`, issued now: its index.
  size_t issue(double seconds);
  // The next compute (or all-to-all) also waits for all-to-all `id`.
  void wait(size_t id);
  // When the next compute item could start: the last one's end and the waits since.
  double frontier() const;
  // When both streams are done.
  double end() const;

 private:
  double share_;
  double compute_end_ = 0, comm_end_ = 0, pending_ = 0;
  std::vector<std::pair<double, double>> a2a_;  // [start, end) of each all-to-all, in stream order (disjoint)
  size_t first_live_ = 0;                       // the first all-to-all that may still be in flight
};

}  // namespace simumax::cost
