#include "engine/cost/overlap_cost.hpp"

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

}  // namespace
}  // namespace simumax::cost
