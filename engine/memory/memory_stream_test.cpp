// MemoryStream against analyze_memory on a small hand-made graph: the same peaks with tasks starting at one date
// (walked in task order), and SimuMax's cached micro-batches at the peak, worked out by hand.
#include "engine/memory/memory_stream.hpp"

#include <gtest/gtest.h>

#include "engine/executor/task_sink.hpp"

namespace simumax::memory {
namespace {

struct Case {
  graph::TaskGraph g;
  executor::Timeline tl;

  void task(uint32_t rank, schedule::Pass pass, int mb, int64_t peak, int64_t delta, double start, double end) {
    graph::Task t;
    t.rank = rank;
    t.pass = pass;
    t.kind = pass == schedule::Pass::kRecompute ? graph::TaskKind::kRecompute : graph::TaskKind::kCompute;
    t.microbatch = mb;
    t.chunk = 0;
    t.mem_peak_bytes = peak;
    t.mem_delta_bytes = delta;
    g.tasks.push_back(t);
    tl.start.push_back(start);
    tl.end.push_back(end);
  }
};

// Rank 0 (static 100): forwards of micro-batches 0-2 save 20 each; backward 0 peaks at 3 with 60 live; at 5 the
// forward of mb 3 (+30 saved) and a recompute of mb 2 (70 transient) start together: walked in task order the
// recompute sees the 30 and is the peak (220); the backward of mb 1 ends at 5, so mb 1 is freed at the peak.
// Rank 1 (static 10): two forwards, then the backward of mb 1 peaks while mb 0 is still cached.
Case make_case() {
  Case c;
  c.g.num_ranks = 2;
  c.g.global_rank = {0, 1};
  c.g.pp_stage = {0, 0};
  graph::RankStatic s0, s1;
  s0.weight_bytes = 100;
  s1.weight_bytes = 10;
  c.g.rank_static = {s0, s1};
  using schedule::Pass;
  c.task(0, Pass::kForward, 0, 10, 20, 0, 1);
  c.task(0, Pass::kForward, 1, 10, 20, 1, 2);
  c.task(0, Pass::kForward, 2, 5, 20, 2, 3);
  c.task(0, Pass::kBackward, 0, 50, -20, 3, 4);
  c.task(0, Pass::kBackward, 1, 0, -20, 4, 5);
  c.task(0, Pass::kForward, 3, 0, 30, 5, 6);
  c.task(0, Pass::kRecompute, 2, 70, 0, 5, 5.5);
  c.task(1, Pass::kForward, 0, 0, 20, 0, 1);
  c.task(1, Pass::kForward, 1, 0, 20, 1, 2);
  c.task(1, Pass::kBackward, 1, 50, -20, 2, 3);
  return c;
}

TEST(MemoryStream, SamePeaksAsAnalyzeMemoryAndHandWorkedCachedMicroBatches) {
  const Case c = make_case();
  MemoryStream stream(c.g, 0.5);
  executor::replay_timeline(c.g, c.tl, stream);
  const std::vector<RankMemory> got = stream.finish();
  const std::vector<RankMemory> want = analyze_memory(c.g, c.tl, {0.5, false});
  ASSERT_EQ(got.size(), 2u);
  for (size_t r = 0; r < got.size(); ++r) {
    SCOPED_TRACE(r);
    EXPECT_EQ(got[r].peak_allocated_bytes, want[r].peak_allocated_bytes);
    EXPECT_EQ(got[r].peak_reserved_bytes, want[r].peak_reserved_bytes);
    EXPECT_EQ(got[r].activation_bytes_at_peak, want[r].activation_bytes_at_peak);
    EXPECT_EQ(got[r].transient_bytes_at_peak, want[r].transient_bytes_at_peak);
    EXPECT_EQ(got[r].peak_seconds, want[r].peak_seconds);
    EXPECT_EQ(got[r].peak_task, want[r].peak_task);
    EXPECT_EQ(got[r].max_live_activation_bytes, want[r].max_live_activation_bytes);
  }
  EXPECT_EQ(got[0].peak_allocated_bytes, 220);
  EXPECT_EQ(got[0].activation_bytes_at_peak, 50);
  EXPECT_EQ(got[0].peak_task, 6u);
  EXPECT_EQ(got[0].max_live_activation_bytes, 60);
  // mb 0 and 1 freed (mb 1's backward ends at the peak's date), mb 2 is the running one, mb 3 still running.
  EXPECT_EQ(got[0].cached_micro_batches, 0);
  EXPECT_EQ(got[1].peak_allocated_bytes, 100);  // 10 + 40 live + 50
  EXPECT_EQ(got[1].cached_micro_batches, 1);    // mb 0; mb 1 is the running one
}

}  // namespace
}  // namespace simumax::memory
