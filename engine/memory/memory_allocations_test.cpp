// Named allocations and the memory timeline over a small hand-made graph: same peak as analyze_memory,
// releases matched to what the same op saved, partial releases, the split into static / activation /
// transient.
#include "engine/memory/memory_allocations.hpp"

#include <gtest/gtest.h>

#include "engine/memory/memory_analysis.hpp"
#include "engine/memory/memory_timeline.hpp"

namespace simumax::memory {
namespace {

struct Case {
  graph::TaskGraph g;
  executor::Timeline tl;

  // A compute task of rank 0 running [start, end) on op `op` (its OpRef interned by hand).
  void task(const char* name, schedule::Pass pass, int mb, int layer, int op, int64_t peak, int64_t delta, double start,
            double end) {
    graph::Task t;
    t.pass = pass;
    t.microbatch = mb;
    t.layer = layer;
    t.chunk = 0;
    t.mem_peak_bytes = peak;
    t.mem_delta_bytes = delta;
    t.name = static_cast<uint32_t>(g.names.size());
    g.names.push_back(name);
    graph::OpRef r{0, 0, op, static_cast<int8_t>(pass == schedule::Pass::kBackward ? 1 : 0)};
    t.op_ref = static_cast<uint32_t>(g.op_refs.size());
    g.op_refs.push_back(r);
    g.tasks.push_back(t);
    tl.start.push_back(start);
    tl.end.push_back(end);
    tl.makespan = std::max(tl.makespan, end);
  }
};

// static 150; fwd mb0, fwd mb1 (30 transient, 20 saved each); bwd mb0 frees its own save; bwd mb1 frees a
// save it does not own (falls back to the newest live one); mb2 saves 40 and frees it in two parts.
Case make_case() {
  Case c;
  c.g.num_ranks = 1;
  c.g.global_rank = {0};
  c.g.pp_stage = {0};
  graph::RankStatic rs;
  rs.weight_bytes = 100;
  rs.grad_bytes = 50;
  c.g.rank_static = {rs};
  c.task("op.fwd", schedule::Pass::kForward, 0, 0, 0, 30, 20, 0, 1);
  c.task("op.fwd", schedule::Pass::kForward, 1, 0, 0, 30, 20, 1, 2);
  c.task("op.dgrad", schedule::Pass::kBackward, 0, 0, 0, 10, -20, 2, 3);
  c.task("other.dgrad", schedule::Pass::kBackward, 1, 5, 7, 0, -20, 3, 4);
  c.task("op.fwd", schedule::Pass::kForward, 2, 0, 0, 40, 40, 4, 5);
  c.task("op.dgrad", schedule::Pass::kBackward, 2, 0, 0, 0, -25, 5, 6);
  c.task("op.dgrad", schedule::Pass::kBackward, 2, 0, 0, 0, -15, 6, 7);
  // A collective the rank takes part in carries no memory events.
  graph::Task comm;
  comm.kind = graph::TaskKind::kTpComm;
  comm.group = 0;
  c.g.groups = {{0}};
  c.g.tasks.push_back(comm);
  c.tl.start.push_back(7);
  c.tl.end.push_back(8);
  c.tl.makespan = 8;
  return c;
}

TEST(MemoryAllocations, PeakEqualsAnalyzeMemory) {
  const Case c = make_case();
  const auto tasks = tasks_by_rank(c.g, c.tl, {0});
  const auto analysed = analyze_memory(c.g, c.tl, MemoryOptions{});
  const MemoryTimeline mt = memory_timeline(c.g, c.tl, 0, tasks[0]);
  const RankAllocations ra = rank_allocations(c.g, c.tl, 0, tasks[0]);
  EXPECT_EQ(analysed[0].peak_allocated_bytes, 200);
  EXPECT_EQ(mt.peak_bytes, 200);
  EXPECT_EQ(ra.peak_bytes, 200);
  // Ties go to the later point, as in analyze_memory: the backward of mb0 starting at t=2.
  EXPECT_DOUBLE_EQ(mt.samples[mt.peak_sample].seconds, 2.0);
  EXPECT_EQ(mt.samples[mt.peak_sample].transient_bytes, 10);
  EXPECT_EQ(mt.samples[mt.peak_sample].activation_bytes, 40);
  EXPECT_EQ(mt.samples.back().allocated_bytes(), 150);
}

TEST(MemoryAllocations, ReleasesFreeWhatTheSameOpSaved) {
  const Case c = make_case();
  const RankAllocations ra = rank_allocations(c.g, c.tl, 0, tasks_by_rank(c.g, c.tl, {0})[0]);
  auto find = [&](const std::string& name) {
    for (size_t a = 0; a < ra.allocations.size(); ++a) {
      if (ra.allocations[a].name == name) return a;
    }
    return kNever;
  };
  const size_t mb0 = find("op.fwd mb0 L0 (saved)"), mb1 = find("op.fwd mb1 L0 (saved)");
  ASSERT_NE(mb0, kNever);
  ASSERT_NE(mb1, kNever);
  EXPECT_DOUBLE_EQ(ra.events[ra.allocations[mb0].free_event].seconds, 3.0);  // by op.dgrad mb0
  EXPECT_DOUBLE_EQ(ra.events[ra.allocations[mb1].free_event].seconds, 4.0);  // the fallback
  const size_t rest = find("op.fwd mb2 L0 (saved) (rest)");
  ASSERT_NE(rest, kNever);
  EXPECT_EQ(ra.allocations[rest].bytes, 15);
  EXPECT_DOUBLE_EQ(ra.events[ra.allocations[rest].free_event].seconds, 7.0);
  EXPECT_EQ(ra.allocations[find("op.dgrad mb0 L0 (transient)")].kind, AllocKind::kTransient);
  EXPECT_EQ(ra.allocations[find("weights")].kind, AllocKind::kStatic);
  // What is live at the peak: static, both saves, the running backward's transient.
  int64_t live = 0;
  for (size_t a = 0; a < ra.allocations.size(); ++a) {
    if (ra.live_after(a, ra.peak_event)) live += ra.allocations[a].bytes;
  }
  EXPECT_EQ(live, ra.peak_bytes);
  // At the end only the static allocations are left.
  for (const auto& a : ra.allocations) {
    EXPECT_EQ(a.free_event == kNever, a.kind == AllocKind::kStatic) << a.name;
  }
}

TEST(MemoryAllocations, TasksByRankIncludeCollectivesInStartOrder) {
  const Case c = make_case();
  const auto tasks = tasks_by_rank(c.g, c.tl, {0});
  ASSERT_EQ(tasks[0].size(), c.g.size());
  for (size_t i = 1; i < tasks[0].size(); ++i) EXPECT_LE(c.tl.start[tasks[0][i - 1]], c.tl.start[tasks[0][i]]);
}

}  // namespace
}  // namespace simumax::memory
