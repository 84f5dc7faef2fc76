// RankTimingSink over a small hand-made graph, its times worked out by hand: per-rank end, lateness inputs,
// compute, communication per kind and its exposed part; and the date-order contract it checks.
#include "engine/executor/rank_timing.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "engine/common/error.hpp"

namespace simumax::executor {
namespace {

struct Case {
  graph::TaskGraph g;
  Timeline tl;

  // A task on `rank`, or over `group` (an index into g.groups) when it is not kNoGroup.
  void task(graph::TaskKind kind, std::optional<schedule::Pass> pass, uint32_t rank, uint32_t group, double start, double end) {
    graph::Task t;
    t.kind = kind;
    t.pass = pass;
    t.rank = rank;
    t.group = group;
    g.tasks.push_back(t);
    tl.start.push_back(start);
    tl.end.push_back(end);
  }
};

// Rank 0: backward [0, 3), TP all-reduce over {0, 1} [2, 5), DP [4, 6) alone, optimizer [6, 7).
// Rank 1: forward [0, 1), the TP all-reduce [2, 5), a zero-length PP send at 5, a barrier over both [7, 7).
Case make_case() {
  Case c;
  c.g.num_ranks = 2;
  c.g.global_rank = {8, 9};
  c.g.pp_stage = {0, 0};
  c.g.groups = {{0, 1}, {0}, {1}};
  using schedule::Pass;
  using graph::TaskKind;
  c.task(TaskKind::kCompute, Pass::kBackward, 0, graph::kNoGroup, 0, 3);
  c.task(TaskKind::kTpComm, Pass::kBackward, 0, 0, 2, 5);
  c.task(TaskKind::kDpComm, std::nullopt, 0, 1, 4, 6);
  c.task(TaskKind::kOptimizer, std::nullopt, 0, graph::kNoGroup, 6, 7);
  c.task(TaskKind::kCompute, Pass::kForward, 1, graph::kNoGroup, 0, 1);
  c.task(TaskKind::kPpComm, Pass::kForward, 1, 2, 5, 5);
  c.task(TaskKind::kBarrier, std::nullopt, 0, 0, 7, 7);
  return c;
}

TEST(RankTiming, HandMadeGraphGivesHandWorkedTimes) {
  const Case c = make_case();
  const StepTiming t = step_timing(c.g, c.tl);
  EXPECT_DOUBLE_EQ(t.makespan_s, 7);
  EXPECT_DOUBLE_EQ(t.pipeline_end_s, 7);  // the barrier (std::nullopt) ends at 7; the step tasks are left out
  const RankTiming& r0 = t.ranks[0];
  EXPECT_DOUBLE_EQ(r0.end_s, 7);
  EXPECT_DOUBLE_EQ(r0.pipeline_end_s, 5);  // the backward-pass all-reduce ends at 5
  EXPECT_DOUBLE_EQ(r0.compute_s, 4);       // [0, 3) + [6, 7)
  EXPECT_DOUBLE_EQ(r0.comm_s, 4);          // [2, 5) u [4, 6)
  EXPECT_DOUBLE_EQ(r0.exposed_comm_s, 3);  // [3, 6)
  EXPECT_DOUBLE_EQ(r0.kind_comm_s[0], 3);
  EXPECT_DOUBLE_EQ(r0.kind_exposed_s[0], 2);  // TP [3, 5)
  EXPECT_DOUBLE_EQ(r0.kind_comm_s[4], 2);
  EXPECT_DOUBLE_EQ(r0.kind_exposed_s[4], 2);  // DP [4, 6): nothing computes then
  const RankTiming& r1 = t.ranks[1];
  EXPECT_DOUBLE_EQ(r1.end_s, 7);  // the barrier it is a member of
  EXPECT_DOUBLE_EQ(r1.pipeline_end_s, 5);
  EXPECT_DOUBLE_EQ(r1.compute_s, 1);
  EXPECT_DOUBLE_EQ(r1.comm_s, 3);
  EXPECT_DOUBLE_EQ(r1.exposed_comm_s, 3);
  EXPECT_DOUBLE_EQ(r1.kind_comm_s[3], 0);  // the zero-length send
  EXPECT_DOUBLE_EQ(r1.kind_comm_s[4], 0);
}

TEST(RankTiming, ComputeAndCommClassesFollowTheTraceView) {
  graph::Task t;
  t.kind = graph::TaskKind::kCompute;
  EXPECT_FALSE(is_compute_task(t));  // a compute task of no pass is "other" on the trace view
  t.pass = std::nullopt;
  EXPECT_TRUE(is_compute_task(t));
  t.kind = graph::TaskKind::kEpComm;
  EXPECT_EQ(comm_kind_index(t), 2);
  t.kind = graph::TaskKind::kBarrier;
  EXPECT_EQ(comm_kind_index(t), -1);
  EXPECT_FALSE(is_compute_task(t));
}

TEST(RankTiming, EventsBackInTimeOnARankAreOurBug) {
  const Case c = make_case();
  RankTimingSink sink(c.g);
  sink.started(0, 2.0);
  EXPECT_THROW(sink.ended(0, 1.0), common::InternalError);
}

}  // namespace
}  // namespace simumax::executor
