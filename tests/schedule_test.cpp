// Pipeline schedules beyond 1F1B (issue #15, docs/schedules.md): ZB-H1's program, its step time against the
// zero-bubble paper's formula (Qi et al. 2024, section 3.1) on hand-set pass times and on real cases, and its
// memory from the same event replay as 1F1B's.
#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/simulate.hpp"
#include "tests/schedule_unit_step.hpp"

namespace simumax {
namespace {

using graph::Program;
using schedule::Pass;

const std::string kRoot = SIMUMAX_SOURCE_DIR;
using tests::unit_step;

// ---- The program ----

// Every micro-batch runs F, B and W once on every stage, in that order; stage r holds at most r deferred W's
// once its B's have passed r; the last B is followed by min(r + 1, mbc) W's; every transfer is named twice.
TEST(ZbH1Program, RunsEachPassOnceAndDefersTheFirstRWeightGradients) {
  for (int pp : {1, 2, 3, 4, 8, 16}) {
    for (int mbc : {1, 2, 3, 8, 13, 32}) {
      const auto programs = graph::zb_h1(pp, mbc);
      std::map<graph::P2p, int> seen;
      for (int r = 0; r < pp; ++r) {
        std::map<std::pair<Pass, int>, int> at;  // (pass, micro-batch) -> step index
        int pending = 0, most = 0, after_last_b = 0;
        const auto steps = tests::serial_computes(programs[r]);
        for (size_t i = 0; i < steps.size(); ++i) {
          const auto& st = steps[i];
          ASSERT_NE(st.kind, Pass::kBackward) << "ZB-H1 splits every backward";
          EXPECT_TRUE(at.emplace(std::pair{*st.kind, st.microbatch}, static_cast<int>(i)).second);
          if (st.kind == Pass::kInputGrad) ++pending, after_last_b = 0;
          if (st.kind == Pass::kWeightGrad) --pending, ++after_last_b;
          if (st.kind == Pass::kForward) most = std::max(most, pending);
        }
        for (int mb = 0; mb < mbc; ++mb) {
          const int f = at.at({Pass::kForward, mb}), b = at.at({Pass::kInputGrad, mb}),
                    w = at.at({Pass::kWeightGrad, mb});
          EXPECT_LT(f, b);
          EXPECT_LT(b, w);
        }
        EXPECT_LE(most, r) << "pp " << pp << " mbc " << mbc << " stage " << r;
        EXPECT_EQ(after_last_b, std::min(r + 1, mbc)) << "pp " << pp << " mbc " << mbc << " stage " << r;
        for (const auto& p : programs[r].comms) ++seen[p];
      }
      for (const auto& [p, n] : seen) EXPECT_EQ(n, 2);
    }
  }
}

// ZB-H1 is 1F1B with the backward split: without its W steps, and with B read as the whole backward, the
// programs are 1F1B's step for step, transfers included.
TEST(ZbH1Program, IsOneFOneBWithTheBackwardSplit) {
  for (auto [pp, mbc] : {std::pair{4, 8}, {2, 8}, {8, 3}, {16, 32}}) {
    const auto zb = graph::zb_h1(pp, mbc), base = graph::one_f_one_b(pp, mbc);
    for (int r = 0; r < pp; ++r) {
      std::vector<std::tuple<std::optional<Pass>, int, uint32_t>> a, b;
      for (const auto& st : zb[r].steps) {
        if (st.kind == Pass::kWeightGrad) continue;
        const std::optional<Pass> k = st.kind == Pass::kInputGrad ? Pass::kBackward : st.kind;
        a.emplace_back(k, st.kind == std::nullopt ? -1 : st.microbatch, st.num_comms);
      }
      for (const auto& st : base[r].steps) {
        b.emplace_back(st.kind, st.kind == std::nullopt ? -1 : st.microbatch, st.num_comms);
      }
      EXPECT_EQ(a, b) << "pp " << pp << " mbc " << mbc << " stage " << r;
      EXPECT_EQ(zb[r].comms, base[r].comms);
    }
  }
}

// ---- Step time against the formula ----

// The paper's hand-computed case (its Figure 3 with pp 4): pp 4, 8 micro-batches, unit F, B and W. 1F1B takes
// m (F+B+W) + (p-1)(F+B+W) = 24 + 9; ZB-H1 m (F+B+W) + (p-1)(F+B-W) = 24 + 3.
TEST(ZbH1Time, UnitPassesMatchThePapersFormula) {
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, "1f1b"), 33.0);
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, "zb-h1"), 27.0);
  // Other shapes, while T_W <= T_F and T_W <= T_B (the paper's assumption for H1).
  for (auto [pp, mbc, f, b, w] : {std::tuple{4, 8, 1.0, 1.5, 0.5}, {8, 16, 1.0, 1.0, 1.0}, {16, 32, 1.0, 1.2, 0.8},
                                  {2, 8, 2.0, 2.0, 1.0}, {16, 64, 1.0, 1.0, 0.9}}) {
    const double full = mbc * (f + b + w);
    EXPECT_NEAR(unit_step(pp, mbc, f, b, w, "1f1b"), full + (pp - 1) * (f + b + w), 1e-9)
        << pp << " " << mbc;
    EXPECT_NEAR(unit_step(pp, mbc, f, b, w, "zb-h1"), full + (pp - 1) * (f + b - w), 1e-9)
        << pp << " " << mbc << " " << f << " " << b << " " << w;
  }
}

// A scenario file of this repository, run under `schedule`.
config::Scenario with_schedule(const std::string& path, const std::string& schedule) {
  config::Scenario s = config::load_scenario(kRoot + "/" + path);
  s.strategy.pipeline_schedule = schedule;
  return s;
}

// One rank per stage, on the fast executor.
RunResult run_stages(const config::Scenario& s, graph::Granularity granularity) {
  RunOptions o;
  o.lowering = {granularity, graph::RankScope::kStages};
  return simulate(s, o);
}

// A real case with the formula evaluated from each stage's own pass times. The slowest stage s* computes m
// micro-batches (each F, B and W with its transfers) and idles while the other stages run their warm-up forwards
// and cool-down backwards: its bubble is, summed over the p - 1 other stages, T_F + T_B + T_W under 1F1B and
// T_F + T_B - T_W under ZB-H1, plus their two transfers (the paper's (p - 1)(...) when stages are identical).
// Under 1F1B the slowest stage's own transfers block it; ZB-H1's are asynchronous (graph::zb_h1).
struct FormulaCheck {
  double simulated_ms = 0, formula_ms = 0;
};

FormulaCheck formula_check(const std::string& path, const std::string& schedule) {
  const config::Scenario s = with_schedule(path, schedule);
  const RunResult r = run_stages(s, graph::Granularity::kChunk);
  const int p = static_cast<int>(s.strategy.pp_size), m = static_cast<int>(s.strategy.micro_batch_num);
  const double k = r.cost.straggler_ratio, link = r.cost.p2p.seconds * k;
  std::vector<double> f(p), b(p), w(p);
  int slowest = 0;
  for (int st = 0; st < p; ++st) {
    const auto& cc = r.cost.chunks[r.model.chunk_of_stage[st]];
    f[st] = cc.fwd_seconds * k, b[st] = (cc.bwd_seconds - cc.wgrad_seconds) * k, w[st] = cc.wgrad_seconds * k;
    if (f[st] + b[st] + w[st] > f[slowest] + b[slowest] + w[slowest]) slowest = st;
  }
  const bool zb = schedule == "zb-h1";
  const double sign = zb ? -1 : 1;
  const int links = (p == 1 || zb) ? 0 : (slowest == 0 || slowest == p - 1 ? 2 : 4);
  double t = m * (f[slowest] + b[slowest] + w[slowest] + links * link);
  for (int st = 0; st < p; ++st) {
    if (st != slowest) t += f[st] + b[st] + sign * w[st] + 2 * link;
  }
  return {r.summary.pp_time_ms, t * 1e3};
}

TEST(ZbH1Time, DefaultB200AndSixteenStagesMatchTheFormulaWithinOnePercent) {
  for (const char* path : {"scenarios/default.json", "tests/data/schedules/llama3_405b_tp8_pp16_mbc32.json"}) {
    for (const std::string schedule : {"1f1b", "zb-h1"}) {
      const FormulaCheck c = formula_check(path, schedule);
      const char* name = schedule == "zb-h1" ? "zb-h1" : "1f1b";
      std::printf("%-55s %-6s pipeline %.2f ms, formula %.2f ms (%+.3f %%)\n", path, name, c.simulated_ms,
                  c.formula_ms, 100 * (c.simulated_ms / c.formula_ms - 1));
      EXPECT_NEAR(c.simulated_ms / c.formula_ms, 1.0, 0.01) << path << " " << name;
    }
  }
}

// ---- Memory ----

// The paper's memory claim for ZB-H1 (same peak as 1F1B) needs what a deferred W keeps (M_W) to be at most what
// a forward holds (M_B): stage r then holds (p - r) M_B + r M_W. Without tensor parallelism stage 0, which defers
// nothing, keeps 1F1B's peak. With tensor and sequence parallelism a linear's W keeps whole-sequence tensors
// (its gathered input, its output gradient), M_W > M_B, and the later stages rise above 1F1B's peak.
struct Peaks {
  std::vector<double> gib;  // per stage
  double max = 0;
};

Peaks peaks(const std::string& path, const std::string& schedule) {
  const RunResult r = run_stages(with_schedule(path, schedule), graph::Granularity::kLayer);
  Peaks p;
  for (const auto& st : r.summary.stages) p.gib.push_back(static_cast<double>(st.peak_alloc_bytes) / (1 << 30));
  p.max = *std::max_element(p.gib.begin(), p.gib.end());
  return p;
}

TEST(ZbH1Memory, StageZeroKeepsOneFOneBsPeakAndLaterStagesHoldTheDeferredWeightGradients) {
  for (const char* path : {"scenarios/default.json", "tests/data/schedules/llama3_405b_tp8_pp16_mbc32.json"}) {
    const Peaks base = peaks(path, "1f1b"), zb = peaks(path, "zb-h1");
    std::printf("%-55s peak GiB 1f1b %.2f zb-h1 %.2f; stage 0: %.2f -> %.2f, last: %.2f -> %.2f\n", path, base.max,
                zb.max, base.gib.front(), zb.gib.front(), base.gib.back(), zb.gib.back());
    // Stage 0 defers no W: only B's gathered copies, held until its W right after, add to its peak.
    EXPECT_NEAR(zb.gib.front() / base.gib.front(), 1.0, 0.05) << path;
    for (size_t st = 1; st < base.gib.size(); ++st) EXPECT_GT(zb.gib[st], base.gib[st]) << path << " stage " << st;
  }
}

// ---- DualPipe ----

// Every micro-batch runs on every rank once, in the chunk of its direction (the first half of the micro-batches
// forward through stages 0 .. pp - 1 on ranks 0 .. pp - 1, the second half from rank pp - 1), as F then either the
// whole backward or B then W; every transfer is named by both sides; a rank holds at most pp + 1 micro-batches'
// forwards (DeepSeek-V3's table: activation PP + 1, against 1F1B's PP).
TEST(DualPipeProgram, RunsEachMicroBatchOnceInItsDirectionAndHoldsAtMostPpPlusOneForwards) {
  for (int pp : {2, 4, 6, 8, 16}) {
    for (int mbc : {2 * pp, 2 * pp + 2, 20, 4 * pp}) {
      if (mbc < 2 * pp) continue;
      const auto programs = graph::dualpipe(pp, mbc);
      std::map<graph::P2p, int> seen;
      int most_anywhere = 0;
      for (int r = 0; r < pp; ++r) {
        std::map<std::pair<Pass, int>, int> at;
        int in_flight = 0, most = 0;
        const auto steps = tests::serial_computes(programs[r]);
        for (size_t i = 0; i < steps.size(); ++i) {
          const auto& st = steps[i];
          EXPECT_EQ(st.chunk, st.microbatch < mbc / 2 ? 0 : 1) << "pp " << pp << " mbc " << mbc << " rank " << r;
          EXPECT_TRUE(at.emplace(std::pair{*st.kind, st.microbatch}, static_cast<int>(i)).second);
          if (st.kind == Pass::kForward) most = std::max(most, ++in_flight);
          if (st.kind == Pass::kBackward || st.kind == Pass::kInputGrad) --in_flight;
        }
        for (int mb = 0; mb < mbc; ++mb) {
          const int f = at.at({Pass::kForward, mb});
          if (at.count({Pass::kBackward, mb})) {
            EXPECT_LT(f, at.at({Pass::kBackward, mb}));
            EXPECT_EQ(at.count({Pass::kInputGrad, mb}) + at.count({Pass::kWeightGrad, mb}), 0u);
          } else {
            EXPECT_LT(f, at.at({Pass::kInputGrad, mb}));
            EXPECT_LT(at.at({Pass::kInputGrad, mb}), at.at({Pass::kWeightGrad, mb}));
          }
        }
        most_anywhere = std::max(most_anywhere, most);
        EXPECT_LE(most, pp + 1) << "pp " << pp << " mbc " << mbc << " rank " << r;
        for (const auto& p : programs[r].comms) ++seen[p];
      }
      EXPECT_EQ(most_anywhere, pp + 1) << "pp " << pp << " mbc " << mbc;
      for (const auto& [p, n] : seen) EXPECT_EQ(n, 2);
      // Each direction's micro-batch crosses pp - 1 links forward and pp - 1 back.
      EXPECT_EQ(seen.size(), static_cast<size_t>(2 * mbc * (pp - 1))) << "pp " << pp << " mbc " << mbc;
    }
  }
}

// DeepSeek-V3's table (technical report, Table 2; DualPipe's README): with F, B (the whole backward), W and F&B
// the times of one chunk, DualPipe's bubble is (PP/2 - 1)(F&B + B - 3W), against 1F1B's (PP - 1)(F + B) and
// ZB1P's (PP - 1)(F + B - 2W), each with the same number of stages. Each rank computes mbc micro-batches (half
// through each of its two stages), so the step is mbc (F + B) plus the bubble. F&B is an overlapped pair step, but
// these hand-timed chunks have no EP all-to-alls, so a pair runs F then B: F&B = F + B. Hand-computed, pp 4, 8 micro-
// batches, unit F, B (input gradient) and W: 24 + (4/2 - 1)(3 + 2 - 3) = 26, against 1F1B's 24 + 3 * 3 = 33.
TEST(DualPipeTime, UnitPassesMatchDeepSeekV3sTable) {
  EXPECT_DOUBLE_EQ(unit_step(4, 8, 1, 1, 1, "dualpipe"), 26.0);
  // Other shapes with T_F = T_B (the input gradient): the table holds exactly for any W <= F. With T_F != T_B the
  // schedule's critical path changes and the table is off (docs/schedules.md gives the measured values).
  for (auto [pp, mbc, f, b, w] : {std::tuple{4, 8, 1.0, 1.0, 0.5}, {8, 16, 1.0, 1.0, 1.0}, {8, 16, 1.0, 1.0, 0.5},
                                  {8, 16, 1.0, 1.0, 0.2}, {8, 20, 1.0, 1.0, 0.8}, {2, 8, 2.0, 2.0, 1.0},
                                  {4, 12, 1.5, 1.5, 1.0}, {16, 64, 1.0, 1.0, 0.9}, {6, 12, 1.0, 1.0, 0.7}}) {
    const double full = b + w, fb = f + full;
    const double expected = mbc * (f + full) + (pp / 2 - 1) * (fb + full - 3 * w);
    const double got = unit_step(pp, mbc, f, b, w, "dualpipe");
    std::printf("dualpipe pp %2d mbc %2d F %.1f B %.1f W %.1f: step %.3f, table %.3f, bubble %.3f (1F1B's %.3f)\n",
                pp, mbc, f, b, w, got, expected, got - mbc * (f + full), (pp - 1) * (f + full));
    EXPECT_NEAR(got, expected, 1e-9) << pp << " " << mbc << " " << f << " " << b << " " << w;
  }
}

// DeepSeek-V3's table on a DeepSeek-V3-style MoE case (its layer: MLA, 256 experts, top-8, a shared expert; 32
// MoE layers on pp 8, tp1 ep8, 16 micro-batches). The table assumes identical stages, so every chunk is given the
// middle stage's F, B and W (the ends' embedding and head removed), with no DP or optimizer work; the step is m (F +
// B) plus the table's bubble, B the whole backward. 1F1B's and ZB-H1's rows hold exactly. DualPipe's F&B is an
// overlapped pair (dualpipe.py's overlapped_forward_backward, ScheduleStep::paired): the forward of one stage and
// the backward of the other merged layer by layer, each one's EP all-to-alls beside the other's compute; the
// table's F&B is that pair's time T_FB, read from the middle rank's chunk.fwd_bwd task (its stages are identical
// middle stages): 99.91 ms against F + B = 112.13 ms. The step falls from 2081.26 ms (F&B run as F then B) to
// 1968.80 ms, 4.4 % under the table with T_FB: the table's m (F + B) still counts each pair's F and B as F + B,
// where a rank runs up to m of its forwards in pairs, each saving F + B - T_FB. So the step lies between the
// table minus m (F + B - T_FB) and the table; 1968.80 ms is the measured value (kept as a regression pin, not
// derived: which rank's pairs lie on the critical path is the schedule's, not the table's). The table counts no
// transfers; with the case's kept, each schedule pays its own on top (printed, docs/schedules.md).
struct TableCheck {
  double simulated_ms = 0, table_ms = 0, fb_ms = 0, f_plus_b_ms = 0;
};

TableCheck table_check(const std::string& path, const std::string& schedule, bool keep_p2p) {
  const config::Scenario s = with_schedule(path, schedule);
  const model::StepModel m = model::build_step_model(s);
  cost::StepCost c = cost::cost_step(s, m);
  const int p = static_cast<int>(s.strategy.pp_size), mbc = static_cast<int>(s.strategy.micro_batch_num);
  const cost::ChunkCost mid = c.chunks[m.chunk_of_stage[p / 2]];
  for (auto& cc : c.chunks) {
    cc.fwd_seconds = mid.fwd_seconds, cc.bwd_seconds = mid.bwd_seconds, cc.wgrad_seconds = mid.wgrad_seconds;
    cc.dense_dp = cc.moe_dp = cost::DpCost{};
    cc.optimizer = cost::OptimizerCost{};
  }
  if (!keep_p2p) c.p2p = cost::CommTime{};
  c.straggler_ratio = 1;
  const auto g = graph::lower_step(s, m, c, {graph::Granularity::kChunk, graph::RankScope::kStages});
  const double f = mid.fwd_seconds, b = mid.bwd_seconds, w = mid.wgrad_seconds;
  double bubble = (p - 1) * (f + b);
  if (schedule == "zb-h1") bubble = (p - 1) * (f + b - 2 * w);
  double fb = f + b;
  if (schedule == "dualpipe") {
    // T_FB: the middle rank's overlapped pair (both its stages are middle stages), the longest of its pair tasks.
    fb = 0;
    for (const auto& t : g.tasks) {
      if (g.pp_stage[t.rank] == static_cast<uint32_t>(p / 2) && g.names[t.name] == "chunk.fwd_bwd") {
        fb = std::max(fb, t.seconds);
      }
    }
    bubble = (p / 2 - 1) * (fb + b - 3 * w);
  }
  return {executor::run_fast(g).makespan * 1e3, (mbc * (f + b) + bubble) * 1e3, fb * 1e3, (f + b) * 1e3};
}

const char* const kDeepSeekCase = "tests/data/schedules/deepseekv3_l32_ep8_pp8_mbc16.json";

TEST(DualPipeTable, DeepSeekV3StyleStepMatchesTheTable) {
  for (bool keep_p2p : {false, true}) {
    for (const std::string schedule : {"1f1b", "zb-h1", "dualpipe"}) {
      const TableCheck t = table_check(kDeepSeekCase, schedule, keep_p2p);
      std::printf("%-8s %s: step %.2f ms, table %.2f ms (%+.3f %%), F&B %.2f ms, F + B %.2f ms\n",
                  schedule.c_str(), keep_p2p ? "with transfers" : "no transfers  ", t.simulated_ms, t.table_ms,
                  100 * (t.simulated_ms / t.table_ms - 1), t.fb_ms, t.f_plus_b_ms);
      if (keep_p2p) continue;
      if (schedule != "dualpipe") {
        EXPECT_NEAR(t.simulated_ms, t.table_ms, 1e-6);
        continue;
      }
      EXPECT_LT(t.fb_ms, t.f_plus_b_ms);
      EXPECT_LT(t.simulated_ms, t.table_ms);
      EXPECT_GT(t.simulated_ms, t.table_ms - 16 * (t.f_plus_b_ms - t.fb_ms));
      EXPECT_NEAR(t.simulated_ms, 1968.80, 0.01);
    }
  }
}

// Memory from the same replay, on the real case: a DualPipe rank holds the parameters, gradients and optimizer
// state of its two stages (rank r: stages r and pp - 1 - r, so rank 0 the embedding and the head), 2x a middle
// 1F1B rank's; at its peak each of the two middle ranks holds PP + 1 micro-batches' forward activations (the
// table's PP + 1; their first main-part F&B is not overlapped, F then B), where 1F1B's stage r holds PP - r (the
// table's PP on stage 0). The other inner ranks hold PP: there the (PP + 1)-th forward only ever runs in an
// overlapped pair, which frees its backward's activations layer by layer as its forward allocates its own. A is one micro-batch's forward activations on a middle stage, read
// from 1F1B's stages.
struct Held {
  std::vector<int64_t> weight_bytes, grad_bytes, optimizer_bytes;
  std::vector<double> peak_gib, activation_gib;
};

Held held(const std::string& path, const std::string& schedule) {
  const RunResult r = run_stages(with_schedule(path, schedule), graph::Granularity::kLayer);
  Held h;
  for (const auto& st : r.summary.stages) {
    h.weight_bytes.push_back(st.weight_bytes);
    h.grad_bytes.push_back(st.grad_bytes);
    h.optimizer_bytes.push_back(st.optimizer_state_bytes);
    h.peak_gib.push_back(static_cast<double>(st.peak_alloc_bytes) / (1 << 30));
    h.activation_gib.push_back(static_cast<double>(st.activation_bytes_at_peak) / (1 << 30));
  }
  return h;
}

TEST(DualPipeMemory, DeepSeekV3StyleRanksHoldTwiceTheParametersAndPpPlusOneForwards) {
  const Held base = held(kDeepSeekCase, "1f1b"), zb = held(kDeepSeekCase, "zb-h1"),
             dual = held(kDeepSeekCase, "dualpipe");
  const size_t pp = base.weight_bytes.size();
  const double a = base.activation_gib[1] / static_cast<double>(pp - 1);
  for (size_t r = 0; r < pp; ++r) {
    std::printf("rank %zu: weights %.3f -> %.3f GiB; activations at peak in forwards (A = %.3f GiB) 1f1b %.3f "
                "zb-h1 %.3f dualpipe %.3f; peak %.2f / %.2f / %.2f GiB\n",
                r, base.weight_bytes[r] / 1073741824.0, dual.weight_bytes[r] / 1073741824.0, a,
                base.activation_gib[r] / a, zb.activation_gib[r] / a, dual.activation_gib[r] / a, base.peak_gib[r],
                zb.peak_gib[r], dual.peak_gib[r]);
    const size_t mirror = pp - 1 - r;
    EXPECT_EQ(dual.weight_bytes[r], base.weight_bytes[r] + base.weight_bytes[mirror]);
    EXPECT_EQ(dual.grad_bytes[r], base.grad_bytes[r] + base.grad_bytes[mirror]);
    EXPECT_EQ(dual.optimizer_bytes[r], base.optimizer_bytes[r] + base.optimizer_bytes[mirror]);
    if (r == 0 || r == pp - 1) continue;  // the ends hold the embedding and the head
    EXPECT_NEAR(base.activation_gib[r] / a, static_cast<double>(pp - r), 0.01 * static_cast<double>(pp - r));
    const double most = r == pp / 2 - 1 || r == pp / 2 ? pp + 1 : pp;
    EXPECT_NEAR(dual.activation_gib[r] / a, most, 0.01 * most) << "rank " << r;
  }
  EXPECT_NEAR(base.activation_gib[0] / a, static_cast<double>(pp), 0.01 * static_cast<double>(pp));
  // The middle ranks' stages are identical: exactly 2x.
  EXPECT_EQ(dual.weight_bytes[pp / 2], 2 * base.weight_bytes[pp / 2]);
}

// summary.json names the schedule when it is not 1F1B (a 1F1B run's file keeps SimuMax's keys).
TEST(DualPipeSummary, NamesTheScheduleInSummaryJson) {
  config::Scenario s = config::load_scenario(kRoot + "/" + kDeepSeekCase);
  const std::string base = report::summary_json(simulate(s, RunOptions{}).summary);
  EXPECT_EQ(base.find("pipeline_schedule"), std::string::npos);
  s.strategy.pipeline_schedule = "dualpipe";
  EXPECT_NE(report::summary_json(simulate(s, RunOptions{}).summary).find("\"pipeline_schedule\": \"dualpipe\""),
            std::string::npos);
}

}  // namespace
}  // namespace simumax
