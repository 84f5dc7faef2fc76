#include "engine/graph/sm_contention.hpp"

#include <gtest/gtest.h>

namespace simumax::graph {
namespace {

TEST(SmContention, LanesUseUpWhatIsInFlightUntilTheyJoinIt) {
  SmContention c(2, true);
  c.issue({0, 1}, kEpStream, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(c.run({0, 1}, 0.25), 0.5);
  EXPECT_DOUBLE_EQ(c.run(1, 1.0), 1.25);  // 0.5 s left in flight: 0.25 of the work slowed
  EXPECT_DOUBLE_EQ(c.run(0, 0.25), 0.5);
  c.joined({0}, kEpStream);
  EXPECT_DOUBLE_EQ(c.run(0, 0.25), 0.25);
  SmContention off(2, false);
  off.issue(0, kEpStream, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(off.run(0, 0.25), 0.25);
}

}  // namespace
}  // namespace simumax::graph
