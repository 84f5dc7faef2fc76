#include "engine/graph/lowering.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/pipeline_schedule.hpp"

#include <map>
#include <tuple>
#include "engine/memory/memory_analysis.hpp"

namespace simumax::graph {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;

struct Fixture {
  config::Scenario s;
  model::StepModel m;
  cost::StepCost c;
  explicit Fixture(const std::string& strategy = "tp1_pp2_dp4_mbs1.json",
                   const std::string& system = "a100_pcie.json", const std::string& model = "llama3-8b.json",
                   int64_t layers = 0) {
    s = config::load_configs(kShared + "/simumax-configs/models/" + model,
                             kShared + "/simumax-configs/strategy/" + strategy,
                             kShared + "/simumax-configs/system/" + system);
    if (layers > 0) s.model.layer_num = layers;
    s.strategy.fidelity = config::Fidelity::kSimuMax;  // SimuMax's examples and numbers
    rebuild();
  }
  void rebuild() {
    m = model::build_step_model(s);
    c = cost::cost_step(s, m);
  }
  TaskGraph lower(Granularity gr, RankScope sc) const { return lower_step(s, m, c, LoweringOptions{gr, sc}); }
  double step(Granularity gr, RankScope sc = RankScope::kStages) const {
    return executor::run_fast(lower(gr, sc)).makespan;
  }
};

// SimuMax's README example (time spec §12): T_pp 4641.20707 ms, step 5554.67697 ms.
TEST(Lowering, OneFOneBMatchesSimuMaxExample) {
  Fixture f;
  const auto g = f.lower(Granularity::kLayer, RankScope::kStages);
  const auto tl = executor::run_fast(g);
  EXPECT_NEAR(tl.makespan * 1e3, 5554.67697, 1e-4);
}

// The search lowers each group's back-to-back DP buckets as one task: the same step, fewer tasks.
TEST(Lowering, MergedDpBucketsGiveTheSameStep) {
  Fixture f;
  for (int64_t zero : {0, 1}) {
    f.s.strategy.zero_state = zero;
    f.rebuild();
    LoweringOptions lo{Granularity::kChunk, RankScope::kStages};
    const TaskGraph every = lower_step(f.s, f.m, f.c, lo);
    lo.merge_dp_buckets = true;
    const TaskGraph merged = lower_step(f.s, f.m, f.c, lo);
    EXPECT_LT(merged.size(), every.size()) << "zero " << zero;
    EXPECT_NEAR(executor::run_fast(merged).makespan / executor::run_fast(every).makespan, 1.0, 1e-12);
  }
}

TEST(Lowering, GranularityDoesNotChangeTheStepTime) {
  Fixture f;
  const double chunk = executor::run_fast(f.lower(Granularity::kChunk, RankScope::kStages)).makespan;
  for (Granularity gr : {Granularity::kLayer, Granularity::kOp}) {
    for (RankScope sc : {RankScope::kStages, RankScope::kAll}) {
      const auto g = f.lower(gr, sc);
      EXPECT_NEAR(executor::run_fast(g).makespan / chunk, 1.0, 1e-12) << to_string(gr) << " " << to_string(sc);
    }
  }
}

TEST(Lowering, TensorParallelOpGraphMatchesStagesGraph) {
  Fixture f("tp2_pp1_dp4_mbs1.json");
  const double stages = executor::run_fast(f.lower(Granularity::kOp, RankScope::kStages)).makespan;
  const auto all = f.lower(Granularity::kOp, RankScope::kAll);
  EXPECT_EQ(all.num_ranks, 8u);
  EXPECT_NEAR(executor::run_fast(all).makespan / stages, 1.0, 1e-12);
}

// finalize_model_grads.py `_allreduce_word_embedding_grads`: at megatron fidelity with pp > 1, a word-embedding
// table shared between the first and the last stage (tied to the output layer, or MTP's) gets its main_grad rows
// of a TP rank all-reduced between the two, once per (DP replica, TP lane), after every DP reduction and before
// the optimizer. Untied without MTP, one stage, or the simumax fidelity: nothing.
TEST(Lowering, SharedWordEmbeddingGradientIsAllReducedBetweenFirstAndLastStage) {
  Fixture f("tp1_pp2_dp4_mbs1.json");
  f.s.strategy.fidelity = config::Fidelity::kMegatron;
  f.s.model.untie_embeddings_and_output_weights = false;
  f.rebuild();
  const double bytes = static_cast<double>(f.m.padded_vocab / f.s.strategy.tp_size) *
                       static_cast<double>(f.s.model.hidden_size) * static_cast<double>(f.s.strategy.main_grad_bytes());
  EXPECT_EQ(f.s.strategy.main_grad_bytes(), 4);
  const auto expected = cost::comm_time(f.s.system, f.s.strategy, model::Coll::kAllReduce, bytes, 2, f.c.nets.pp,
                                        cost::CommStage::kLayer);
  ASSERT_GT(expected.seconds, 0);
  EXPECT_DOUBLE_EQ(f.c.embedding_grads.seconds, expected.seconds);
  const auto g = f.lower(Granularity::kChunk, RankScope::kAll);
  const auto tl = executor::run_fast(g);
  int found = 0;
  for (uint32_t id = 0; id < g.size(); ++id) {
    const auto& t = g.tasks[id];
    if (g.names[t.name] != "embedding.all_reduce grads") continue;
    ++found;
    ASSERT_NE(t.group, kNoGroup);
    const auto& members = g.groups[t.group];
    ASSERT_EQ(members.size(), 2u);
    EXPECT_EQ(g.pp_stage[members[0]], 0u);
    EXPECT_EQ(g.pp_stage[members[1]], 1u);
    EXPECT_DOUBLE_EQ(t.seconds, expected.seconds);
    // After the DP reduction of both ranks, before their optimizer steps.
    for (uint32_t other = 0; other < g.size(); ++other) {
      const auto& o = g.tasks[other];
      bool on_member = false;
      g.for_each_rank(o, [&](uint32_t r) { on_member |= r == members[0] || r == members[1]; });
      if (!on_member) continue;
      const std::string& name = g.names[o.name];
      if (name.rfind("dp.", 0) == 0 && name.find("grads") != std::string::npos) {
        EXPECT_LE(tl.end[other], tl.start[id] + 1e-12) << name;
      }
      if (name == "optimizer.step") {
        EXPECT_GE(tl.start[other], tl.end[id] - 1e-12);
      }
    }
  }
  EXPECT_EQ(found, 4);  // tp 1 x dp 4 pipelines
  const double tied_step = tl.makespan;

  f.s.model.untie_embeddings_and_output_weights = true;
  f.rebuild();
  EXPECT_EQ(f.c.embedding_grads.seconds, 0);
  EXPECT_LT(executor::run_fast(f.lower(Granularity::kChunk, RankScope::kAll)).makespan, tied_step);
  f.s.model.mtp_num_layers = 1;  // MTP's last stage builds its own word table
  f.rebuild();
  EXPECT_DOUBLE_EQ(f.c.embedding_grads.seconds, expected.seconds);
  f.s.model.mtp_num_layers = 0;
  f.s.model.untie_embeddings_and_output_weights = false;
  f.s.strategy.fidelity = config::Fidelity::kSimuMax;
  f.rebuild();
  EXPECT_EQ(f.c.embedding_grads.seconds, 0);
  Fixture one("tp2_pp1_dp4_mbs1.json");
  one.s.strategy.fidelity = config::Fidelity::kMegatron;
  one.s.model.untie_embeddings_and_output_weights = false;
  one.rebuild();
  EXPECT_EQ(one.c.embedding_grads.seconds, 0);
}

TEST(Lowering, GraphIsAcyclicAndEveryTaskRuns) {
  Fixture f;
  for (Granularity gr : {Granularity::kChunk, Granularity::kLayer, Granularity::kOp}) {
    const auto g = f.lower(gr, RankScope::kAll);
    EXPECT_TRUE(is_acyclic(g));
    EXPECT_EQ(g.succ_offsets.size(), g.size() + 1);
  }
}

// SimuMax's memory check (memory spec §3.6): llama3-8b tp1 pp2 mbc 8 -> first 50.8854, last 45.1637 GiB.
TEST(Lowering, PeakMemoryMatchesSimuMaxExample) {
  Fixture f;
  for (Granularity gr : {Granularity::kChunk, Granularity::kLayer, Granularity::kOp}) {
    const auto g = f.lower(gr, RankScope::kStages);
    const auto mem = memory::analyze_memory(g, executor::run_fast(g), {});
    ASSERT_EQ(mem.size(), 2u);
    EXPECT_NEAR(mem[0].peak_allocated_bytes / 1073741824.0, 50.8854, 1e-4) << to_string(gr);
    EXPECT_NEAR(mem[1].peak_allocated_bytes / 1073741824.0, 45.1637, 1e-4) << to_string(gr);
  }
}

// Every (micro-batch, chunk) runs forward and backward once on every stage, and every transfer one side
// names is named by the other side too.
void check_programs(const std::vector<Program>& programs, int mbc, int vp) {
  std::map<P2p, int> seen;
  for (size_t r = 0; r < programs.size(); ++r) {
    std::map<std::pair<int, int>, int> fwd, bwd;
    for (const auto& step : programs[r].steps) {
      if (step.kind == schedule::Pass::kForward) ++fwd[{step.microbatch, step.chunk}];
      if (step.kind == schedule::Pass::kBackward) ++bwd[{step.microbatch, step.chunk}];
    }
    EXPECT_EQ(fwd.size(), static_cast<size_t>(mbc * vp));
    EXPECT_EQ(bwd.size(), static_cast<size_t>(mbc * vp));
    for (const auto& [k, n] : fwd) EXPECT_EQ(n, 1);
    for (const auto& p : programs[r].comms) {
      EXPECT_TRUE(p.sender == static_cast<int>(r) || p.receiver == static_cast<int>(r));
      ++seen[p];
    }
  }
  for (const auto& [p, n] : seen) EXPECT_EQ(n, 2) << "transfer of micro-batch " << p.microbatch;
}

TEST(PipelineSchedule, OneFOneBRunsEveryMicroBatchOnceAndPairsEveryTransfer) {
  for (int pp : {1, 2, 3, 4, 8}) {
    for (int mbc : {1, 2, 3, 8, 13}) check_programs(one_f_one_b(pp, mbc), mbc, 1);
  }
}

TEST(PipelineSchedule, InterleavedRunsEveryChunkOnceAndPairsEveryTransfer) {
  for (auto [pp, vp, mbc] : {std::tuple{4, 2, 8}, {4, 4, 16}, {3, 3, 9}, {8, 2, 16}, {2, 2, 4}}) {
    check_programs(interleaved_one_f_one_b(pp, vp, mbc, pp), mbc, vp);
  }
}

}  // namespace
}  // namespace simumax::graph

namespace simumax::graph {
namespace {

// Megatron's overlap options (docs/overlap.md): DP buckets on their own stream during the last backward.
TEST(Overlap, GradReduceOverlapsTheLastBackwardAndShortensTheStep) {
  Fixture base;
  const double serial = executor::run_fast(base.lower(Granularity::kLayer, RankScope::kStages)).makespan;
  Fixture f;
  f.s.strategy.megatron_overlap_grad_reduce = true;
  const auto g = f.lower(Granularity::kLayer, RankScope::kStages);
  EXPECT_TRUE(is_acyclic(g));
  const auto tl = executor::run_fast(g);
  EXPECT_LT(tl.makespan, serial);
  // Some DP bucket runs on the DP stream while the same rank computes.
  bool overlapped = false;
  for (uint32_t d = 0; d < g.size() && !overlapped; ++d) {
    if (g.tasks[d].stream != kDpStream) continue;
    for (uint32_t c = 0; c < g.size() && !overlapped; ++c) {
      const auto& t = g.tasks[c];
      overlapped = t.kind == TaskKind::kCompute && t.rank == g.tasks[d].rank && tl.start[c] < tl.end[d] &&
                   tl.start[d] < tl.end[c] && t.seconds > 0;
    }
  }
  EXPECT_TRUE(overlapped);
}

// Chunk-sized tasks run the passes that carry the overlapped DP buckets (the first micro-batch's forward, the last
// one's backward) as layer-sized ones: a bucket overlaps the rest of its chunk's backward as at layer
// granularity, where one chunk task had held every bucket to its end (issue 30: +4.8 % at pp 1 on a Qwen3 MoE
// layout, all of the overlap lost). pp 1 and pp 2, each overlap alone and both.
TEST(Overlap, DpBucketsOverlapTheSameAtChunkAndLayerGranularity) {
  for (const char* strategy : {"tp1_pp1_dp8_mbs1.json", "tp1_pp2_dp4_mbs1.json"}) {
    for (int keys = 1; keys <= 3; ++keys) {
      Fixture f(strategy);
      f.s.strategy.zero_state = 1;
      f.s.strategy.megatron_overlap_grad_reduce = keys & 1;
      f.s.strategy.megatron_overlap_param_gather = keys & 2;
      f.rebuild();
      const double layer = f.step(Granularity::kLayer), chunk = f.step(Granularity::kChunk);
      Fixture serial(strategy);
      serial.s.strategy.zero_state = 1;
      serial.rebuild();
      EXPECT_NEAR(chunk / layer, 1.0, 1e-12) << strategy << " " << keys;
      EXPECT_LT(chunk, serial.step(Granularity::kChunk)) << strategy << " " << keys;
    }
  }
}

TEST(Overlap, ParamGatherAndAsyncP2pNeverLengthenTheStep) {
  Fixture f;
  f.s.strategy.megatron_overlap_grad_reduce = true;
  const double rs_only = executor::run_fast(f.lower(Granularity::kOp, RankScope::kAll)).makespan;
  f.s.strategy.megatron_overlap_param_gather = true;
  const double both = executor::run_fast(f.lower(Granularity::kOp, RankScope::kAll)).makespan;
  EXPECT_LT(both, rs_only);
  f.s.strategy.megatron_overlap_p2p_comm = true;
  const auto g = f.lower(Granularity::kOp, RankScope::kAll);
  EXPECT_TRUE(is_acyclic(g));
  EXPECT_LE(executor::run_fast(g).makespan, both * (1 + 1e-12));
}

TEST(Overlap, SmContentionSlowsOverlappedCompute) {
  Fixture f;
  f.s.strategy.megatron_overlap_grad_reduce = true;
  const double free = executor::run_fast(f.lower(Granularity::kOp, RankScope::kStages)).makespan;
  f.s.strategy.sm_contention = 0.2;
  EXPECT_GT(executor::run_fast(f.lower(Granularity::kOp, RankScope::kStages)).makespan, free);
}

}  // namespace
}  // namespace simumax::graph

namespace simumax::graph {
namespace {

TEST(Overlap, TpCommOverlapHidesCollectivesBehindGemmsAtEveryGranularity) {
  Fixture f("tp2_pp1_dp4_mbs1.json");
  const double serial = executor::run_fast(f.lower(Granularity::kOp, RankScope::kStages)).makespan;
  f.s.strategy.megatron_tp_comm_overlap = true;
  f.c = cost::cost_step(f.s, f.m);
  const double chunk = executor::run_fast(f.lower(Granularity::kChunk, RankScope::kStages)).makespan;
  EXPECT_LT(chunk, serial);
  for (Granularity gr : {Granularity::kLayer, Granularity::kOp}) {
    EXPECT_NEAR(executor::run_fast(f.lower(gr, RankScope::kAll)).makespan / chunk, 1.0, 1e-12) << to_string(gr);
  }
}

}  // namespace
}  // namespace simumax::graph

namespace simumax::graph {
namespace {

// deepseekv2 (shared experts) with 4 layers on ep4 pp2 dp4, SimuMax's MoE example strategies, on B200s (where
// the shared experts take about as long as the all-to-alls).
Fixture moe(const std::string& strategy = "ep4_pp2_dp4_mbs1.json") {
  return Fixture(strategy, "b200_bf16_ceperm.json", "deepseekv2.json", 4);
}

bool runs_beside(const TaskGraph& g, const executor::Timeline& tl, uint32_t a, uint32_t b) {
  return g.tasks[a].rank == g.tasks[b].rank && tl.start[a] < tl.end[b] && tl.start[b] < tl.end[a];
}

// Megatron's --moe-shared-expert-overlap: the shared experts' fc1 runs beside the dispatch, fc2 beside the combine.
TEST(Overlap, SharedExpertsRunBesideTheTokenAllToAllsAtEveryGranularity) {
  for (const char* strategy :
       {"ep4_pp2_dp4_mbs1.json", "ep4_pp2_dp4_mbs1_selective_recompute.json", "ep4_pp2_dp4_mbs1_full_recompute.json"}) {
    Fixture f = moe(strategy);
    const double serial = f.step(Granularity::kOp);
    f.s.strategy.megatron_moe_shared_expert_overlap = true;
    f.rebuild();
    const double chunk = f.step(Granularity::kChunk);
    EXPECT_LT(chunk, serial * 0.999) << strategy;
    for (Granularity gr : {Granularity::kLayer, Granularity::kOp}) {
      for (RankScope sc : {RankScope::kStages, RankScope::kAll}) {
        const auto g = f.lower(gr, sc);
        EXPECT_TRUE(is_acyclic(g));
        EXPECT_NEAR(executor::run_fast(g).makespan / chunk, 1.0, 1e-12) << strategy << " " << to_string(gr);
      }
    }
  }
}

TEST(Overlap, SharedExpertComputeAndTheAllToAllShareTheTimeOnSeparateStreams) {
  Fixture f = moe();
  f.s.strategy.megatron_moe_shared_expert_overlap = true;
  const auto g = f.lower(Granularity::kOp, RankScope::kAll);
  const auto tl = executor::run_fast(g);
  std::vector<uint32_t> a2a, shared;
  for (uint32_t t = 0; t < g.size(); ++t) {
    if (g.tasks[t].stream == kEpStream) a2a.push_back(t);
    if (g.names[g.tasks[t].name].starts_with("mlp.shared_experts.") && g.tasks[t].seconds > 0) shared.push_back(t);
  }
  ASSERT_FALSE(a2a.empty());
  for (uint32_t t : a2a) EXPECT_EQ(g.tasks[t].kind, TaskKind::kEpComm);
  size_t beside = 0;
  for (uint32_t s : shared) {
    beside += std::any_of(a2a.begin(), a2a.end(), [&](uint32_t a) { return runs_beside(g, tl, a, s); });
  }
  EXPECT_GT(beside, shared.size() / 2);  // fc1 and fc2, forward and backward, all but the lone activations
}

TEST(Overlap, SharedExpertOverlapWithoutSharedExpertsOrAllToAllChangesNothing) {
  for (const char* model : {"llama3-8b.json", "deepseekv2.json"}) {  // no shared experts; ep 1: no all-to-all
    Fixture f("tp1_pp2_dp4_mbs1.json", "b200_bf16_ceperm.json", model, 4);
    const double op = f.step(Granularity::kOp), layer = f.step(Granularity::kLayer);
    f.s.strategy.megatron_moe_shared_expert_overlap = true;
    f.rebuild();
    EXPECT_EQ(f.step(Granularity::kOp), op) << model;
    EXPECT_EQ(f.step(Granularity::kLayer), layer) << model;
  }
}

// sm_contention (docs/overlap.md): compute beside any overlapped collective runs slower; 0 changes nothing.
TEST(Overlap, SmContentionLengthensTheStepBesideEveryOverlappedStream) {
  struct Case {
    const char* what;
    Fixture f;
    void (*on)(config::StrategyConfig&);
  };
  Case cases[] = {
      {"tp", Fixture("tp2_pp1_dp4_mbs1.json"), [](config::StrategyConfig& st) { st.megatron_tp_comm_overlap = true; }},
      {"pp", Fixture("tp1_pp2_dp4_mbs1.json"), [](config::StrategyConfig& st) { st.megatron_overlap_p2p_comm = true; }},
      {"ep", moe(), [](config::StrategyConfig& st) { st.megatron_moe_shared_expert_overlap = true; }},
      {"dp", Fixture(), [](config::StrategyConfig& st) { st.megatron_overlap_grad_reduce = true; }},
  };
  for (auto& [what, f, on] : cases) {
    on(f.s.strategy);
    f.rebuild();
    const double free = f.step(Granularity::kOp, RankScope::kAll);
    f.s.strategy.sm_contention = 0.0;
    f.rebuild();
    EXPECT_EQ(f.step(Granularity::kOp, RankScope::kAll), free) << what;
    f.s.strategy.sm_contention = 0.5;
    f.rebuild();
    const double contended = f.step(Granularity::kOp, RankScope::kAll);
    EXPECT_GT(contended, free * 1.0001) << what;
    if (std::string(what) != "dp") {  // DP buckets slow the tasks that carry parameters, whatever their size
      EXPECT_NEAR(f.step(Granularity::kChunk) / contended, 1.0, 1e-9) << what;
      EXPECT_NEAR(f.step(Granularity::kLayer) / contended, 1.0, 1e-9) << what;
    }
  }
}

}  // namespace
}  // namespace simumax::graph

namespace simumax::graph {
namespace {

// A recomputed forward replays its TP collectives beside its kernels too (cost's backward total agrees).
TEST(Overlap, TpCommOverlapWithRecomputeIsTheSameAtEveryGranularity) {
  for (const char* strategy : {"tp2_pp1_dp4_mbs1_full_recompute.json", "tp2_pp1_dp4_mbs1_selective_recompute.json"}) {
    Fixture f(strategy);
    const double serial = f.step(Granularity::kOp);
    f.s.strategy.megatron_tp_comm_overlap = true;
    f.rebuild();
    const double chunk = f.step(Granularity::kChunk);
    EXPECT_LT(chunk, serial) << strategy;
    for (Granularity gr : {Granularity::kLayer, Granularity::kOp}) {
      EXPECT_NEAR(f.step(gr, RankScope::kAll) / chunk, 1.0, 1e-12) << strategy << " " << to_string(gr);
    }
  }
}

}  // namespace
}  // namespace simumax::graph
