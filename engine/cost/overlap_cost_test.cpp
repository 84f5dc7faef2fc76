#include "engine/cost/overlap_cost.hpp"
#include "engine/cost/pair_clock.hpp"

#include <gtest/gtest.h>

#include <array>

namespace simumax::cost {
namespace {

TEST(SmContention, ComputeRunsSlowerOnlyWhileCommunicationIsInFlight) {
  struct Case {
    double work, comm, share, wall;
  };
  // Beside a collective of `comm` seconds, work progresses at 1 / (1 + share) until it ends.
  for (const auto& c : {Case{1.0, 0.5, 1.0, 1.25}, Case{0.2, 1.0, 1.0, 0.4}, Case{1.0, 0.0, 1.0, 1.0},
                        Case{1.0, 2.0, 0.0, 1.0}, Case{0.0, 1.0, 1.0, 0.0}}) {
    std::array<InFlight, 1> s{InFlight{c.comm, c.share}};
    EXPECT_DOUBLE_EQ(run_beside(s, c.work), c.wall) << c.work << " " << c.comm;
    EXPECT_DOUBLE_EQ(s[0].seconds, std::max(0.0, c.comm - c.wall));
  }
}

TEST(SmContention, SharesOfStreamsInFlightTogetherAddUp) {
  std::array<InFlight, 2> s{InFlight{1.0, 0.5}, InFlight{3.0, 0.5}};
  // [0, 1): rate 1/2, 0.5 done; [1, 3): rate 1/1.5, 1.333 done; then the rest at full speed.
  EXPECT_NEAR(run_beside(s, 2.0), 3.0 + (2.0 - 0.5 - 2.0 / 1.5), 1e-15);
  EXPECT_DOUBLE_EQ(overlapped_seconds(0.2, 1.0, 1.0), 1.0);  // the collective is the longer
  EXPECT_DOUBLE_EQ(overlapped_seconds(1.0, 0.5, 1.0), 1.25);
}

// An overlapped pair's two streams (cost::PairClock): an all-to-all starts after its producer and the previous
// all-to-all, compute waits only when told, and compute beside an all-to-all in flight follows run_beside's rule.
TEST(PairClock, AllToAllsFollowTheirProducerAndSlowTheComputeBesideThem) {
  PairClock clock(0.0);
  EXPECT_DOUBLE_EQ(clock.compute(2), 2);       // [0, 2]
  const size_t a = clock.issue(3);             // [2, 5]: after its producer
  EXPECT_DOUBLE_EQ(clock.compute(1), 1);       // [2, 3], beside it
  const size_t b = clock.issue(1);             // [5, 6]: after the previous all-to-all
  clock.wait(a);
  EXPECT_DOUBLE_EQ(clock.frontier(), 5);       // the next compute waits for `a`
  EXPECT_DOUBLE_EQ(clock.compute(0.5), 0.5);   // [5, 5.5]
  EXPECT_DOUBLE_EQ(clock.end(), 6);            // `b` still in flight
  clock.wait(b);
  EXPECT_DOUBLE_EQ(clock.frontier(), 6);
  // Share 0.5: 2 of work beside an all-to-all of 1 takes 2 + 0.5 min(2, 1 / 1.5), as run_beside.
  PairClock slow(0.5);
  slow.issue(1);
  EXPECT_NEAR(slow.compute(2), 2 + 0.5 / 1.5, 1e-15);
  // One that starts later slows only the part beside it: 1 at full speed, then 1 beside [1, 4) at 1/1.5.
  PairClock late(0.5);
  late.compute(1);
  late.issue(3);
  PairClock fresh(0.5);
  EXPECT_DOUBLE_EQ(late.compute(1), 1.5);
  EXPECT_DOUBLE_EQ(fresh.compute(1), 1);
}

}  // namespace
}  // namespace simumax::cost
