// Overlapped forward-backward pairs (docs/overlap.md, issue #15): Megatron's combined 1F1B
// (--overlap-moe-expert-parallel-comm --delay-wgrad-compute), its program, its step time on hand-set op times, the
// same time at chunk, layer and op granularity, and the EP all-to-alls on their own stream beside the other
// micro-batch's compute.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "engine/cost/overlap_cost.hpp"
#include "engine/executor/fast_executor.hpp"
#include "engine/schedule/program.hpp"
#include "engine/schedule/registry.hpp"
#include "engine/simulate.hpp"

namespace simumax {
namespace {

using graph::Granularity;

const std::string kRoot = SIMUMAX_SOURCE_DIR;
const char* const kCase = "scenarios/examples/deepseekv2_ep8_pp1_dp8_l4_mbc8_shared_expert_overlap_b200.json";

// pp > 1: twice the ranks per pipeline stage, the same EP 8 group on each stage.
config::Scenario deepseek(const std::string& schedule, int mbc = 8, int pp = 1, int vp = 1) {
  config::Scenario s = config::load_scenario(kRoot + "/" + kCase);
  s.strategy.world_size *= pp;
  s.strategy.pp_size = pp;
  s.strategy.interleaving_size = vp;
  s.strategy.megatron_moe_shared_expert_overlap = false;
  s.strategy.pipeline_schedule = schedule;
  s.strategy.micro_batch_num = mbc;
  return s;
}

// combined_1f1b_schedule_for_no_pipelining: F0 alone, F(i+1)&B(i), the last B alone.
TEST(CombinedProgram, PairsEachForwardWithThePreviousMicroBatchsBackward) {
  for (int mbc : {1, 2, 5, 8}) {
    schedule::Layout layout;
    layout.micro_batches = mbc;
    const std::vector<schedule::Program> programs = schedule::find("combined-1f1b").programs(layout);
    ASSERT_EQ(programs.size(), 1u);
    const schedule::Program& p = programs.front();
    ASSERT_EQ(p.steps.size(), static_cast<size_t>(mbc + 1));
    for (int i = 0; i <= mbc; ++i) {
      const auto& st = p.steps[static_cast<size_t>(i)];
      EXPECT_TRUE(st.paired && !st.kind);
      EXPECT_EQ(st.microbatch, i < mbc ? i : -1) << mbc << " " << i;
      EXPECT_EQ(st.b_microbatch, i - 1) << mbc << " " << i;
    }
  }
}

// On interleaved 1F1B (combined_1f1b_schedule_for_interleaved_pipelining): interleaved 1F1B's order with one more
// warm-up forward (get_pp_rank_microbatches), every step a pair step, the steady F(k + warm-up) & B(k) in one.
TEST(CombinedProgram, InterleavedPairsEachSteadyForwardWithABackwardOneWarmUpLater) {
  schedule::Layout layout;
  layout.pp = 2, layout.vp = 2, layout.group = 2, layout.micro_batches = 4, layout.ep = 8, layout.experts = 64;
  const auto combined = schedule::find("combined-1f1b").programs(layout);
  const auto plain = schedule::interleaved_one_f_one_b(2, 2, 4, 2);
  ASSERT_EQ(combined.size(), 2u);
  for (int r = 0; r < 2; ++r) {
    // (micro-batch, chunk) in Megatron's order: 0,0 1,0 0,1 1,1 2,0 3,0 2,1 3,1; warm-up (2 - r - 1) 2 + 2 + 1.
    const int nw = (2 - r - 1) * 2 + 2 + 1, total = 8;
    std::vector<const schedule::ScheduleStep*> pairs;
    for (const auto& st : combined[r].steps) {
      EXPECT_TRUE(st.paired || st.is_comm());
      if (st.paired) pairs.push_back(&st);
    }
    ASSERT_EQ(pairs.size(), static_cast<size_t>(total + nw));  // nw lone F, total - nw pairs, nw lone B
    const int f_order[8][2] = {{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {3, 0}, {2, 1}, {3, 1}};
    for (int k = 0; k < total + nw; ++k) {
      const auto& st = *pairs[static_cast<size_t>(k)];
      EXPECT_EQ(st.microbatch, k < total ? f_order[k][0] : -1) << r << " " << k;
      if (k < total) {
        EXPECT_EQ(st.chunk, f_order[k][1]) << r << " " << k;
      }
      const int bk = k - nw;
      if (bk < 0) {
        EXPECT_EQ(st.b_microbatch, -1) << r << " " << k;
      } else {
        EXPECT_EQ(st.b_microbatch, f_order[bk][0]) << r << " " << k;
        EXPECT_EQ(st.b_chunk, 1 - f_order[bk][1]) << r << " " << k;
      }
    }
    // The same transfers as interleaved 1F1B's (batched around the shifted warm-up).
    auto a = combined[r].comms, b = plain[r].comms;
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    EXPECT_EQ(a, b) << r;
  }
}

// ---- A hand-computed case ----

// The DeepSeek-V2 case with 4 MoE layers, every op free except: input_layernorm (the attention side) forward 2,
// input gradient 2, weight gradient 1; the experts' fc1 (the MLP side) 3, 3, 2; each token all-to-all (the first
// EP all-to-all of the dispatch and of the combine, forward and backward) `a2a`. No DP, optimizer or straggler.
double hand_step(const std::string& schedule, int mbc, double a2a, Granularity g, int pp = 1, int vp = 1) {
  config::Scenario s = deepseek(schedule, mbc, pp, vp);
  s.model.dense_layers = 0;
  const model::StepModel m = model::build_step_model(s);
  cost::StepCost c = cost::cost_step(s, m);
  for (size_t ci = 0; ci < c.chunks.size(); ++ci) {
    auto& cc = c.chunks[ci];
    cc.fwd_seconds = cc.bwd_seconds = cc.wgrad_seconds = 0;
    cc.overlap_seconds.clear();
    for (size_t k = 0; k < cc.blocks.size(); ++k) {
      cost::BlockCost bc = *cc.blocks[k];
      const auto& ops = *m.chunks[ci].blocks[k].ops;
      bc.fwd_seconds = bc.bwd_seconds = bc.wgrad_seconds = 0;
      for (size_t o = 0; o < bc.ops.size(); ++o) {
        cost::OpCost& oc = bc.ops[o];
        oc.seconds = {0, 0, 0};
        oc.recompute_seconds = 0;
        if (ops[o].name == "input_layernorm") oc.seconds = {2, 2, 1};
        if (ops[o].name == "mlp.experts.linear_fc1") oc.seconds = {3, 3, 2};
        for (auto& pass : oc.comm) {
          bool first = true;
          for (auto& comm : pass) {
            comm.latency_seconds = 0;
            comm.seconds = cost::is_ep_all_to_all(comm) && first ? a2a : 0;
            if (cost::is_ep_all_to_all(comm)) first = false;
          }
        }
        bc.fwd_seconds += oc.fwd_total(), bc.bwd_seconds += oc.bwd_total(), bc.wgrad_seconds += oc.wgrad_seconds();
      }
      const int rep = m.chunks[ci].blocks[k].repeat;
      cc.fwd_seconds += bc.fwd_seconds * rep, cc.bwd_seconds += bc.bwd_seconds * rep;
      cc.wgrad_seconds += bc.wgrad_seconds * rep;
      cc.blocks[k] = std::make_shared<const cost::BlockCost>(std::move(bc));
    }
    cc.dense_dp = cc.moe_dp = cost::DpCost{};
    cc.optimizer = cost::OptimizerCost{};
  }
  c.p2p = cost::CommTime{};
  c.straggler_ratio = 1;
  const auto graph = graph::lower_step(s, m, c, {g, graph::RankScope::kStages});
  return executor::run_fast(graph).makespan;
}

// Per layer, F = 2 + a + 3 + a and B = (2 + 1) + a + (3 + 2) + a. With a = 2.5, a layer pair from a clean start
// (compute stream; comm stream):
//   B combine a2a [0, 2.5]          F attention [0, 2]
//   F dispatch    [2.5, 5]          B MLP dgrad [2.5, 5.5]  (waits for the combine)
//   B dispatch    [5.5, 8]          B MLP wgrad [5.5, 7.5]
//   F combine     [10.5, 13]        F MLP [7.5, 10.5]       (its dispatch is done at 5)
//                                   B attention dgrad [10.5, 12.5] (dispatch done at 8), wgrad [12.5, 13.5]
// and the next pair starts its combine a2a at 13.5, its attention at 13.5 (the F combine ended at 13): every layer
// pair takes 13.5, 0.5 of it exposed all-to-all, against F + B = 10 + 13 = 23 one after the other. The lone F
// (micro-batch 0) takes 10 a layer; the lone last B 11 a layer (its dispatch backward beside its MLP wgrad:
// 3 + ... = 2.5 + 3 + 2.5 + 2 + 1). Four layers, m micro-batches: 40 + (m - 1) 54 + 44; 1F1B: m 4 (10 + 13).
TEST(CombinedTime, HandCaseMatchesTheTwoStreamSchedule) {
  for (Granularity g : {Granularity::kOp, Granularity::kLayer, Granularity::kChunk}) {
    EXPECT_NEAR(hand_step("combined-1f1b", 1, 2.5, g), 40 + 44 - 0, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("combined-1f1b", 2, 2.5, g), 40 + 54 + 44, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("combined-1f1b", 8, 2.5, g), 40 + 7 * 54 + 44, 1e-9)
        << graph::to_string(g);
    EXPECT_NEAR(hand_step("1f1b", 8, 2.5, g), 8 * 4 * 23, 1e-9) << graph::to_string(g);
  }
  // a = 1: the all-to-alls hide entirely, a layer pair is its compute, 13 (the lone B: 1 + 3 + 2 + 2 + 1 = 9,
  // its dispatch backward under the MLP wgrad; the lone F 2 + 1 + 3 + 1 = 7).
  EXPECT_NEAR(hand_step("combined-1f1b", 3, 1.0, Granularity::kOp), 28 + 2 * 52 + 36, 1e-9);
  EXPECT_NEAR(hand_step("combined-1f1b", 3, 1.0, Granularity::kChunk), 28 + 2 * 52 + 36, 1e-9);
}

// pp 2, vp 2 (a layer per virtual stage: rank 0 holds virtual stages 0 and 2, rank 1 stages 1 and 3), 2
// micro-batches, group 2, free transfers, a2a 0: F = 5 and B = 8 a chunk, a pair F + B = 13. Order of (micro-batch,
// chunk): 00 10 01 11. Combined warm-up is one longer: rank 0 runs 4 forwards then 4 backwards (all warm-up),
// rank 1 F00 F10 F01, the pair F11&B01, then B11 B00 B10. Data dependences:
//   rank 0: F00 [0,5] F10 [5,10] F01 [10,15] F11 [15,20] B01 [33,41] B11 [41,49] B00 [49,57] B10 [57,65]
//   rank 1: F00 [5,10] F10 [10,15] F01 [15,20] F11&B01 [20,33] B11 [33,41] B00 [41,49] B10 [49,57]
// Step 65. Interleaved 1F1B (rank 1: F00 F10 F01 B01 F11 B11 B00 B10) reaches the same 65: rank 1's F11 [28,33]
// then B11 [33,41], rank 0's B01 [28,36] waits for its B11 at 41 all the same. With no all-to-all to hide the
// extra warm-up forward only moves rank 1's B01 after F11, which is on the path here either way.
TEST(CombinedTime, InterleavedHandCaseMatchesTheDependences) {
  for (Granularity g : {Granularity::kOp, Granularity::kChunk}) {
    EXPECT_NEAR(hand_step("combined-1f1b", 2, 0.0, g, 2, 2), 65, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("1f1b", 2, 0.0, g, 2, 2), 65, 1e-9) << graph::to_string(g);
  }
  // With all-to-alls of 1 the combined step is shorter than interleaved 1F1B's: the pair hides them.
  EXPECT_LT(hand_step("combined-1f1b", 4, 1.0, Granularity::kOp, 2, 2),
            hand_step("1f1b", 4, 1.0, Granularity::kOp, 2, 2));
  // And every granularity agrees. Here a forward chunk ends with a layer, whose combine all-to-all the pair's
  // last unit waits for alone (no head follows): layer-sized tasks had dropped it (issue 30: -11.7 % on a
  // Qwen3-235B H100 row, PP 8 VP 4, EP 32).
  for (double a2a : {1.0, 2.5}) {
    const double op = hand_step("combined-1f1b", 4, a2a, Granularity::kOp, 2, 2);
    EXPECT_NEAR(hand_step("combined-1f1b", 4, a2a, Granularity::kLayer, 2, 2), op, 1e-9) << a2a;
    EXPECT_NEAR(hand_step("combined-1f1b", 4, a2a, Granularity::kChunk, 2, 2), op, 1e-9) << a2a;
  }
}

// DualPipe on pp 2 (both ranks are middle ranks; rank 0 holds stage 0 for direction 0 and stage 1 for direction
// 1, rank 1 the mirror), the same hand-set ops, 2 layers a stage (the embedding and head free), free transfers.
// A stage's lone F is 2 x 10 = 20, its whole B 2 x 13 = 26 (a plain pass: its all-to-alls in line), its B without
// W 2 x 10 = 20 and its W 2 x 3 = 6; an F&B pair of two stages 2 x 13.5 = 27 (the layer pairs above). With 4
// micro-batches (2 from each end), each rank, in step with the other:
//   F [0,20], F of the other direction [20,40], F [40,60], the middle rank's first F and B not overlapped:
//   B [60,86], pair [86,113], B [113,139], B without W [139,159] (its gradient from the other rank at 139), W [159,165]
// Step 165: serial 4 (20 + 26) = 184 less 46 - 27 = 19 for the one pair. 6 micro-batches: two more pairs in the
// main part ([113,140], [140,167]: each waits for nothing the other rank has not sent), step 6 x 46 - 3 x 19 = 219.
// With all-to-alls of 1 (F 14, B 20, B without W 14, W 6, a pair 2 x 13 = 26, nothing exposed): 128 and 180.
TEST(DualPipeTime, HandCaseOverlapsEachFAndBPairOnTheMiddleRanks) {
  for (Granularity g : {Granularity::kOp, Granularity::kLayer, Granularity::kChunk}) {
    EXPECT_NEAR(hand_step("dualpipe", 4, 2.5, g, 2), 165, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("dualpipe", 6, 2.5, g, 2), 219, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("dualpipe", 4, 1.0, g, 2), 128, 1e-9) << graph::to_string(g);
    EXPECT_NEAR(hand_step("dualpipe", 6, 1.0, g, 2), 180, 1e-9) << graph::to_string(g);
  }
}

// ---- The real case ----

RunResult run(const config::Scenario& s, Granularity g) {
  RunOptions o;
  o.lowering = {g, graph::RankScope::kStages};
  return simulate(s, o);
}

void selective_recompute(config::Scenario& s) {
  auto& st = s.strategy;
  st.recompute_granularity = config::RecomputeGranularity::kSelective;
  st.recompute_layer_num = 2;
  st.attn_recompute = st.mla_rms_recompute = st.mlp_recompute = st.mlp_rms_recompute = true;
}

// Layer- and chunk-sized tasks take the pair's closed form (cost::PairClock), op-sized ones the DAG: the same step,
// without and with selective recompute and with SM contention beside the all-to-alls.
TEST(CombinedGranularity, ChunkLayerAndOpAgreeWithAndWithoutRecompute) {
  for (int variant = 0; variant < 3; ++variant) {
    config::Scenario s = deepseek("combined-1f1b");
    if (variant == 1) selective_recompute(s);
    if (variant == 2) s.strategy.sm_contention = 0.1;
    const double op = run(s, Granularity::kOp).summary.step_time_ms;
    const double layer = run(s, Granularity::kLayer).summary.step_time_ms;
    const double chunk = run(s, Granularity::kChunk).summary.step_time_ms;
    s.strategy.pipeline_schedule = "1f1b";
    const double serial = run(s, Granularity::kChunk).summary.step_time_ms;
    std::printf("variant %d: combined-1f1b op %.4f layer %.4f chunk %.4f ms, 1f1b %.4f ms\n", variant, op, layer,
                chunk, serial);
    EXPECT_NEAR(layer / op, 1.0, 1e-9) << variant;
    EXPECT_NEAR(chunk / op, 1.0, 1e-9) << variant;
    EXPECT_LT(op, serial) << variant;
  }
}

// At op granularity the token all-to-alls are tasks on the EP stream (the trace's `ep comm` lane). In a pair step
// (micro-batch 0's forward and micro-batch 7's backward run alone) each runs while the compute stream computes the
// other micro-batch, except the dispatch backward, which runs beside its own MLP weight gradient
// (mlp_bwd_dw in TransformerLayerSchedulePlan.run).
TEST(CombinedTrace, AllToAllRunsOnTheEpStreamBesideTheOtherMicroBatchsCompute) {
  const RunResult r = run(deepseek("combined-1f1b"), Granularity::kOp);
  const auto& g = r.graph;
  const auto& tl = r.timeline;
  const auto beside = [&](uint32_t t, bool other) {
    for (uint32_t u = 0; u < g.size(); ++u) {
      const graph::Task& k = g.tasks[u];
      if (k.kind != graph::TaskKind::kCompute || k.rank != g.tasks[t].rank || k.seconds == 0) continue;
      if (other && k.microbatch == g.tasks[t].microbatch) continue;
      if (tl.start[u] < tl.end[t] && tl.start[t] < tl.end[u]) return true;
    }
    return false;
  };
  int a2a = 0, paired = 0;
  for (uint32_t t = 0; t < g.size(); ++t) {
    const graph::Task& c = g.tasks[t];
    if (c.kind != graph::TaskKind::kEpComm) continue;
    ASSERT_EQ(c.stream, graph::kEpStream) << g.names[c.name];
    ++a2a;
    const std::string name = g.names[c.name];
    const bool forward = c.pass == schedule::Pass::kForward;
    if (forward ? c.microbatch == 0 : c.microbatch == 7) continue;  // the lone forward and backward
    ++paired;
    const bool dispatch_bwd = name.find("Dispatch") != std::string::npos && !forward;
    EXPECT_TRUE(beside(t, !dispatch_bwd)) << name << " micro-batch " << c.microbatch;
  }
  // 8 micro-batches, 3 MoE layers (the first is dense), 3 all-to-alls (dispatch, its probabilities, combine) each
  // way; 9 each in the lone forward and backward.
  EXPECT_EQ(a2a, 8 * 3 * 3 * 2);
  EXPECT_EQ(paired, a2a - 18);
  // 1F1B keeps them on the compute stream.
  const RunResult serial = run(deepseek("1f1b"), Granularity::kOp);
  for (const auto& t : serial.graph.tasks) EXPECT_NE(t.stream, graph::kEpStream);
}

// ---- Measured on B200 (docs/overlap.md) ----

// EP all-to-all time on graph rank 0, and the part of it while nothing computes there (compute, recompute,
// optimizer tasks): intervals merged on each side.
std::pair<double, double> ep_exposed_ms(const RunResult& r) {
  std::vector<std::pair<double, double>> ep, busy;
  for (uint32_t t = 0; t < r.graph.size(); ++t) {
    const graph::Task& k = r.graph.tasks[t];
    bool on0 = false;
    r.graph.for_each_rank(k, [&](uint32_t rank) { on0 = on0 || rank == 0; });
    if (!on0 || r.timeline.end[t] <= r.timeline.start[t]) continue;
    if (k.kind == graph::TaskKind::kEpComm) ep.emplace_back(r.timeline.start[t], r.timeline.end[t]);
    if (k.kind == graph::TaskKind::kCompute || k.kind == graph::TaskKind::kRecompute ||
        k.kind == graph::TaskKind::kOptimizer) {
      busy.emplace_back(r.timeline.start[t], r.timeline.end[t]);
    }
  }
  const auto merge = [](std::vector<std::pair<double, double>> v) {
    std::sort(v.begin(), v.end());
    std::vector<std::pair<double, double>> out;
    for (const auto& iv : v) {
      if (!out.empty() && iv.first <= out.back().second) {
        out.back().second = std::max(out.back().second, iv.second);
      } else {
        out.push_back(iv);
      }
    }
    return out;
  };
  const auto e = merge(ep), b = merge(busy);
  double total = 0, covered = 0;
  for (const auto& [s0, e0] : e) {
    total += e0 - s0;
    for (const auto& [s1, e1] : b) covered += std::max(0.0, std::min(e0, e1) - std::max(s0, s1));
  }
  return {total * 1e3, (total - covered) * 1e3};
}

// The validation case deepseekv2_tp1_ep8_pp1_dp8_l4_mbc8_cef (real 676.2 ms) and its 32-micro-batch sibling,
// under 1F1B and combined 1F1B, op granularity: step, EP all-to-all on rank 0 and how much of it is exposed, peak.
TEST(CombinedB200, DeepSeekV2StepAndExposedAllToAll) {
  struct Row {
    int mbc;
    const char* schedule;
    double step_ms, ep_ms, exposed_ms;
  };
  // Combined 1F1B hides every all-to-all but those of micro-batch 0's forward and the last backward (4.1 ms).
  for (const Row& row : {Row{8, "1f1b", 699.95, 44.2, 44.2},
                         Row{8, "combined-1f1b", 659.80, 44.2, 4.1},
                         Row{32, "1f1b", 2672.61, 176.8, 176.8},
                         Row{32, "combined-1f1b", 2499.84, 176.8, 4.1}}) {
    const RunResult r = run(deepseek(row.schedule, row.mbc), Granularity::kOp);
    const auto [ep, exposed] = ep_exposed_ms(r);
    const RunResult mem = run(deepseek(row.schedule, row.mbc), Granularity::kLayer);
    std::printf("[ measure ] mbc %d %-13s step %.2f ms, EP a2a %.1f ms, exposed %.1f ms, peak %.2f GiB\n", row.mbc,
                row.schedule, r.summary.step_time_ms, ep, exposed,
                static_cast<double>(mem.summary.stages[0].peak_alloc_bytes) / (1 << 30));
    EXPECT_NEAR(r.summary.step_time_ms, row.step_ms, 0.01);
    EXPECT_NEAR(ep, row.ep_ms, 0.05);
    EXPECT_NEAR(exposed, row.exposed_ms, 0.05);
  }
}

// The same case on pp 2 with 2 virtual chunks (4 ranks' worth of EP 8 per stage, a layer per virtual stage),
// interleaved 1F1B against combined 1F1B (docs/overlap.md): combined hides all but the lone warm-up forwards' and
// cool-down backwards' all-to-alls.
TEST(CombinedB200, DeepSeekV2InterleavedStepAndExposedAllToAll) {
  double step[2], exposed_ms[2];
  int i = 0;
  for (const char* schedule : {"1f1b", "combined-1f1b"}) {
    const RunResult r = run(deepseek(schedule, 8, 2, 2), Granularity::kOp);
    const auto [ep, exposed] = ep_exposed_ms(r);
    std::printf("[ measure ] pp 2 vp 2 mbc 8 %-13s step %.2f ms, EP a2a %.1f ms, exposed %.1f ms\n", schedule,
                r.summary.step_time_ms, ep, exposed);
    step[i] = r.summary.step_time_ms, exposed_ms[i] = exposed;
    ++i;
  }
  EXPECT_NEAR(step[0], 473.32, 0.01);
  EXPECT_NEAR(exposed_ms[0], 14.7, 0.05);
  EXPECT_NEAR(step[1], 449.51, 0.01);
  EXPECT_NEAR(exposed_ms[1], 2.7, 0.05);
}

}  // namespace
}  // namespace simumax
