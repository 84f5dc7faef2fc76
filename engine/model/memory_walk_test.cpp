#include "engine/model/memory_walk.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace simumax::model {
namespace {

struct Spec {
  bool rec = false;
  int64_t cache = 0, in = 0, fwd_peak = 0;
  bool break_point = false, lead_in = false;
  int64_t bwd_peak = 0;
};

std::vector<Op> ops_of(const std::vector<Spec>& specs) {
  std::vector<Op> ops;
  for (const auto& s : specs) {
    Op op;
    op.recompute = s.rec;
    op.break_point = s.break_point;
    op.recompute_lead_in = s.lead_in;
    op.act_cache = s.cache;
    op.act_in_bytes = s.in;
    op.act_fwd_peak = s.fwd_peak;
    op.act_bwd_peak = s.bwd_peak;
    ops.push_back(op);
  }
  return ops;
}

std::vector<int64_t> deltas(const std::vector<MemStep>& steps, Pass kind) {
  std::vector<int64_t> out;
  for (const auto& st : steps) {
    if (st.kind == kind) out.push_back(st.delta);
  }
  return out;
}

struct Case {
  const char* what;
  std::vector<Spec> ops;
  std::vector<int64_t> forward, replay, backward;  // deltas in execution order
};

// SimuMax's statuses (LLMModel.set_first_last_recompute_status + set_breakpoints): only a FIRST op holds its
// inputs through the forward; every other recomputed op gets its cache back from the replay.
const std::vector<Case> kCases = {
    {"a lone recomputed op holds nothing and its replay re-creates its cache",
     {{false, 1}, {true, 10, 3}, {false, 2}}, {1, 0, 2}, {10}, {-2, -10, -1}},
    {"a run's first op holds its inputs, the next its replayed cache",
     {{false, 1}, {true, 10, 3}, {true, 5, 7}}, {1, 3, 0}, {0, 5}, {-5, -3, -1}},
    {"the block's first op is FIRST even alone",
     {{true, 10, 3}, {false, 2}}, {3, 2}, {0}, {-2, -3}},
    {"a break point is not FIRST; the op after it is",
     {{false, 1}, {true, 10, 3, 0, true}, {true, 5, 7}}, {1, 0, 7}, {0, 10}, {-7, -10, -1}},
    {"lead-in leaves hold the inputs and the op's own cache is replayed",
     {{false, 1}, {true, 10, 4, 0, false, true}, {false, 2}}, {1, 4, 2}, {10}, {-2, -14, -1}},
};

TEST(MemoryWalk, SegmentsFollowSimuMaxStatuses) {
  for (const auto& c : kCases) {
    const BlockProgram p = block_program(ops_of(c.ops));
    EXPECT_EQ(deltas(p.forward, Pass::kForward), c.forward) << c.what;
    EXPECT_EQ(deltas(p.backward, Pass::kRecompute), c.replay) << c.what;
    EXPECT_EQ(deltas(p.backward, Pass::kBackward), c.backward) << c.what;
    EXPECT_EQ(span_of(p.forward).delta + span_of(p.backward).delta, 0) << c.what;
  }
}

TEST(MemoryWalk, LeadInKeepsItsInputsAndReplayedCacheUnderTheBackward) {
  // An MLA core attention under sdp_only: the key Concat holds 4, the replay re-creates the cache (10), and
  // the backward's transient (30) comes on top of both.
  const BlockProgram p = block_program(ops_of({{false}, {true, 10, 4, 20, false, true, 30}}));
  EXPECT_EQ(p.forward[1].peak, 4 + 20);  // the held inputs are live while the op's forward runs
  EXPECT_EQ(then(span_of(p.forward), span_of(p.backward)).peak, 4 + 10 + 30);
}

}  // namespace
}  // namespace simumax::model
