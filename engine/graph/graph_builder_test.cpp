#include "engine/graph/graph_builder.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace simumax::graph {
namespace {

// finish() sorts the edges by source itself (no Boost CSR copy): each task's successors must come out in the
// order their edges were added, as before, since the executors start ready tasks in that order.
TEST(GraphBuilder, FinishKeepsSuccessorsInTheOrderTheirEdgesWereAdded) {
  TaskGraph g;
  g.num_ranks = 1;
  GraphBuilder b(g);
  for (int i = 0; i < 5; ++i) b.add_detached(Task{});
  b.depend(2, 4);
  b.depend(0, 3);
  b.depend(2, 1);
  b.depend(0, 1);
  b.depend(2, 3);
  b.depend(3, 4);
  b.finish();
  EXPECT_EQ(g.succ_offsets, (std::vector<uint32_t>{0, 2, 2, 5, 6, 6}));
  EXPECT_EQ(g.succ, (std::vector<uint32_t>{3, 1, 4, 1, 3, 4}));
  EXPECT_EQ(g.in_degree, (std::vector<uint32_t>{0, 2, 0, 2, 2}));
}

TEST(GraphBuilder, FinishOfAGraphWithoutEdges) {
  TaskGraph g;
  g.num_ranks = 1;
  GraphBuilder b(g);
  b.add_detached(Task{});
  b.add_detached(Task{});
  b.finish();
  EXPECT_EQ(g.succ_offsets, (std::vector<uint32_t>{0, 0, 0}));
  EXPECT_TRUE(g.succ.empty());
  EXPECT_EQ(g.in_degree, (std::vector<uint32_t>{0, 0}));
}

}  // namespace
}  // namespace simumax::graph
