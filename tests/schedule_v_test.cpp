// The V-shaped schedules (docs/schedules.md): ZB-V (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024,
// section 6) and DualPipeV (github.com/deepseek-ai/DualPipe, dualpipev.py). Rank r holds stages r and
// 2pp - 1 - r of a model cut into 2pp stages. Their programs, their step on hand-set pass times against the
// papers' numbers, and their memory from the same event replay as every schedule's.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/schedule/registry.hpp"
#include "engine/simulate.hpp"
#include "tests/schedule_unit_step.hpp"

namespace simumax {
namespace {

using schedule::Program;
using schedule::Pass;

const std::string kRoot = SIMUMAX_SOURCE_DIR;
using tests::unit_step;

std::vector<Program> programs(const std::string& name, int pp, int mbc) {
  schedule::Layout l;
  l.pp = pp, l.micro_batches = mbc, l.group = pp;
  return schedule::find(name).programs(l);
}

// What one rank's program does: every (micro-batch, chunk) runs F then the whole backward or B then W, once;
// returns the most chunk forwards it holds at once (a forward is held until its whole backward, and until its W
// with `until_w`, else until its B).
int check_rank(const Program& prog, int mbc, const std::string& what, bool until_w) {
  std::map<std::tuple<schedule::Pass, int, int>, size_t> at;
  int in_flight = 0, most = 0;
  const auto steps = tests::serial_computes(prog);
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& st = steps[i];
    EXPECT_TRUE(at.emplace(std::tuple{*st.kind, st.microbatch, st.chunk}, i).second) << what;
    if (st.kind == Pass::kForward) most = std::max(most, ++in_flight);
    if (st.kind == Pass::kBackward || st.kind == (until_w ? Pass::kWeightGrad : Pass::kInputGrad)) {
      --in_flight;
    }
  }
  for (int mb = 0; mb < mbc; ++mb) {
    for (int c : {0, 1}) {
      const size_t f = at.at({Pass::kForward, mb, c});
      if (at.count({Pass::kBackward, mb, c})) {
        EXPECT_LT(f, at.at({Pass::kBackward, mb, c})) << what;
      } else {
        EXPECT_LT(f, at.at({Pass::kInputGrad, mb, c})) << what;
        EXPECT_LT(at.at({Pass::kInputGrad, mb, c}), at.at({Pass::kWeightGrad, mb, c})) << what;
      }
    }
  }
  return most;
}

// Every transfer is named by both sides, and each micro-batch crosses pp - 1 links down the V and pp - 1 back
// up, forward and backward: 4 (pp - 1) per micro-batch (none at the tip, where the hand-over is local).
void check_transfers(const std::vector<Program>& progs, int mbc, const std::string& what) {
  std::map<schedule::P2p, int> seen;
  for (const auto& p : progs) {
    for (const auto& c : p.comms) ++seen[c];
  }
  for (const auto& [p, n] : seen) EXPECT_EQ(n, 2) << what << " micro-batch " << p.microbatch;
  const int pp = static_cast<int>(progs.size());
  EXPECT_EQ(seen.size(), static_cast<size_t>(4 * (pp - 1) * mbc)) << what;
}

// ZB-V splits every backward; each rank holds at most 2pp chunk forwards, the activation memory of 1F1B's
// first stage (pp forwards of a stage twice the size), which is the paper's claim for ZB-V.
TEST(ZbVProgram, RunsEachPassOnceAndHoldsAtMostOneFOneBsForwards) {
  for (int pp : {2, 3, 4, 8, 16}) {
    for (int mbc : {1, 2, pp, 2 * pp - 1, 2 * pp, 3 * pp + 1, 4 * pp}) {
      const std::string what = "pp " + std::to_string(pp) + " mbc " + std::to_string(mbc);
      const auto progs = programs("zb-v", pp, mbc);
      ASSERT_EQ(progs.size(), static_cast<size_t>(pp));
      for (int r = 0; r < pp; ++r) {
        for (const auto& st : progs[r].steps) EXPECT_NE(st.kind, Pass::kBackward) << what;
        EXPECT_LE(check_rank(progs[r], mbc, what, true), 2 * pp) << what << " rank " << r;
      }
      check_transfers(progs, mbc, what);
    }
  }
}

// DualPipeV holds at most PP + 1 = 2pp + 1 chunk forwards on a rank (its README's table, activation per device
// PP + 1 with PP the number of stages), and exactly that on some rank.
TEST(DualPipeVProgram, RunsEachPassOnceAndHoldsAtMostTwoPpPlusOneForwards) {
  for (int pp : {1, 2, 3, 4, 8, 16}) {
    for (int mbc : {2 * pp, 2 * pp + 1, 3 * pp, 20}) {
      if (mbc < 2 * pp) continue;
      const std::string what = "pp " + std::to_string(pp) + " mbc " + std::to_string(mbc);
      const auto progs = programs("dualpipev", pp, mbc);
      int most = 0;
      for (int r = 0; r < pp; ++r) {
        most = std::max(most, check_rank(progs[r], mbc, what + " rank " + std::to_string(r), false));
      }
      EXPECT_EQ(most, 2 * pp + 1) << what;
      check_transfers(progs, mbc, what);
    }
  }
}

// ZB-V with T_F = T_B = T_W (the paper's assumption): no rank idles once it has started, so the step is each
// rank's 2m (F + B + W) plus the p - 1 forwards the last rank waits for its first input, 6m + p - 1 in unit
// passes; the authors' scheduler (zbv.py, PipelineGraph.try_v_schedule with unit costs and no transfer time) gives
// the same makespan. Hand-computed: pp 4, 8 micro-batches: 48 + 3 = 51. Our greedy reaches it from p
// micro-batches on (ZbVTime.FewerMicroBatchesThanTwoPMinusOneMatchTheAuthorsGreedy).
TEST(ZbVTime, UnitPassesHaveNoBubbleOnceARankHasStarted) {
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, "zb-v"), 51.0);
  for (auto [pp, mbc] : {std::pair{2, 4}, {2, 8}, {3, 6}, {4, 7}, {4, 16}, {8, 16}, {8, 32}, {16, 32}}) {
    EXPECT_DOUBLE_EQ(unit_step(pp, mbc, 1, 1, 1, "zb-v"), 6.0 * mbc + pp - 1) << pp << " " << mbc;
    EXPECT_DOUBLE_EQ(unit_step(pp, mbc, 2, 2, 2, "zb-v"), 2 * (6.0 * mbc + pp - 1)) << pp << " " << mbc;
  }
}

// The authors' greedy (zbv.py, PipelineGraph.try_v_schedule, costs f = b = w = 1, c = 0, max_mem 2p forwards)
// with fewer than 2p - 1 micro-batches. Its warm-up puts F of chunk 0 on every rank, then from the last rank up
// rank i's first chunk-1 F, adding chunk-0 F's on ranks 0..i only while they end before that F's input arrives;
// then rounds of one B and one F per rank, W's filling the waits. Its B/W "chunk 0" is our chunk 1 (create_schedule
// swaps them). Hand-run, pp 2, m 2, in our names (F/f forward of chunk 0/1, B/b input gradient, W/w weights,
// [start, end)):
//   rank 0: F0 [0,1) F1 [1,2) f0 [3,4) (rank 1's f0 ends at 3) b0 [4,5) f1 [5,6) b1 [6,7) B0 [7,8) w0 [8,9)
//           B1 [9,10) w1 W0 W1 [10,13)
//   rank 1: F0 [1,2) f0 [2,3) F1 [3,4) f1 [4,5) b0 [5,6) B0 [6,7) b1 [7,8) B1 [8,9) w0 W0 w1 W1 [9,13)
// 13 = 6m + p - 1: each rank runs its 6m passes and waits p - 1 (rank 1 at the start, rank 0 for f0). Run the same
// way on every (p, m) with 2 <= p <= 16 and p <= m <= 2p - 2 it gives 6m + p - 1 (no rank waits more than the
// V's p - 1), and below p micro-batches more (p 4: 17, 19, 23 for m 1, 2, 3; p 8, m 4: 39). Our order used to
// fill 2p forwards first (rank 0 there: F0 F1 f0 f1 b0 ..., waiting for f1) and took 2 (2p - 1 - m) more.
TEST(ZbVTime, FewerMicroBatchesThanTwoPMinusOneMatchTheAuthorsGreedy) {
  for (auto [pp, mbc, step] : {std::tuple{2, 2, 13}, {3, 3, 20}, {3, 4, 26}, {4, 4, 27}, {4, 5, 33}, {4, 6, 39},
                               {8, 8, 55}, {8, 11, 73}, {8, 14, 91}, {16, 16, 111}, {16, 23, 153}, {16, 30, 195},
                               {4, 1, 17}, {4, 2, 19}, {4, 3, 23}, {8, 4, 39}}) {
    EXPECT_DOUBLE_EQ(unit_step(pp, mbc, 1, 1, 1, "zb-v"), step) << pp << " " << mbc;
  }
  for (int pp = 2; pp <= 8; ++pp) {
    for (int mbc = pp; mbc <= 2 * pp - 2; ++mbc) {
      const std::string what = "pp " + std::to_string(pp) + " mbc " + std::to_string(mbc);
      EXPECT_DOUBLE_EQ(unit_step(pp, mbc, 1, 1, 1, "zb-v"), 6.0 * mbc + pp - 1) << what;
      const auto progs = programs("zb-v", pp, mbc);
      for (int r = 0; r < pp; ++r) {
        EXPECT_LE(check_rank(progs[r], mbc, what, true), 2 * pp) << what << " rank " << r;
      }
      check_transfers(progs, mbc, what);
    }
  }
}

// DualPipe's README table, DualPipeV row: bubble (PP/2 - 1)(F&B + B - 3W) with PP the number of stages (2pp), F,
// B (the whole backward) and W one chunk's; F&B = F + B as we do not overlap them. Each rank computes every
// micro-batch through both of its chunks: 2m (F + B). Hand-computed on the README's example, 4 ranks (8 stages)
// and 10 micro-batches, unit F, B (input gradient) and W: 2 * 10 * 3 + (4 - 1)(3 + 2 - 3) = 66.
TEST(DualPipeVTime, UnitPassesMatchTheReadmeTable) {
  EXPECT_DOUBLE_EQ(unit_step(4, 10, 1, 1, 1, "dualpipev"), 66.0);
  for (auto [pp, mbc, f, w] : {std::tuple{2, 4, 1.0, 1.0}, {4, 8, 1.0, 0.5}, {8, 16, 1.0, 1.0}, {8, 20, 1.0, 0.8},
                               {16, 32, 1.0, 1.0}}) {
    const double b = f + w;  // the whole backward, with B (input gradient) = F
    EXPECT_NEAR(unit_step(pp, mbc, f, f, w, "dualpipev"), 2 * mbc * (f + b) + (pp - 1) * ((f + b) + b - 3 * w),
                1e-9)
        << pp << " " << mbc;
  }
}

// The real cases: step with and without DP, pipeline time, the busiest rank's compute and peak memory per
// schedule (printed for docs/schedules.md). A V rank holds two stages of a 2pp-stage model: a middle rank holds
// exactly a middle 1F1B rank's parameters (1x), where DualPipe's hold 2x.
struct Measured {
  double step_ms = 0, pipeline_ms = 0, busiest_ms = 0, peak_gib = 0;
  double f_ms = 0, b_ms = 0, w_ms = 0;  // a middle V stage's chunk: forward, whole backward, weight gradients
  std::vector<int64_t> weight_bytes;
  std::vector<double> peak_by_rank;
};

Measured measure(const std::string& path, const std::string& schedule, graph::Granularity gr) {
  config::Scenario s = config::load_scenario(kRoot + "/" + path);
  s.strategy.pipeline_schedule = schedule;
  RunOptions o;
  o.lowering = {gr, graph::RankScope::kStages};
  const RunResult r = simulate(s, o);
  Measured out;
  out.step_ms = r.summary.step_time_ms;
  out.pipeline_ms = r.summary.pp_time_ms;
  const double m = static_cast<double>(s.strategy.micro_batch_num);
  for (size_t st = 0; st < r.model.held_chunks.size(); ++st) {
    double busy = 0;
    for (int ci : r.model.held_chunks[st]) busy += r.cost.chunks[ci].fwd_seconds + r.cost.chunks[ci].bwd_seconds;
    busy *= m * r.cost.straggler_ratio * r.model.microbatch_chunks /
            static_cast<double>(r.model.held_chunks[st].size());
    out.busiest_ms = std::max(out.busiest_ms, busy * 1e3);
  }
  const auto& mid = r.cost.chunks[r.model.chunk_of_stage[r.model.chunk_of_stage.size() / 2]];
  out.f_ms = mid.fwd_seconds * r.cost.straggler_ratio * 1e3;
  out.b_ms = mid.bwd_seconds * r.cost.straggler_ratio * 1e3;
  out.w_ms = mid.wgrad_seconds * r.cost.straggler_ratio * 1e3;
  for (const auto& st : r.summary.stages) {
    out.weight_bytes.push_back(st.weight_bytes);
    out.peak_by_rank.push_back(static_cast<double>(st.peak_alloc_bytes) / (1 << 30));
  }
  out.peak_gib = *std::max_element(out.peak_by_rank.begin(), out.peak_by_rank.end());
  return out;
}

TEST(VScheduleCases, DefaultB200AndSixteenStagesBubbleAndMemory) {
  for (const char* path : {"scenarios/default.json", "tests/data/schedules/llama3_405b_tp8_pp16_mbc32.json"}) {
    std::map<std::string, Measured> got;
    for (const std::string name : {"1f1b", "zb-h1", "zb-v", "dualpipev"}) {
      const Measured t = measure(path, name, graph::Granularity::kChunk);
      const Measured mem = measure(path, name, graph::Granularity::kLayer);
      std::printf("%-52s %-9s step %.2f ms, pipeline %.2f ms, busiest rank %.2f ms, bubble %.2f ms; peak %.2f GiB "
                  "(rank 0 %.2f, last %.2f); rank 0 weights %.2f GiB, middle %.2f GiB\n",
                  path, name.c_str(), t.step_ms, t.pipeline_ms, t.busiest_ms, t.pipeline_ms - t.busiest_ms,
                  mem.peak_gib, mem.peak_by_rank.front(), mem.peak_by_rank.back(),
                  mem.weight_bytes.front() / 1073741824.0,
                  mem.weight_bytes[mem.weight_bytes.size() / 2] / 1073741824.0);
      // The papers' step on the busiest rank: ZB-V's zero bubble after the p - 1 forwards the last rank waits
      // for; DualPipeV's README bubble (pp - 1)(F&B + B - 3W), F&B = F + B; from a middle stage's chunk.
      const double p = static_cast<double>(t.weight_bytes.size());
      if (name == "zb-v" || name == "dualpipev") {
        const double formula = t.busiest_ms + (name == "zb-v" ? (p - 1) * t.f_ms
                                                               : (p - 1) * (t.f_ms + 2 * t.b_ms - 3 * t.w_ms));
        std::printf("%-52s %-9s pipeline %.2f ms, formula %.2f ms (%+.2f %%); chunk F %.2f B %.2f W %.2f ms\n", path,
                    name.c_str(), t.pipeline_ms, formula, 100 * (t.pipeline_ms / formula - 1), t.f_ms, t.b_ms, t.w_ms);
      }
      got[name] = mem;
      got[name].pipeline_ms = t.pipeline_ms, got[name].busiest_ms = t.busiest_ms;
    }
    const auto& base = got["1f1b"];
    for (const std::string name : {"zb-v", "dualpipev"}) {
      const auto& v = got[name];
      // 1x parameters: a V rank's two chunks are a 1F1B rank's layers (rank 0 adds the head, which 1F1B puts on
      // the last rank; the other ranks hold no embedding or head).
      const size_t mid = v.weight_bytes.size() / 2;
      if (mid != 0 && mid != v.weight_bytes.size() - 1) {
        EXPECT_EQ(v.weight_bytes[mid], base.weight_bytes[mid]) << path;
      }
      int64_t total_v = 0, total_base = 0;
      for (size_t r = 0; r < v.weight_bytes.size(); ++r) {
        total_v += v.weight_bytes[r], total_base += base.weight_bytes[r];
      }
      EXPECT_EQ(total_v, total_base) << path << " " << name;
      // Less bubble than 1F1B's.
      EXPECT_LT(v.pipeline_ms - v.busiest_ms, base.pipeline_ms - base.busiest_ms) << path << " " << name;
    }
  }
}

}  // namespace
}  // namespace simumax
