#include "engine/model/op_builder.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/model/memory_walk.hpp"

namespace simumax::model {
namespace {

constexpr int64_t kSeq = 4096, kHidden = 1024, kExperts = 16;

// A small MoE layer with a shared expert (DeepSeek's layout, GQA attention), tp1, bf16, one micro-batch of 4096.
config::Scenario moe_with_shared_expert() {
  config::Scenario s;
  auto& m = s.model;
  m.model_type = "moe";
  m.hidden_size = kHidden;
  m.head_num = 8;
  m.kv_head_num = 8;
  m.head_size = 128;
  m.intermediate_size = 4096;
  m.layer_num = 2;
  m.vocab_size = 32000;
  m.use_swiglu = true;
  m.expert_num = kExperts;
  m.topk = 2;
  m.moe_ffn_hidden_size = 512;
  m.moe_shared_expert_intermediate_size = 1024;
  auto& st = s.strategy;
  st.seq_len = kSeq;
  st.micro_batch_size = 1;
  st.micro_batch_num = 1;
  st.world_size = 4;
  st.ep_size = 4;
  return s;
}

void megatron_recompute(config::StrategyConfig& st, std::vector<std::string> modules) {
  st.enable_recompute = true;
  st.recompute_granularity = config::RecomputeGranularity::kSelective;
  st.recompute_layer_num = 1;
  st.megatron_recompute = true;
  st.megatron_recompute_modules = std::move(modules);
}

int index_of(const std::vector<Op>& ops, const std::string& name) {
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].name == name) return static_cast<int>(i);
  }
  ADD_FAILURE() << "no op " << name;
  return 0;
}

std::vector<Op> layer_ops(const config::Scenario& s, bool dense_mlp) {
  std::vector<Op> ops;
  OpBuilder(s, s.model.vocab_size).layer(ops, 0, kSeq, dense_mlp);
  return ops;
}

// SimuMax's ExpertMLP clears Megatron's layernorm recompute for the shared expert: its fc1 keeps its input, is no
// tail and ends no segment, so under "moe" + "layernorm" the shared expert sits inside the segment the pre-MLP
// norm opens and holds nothing (grid line g191). A dense MLP's fc1 stays a tail ending its segment.
TEST(OpBuilder, SharedExpertIsNoLayernormRecomputeTail) {
  auto s = moe_with_shared_expert();
  megatron_recompute(s.strategy, {"moe", "layernorm"});
  const auto ops = layer_ops(s, false);
  const Op& fc1 = ops[index_of(ops, "mlp.shared_experts.linear_fc1")];
  EXPECT_TRUE(fc1.recompute);
  EXPECT_FALSE(fc1.cached_inputs);
  EXPECT_FALSE(fc1.variance);
  EXPECT_FALSE(fc1.break_point);
  EXPECT_EQ(fc1.act_cache, kSeq * kHidden * 2);
  const BlockProgram p = block_program(ops);
  for (const char* name : {"mlp.shared_experts.linear_fc1", "mlp.shared_experts.activation",
                           "mlp.shared_experts.linear_fc2", "mlp.router"}) {
    EXPECT_EQ(p.forward[index_of(ops, name)].delta, 0) << name;
  }
  EXPECT_TRUE(ops[index_of(ops, "mlp.router")].break_point);

  const auto dense = layer_ops(s, true);
  const Op& dense_fc1 = dense[index_of(dense, "mlp.linear_fc1")];
  EXPECT_TRUE(dense_fc1.recompute);
  EXPECT_TRUE(dense_fc1.cached_inputs);
  EXPECT_TRUE(dense_fc1.variance);
}

// The permutation takes the hidden states and the router's output (int32, one per token and expert): a segment
// opening there, after the router's break point, holds both (grid lines g191, g195).
TEST(OpBuilder, PermutationOpeningASegmentHoldsTheRouterOutput) {
  auto s = moe_with_shared_expert();
  megatron_recompute(s.strategy, {"moe", "layernorm"});
  const auto ops = layer_ops(s, false);
  const int perm = index_of(ops, "mlp.permutation");
  const int64_t in_bytes = kSeq * kHidden * 2 + kSeq * kExperts * 4;
  EXPECT_EQ(ops[perm].act_in_bytes, in_bytes);
  EXPECT_EQ(block_program(ops).forward[perm].delta, in_bytes);
  // Without dispatch_probs the combine reads the router's output too (topk * S expert rows before it).
  EXPECT_EQ(ops[index_of(ops, "mlp.unpermutation")].act_in_bytes, 2 * kSeq * kHidden * 2 + kSeq * kExperts * 4);
}

// --moe-permute-fusion at the megatron fidelity: TE's moe_permute reads each token's row once and writes its top-k
// copies (S*h + k*S*h elements), moe_unpermute reads the k*S*h expert rows once and writes S*h: one kernel each,
// each way. SimuMax's two kernels stay without the flag and at the simumax fidelity.
TEST(OpBuilder, FusedPermutationIsOneKernelReadingAndWritingTheRowsOnce) {
  auto s = moe_with_shared_expert();
  const double rows = 2.0 * kSeq * kHidden * 2, tokens = 1.0 * kSeq * kHidden * 2;  // top-2, bf16
  const auto unfused = layer_ops(s, false);
  EXPECT_EQ(unfused[index_of(unfused, "mlp.permutation")].work[0].mem_bytes,
            (std::vector<double>{tokens + rows, 2 * rows}));
  s.strategy.moe_permute_fusion = true;
  const auto fused = layer_ops(s, false);
  for (int pass : {0, 1}) {
    EXPECT_EQ(fused[index_of(fused, "mlp.permutation")].work[pass].mem_bytes, (std::vector<double>{tokens + rows}));
    EXPECT_EQ(fused[index_of(fused, "mlp.unpermutation")].work[pass].mem_bytes,
              (std::vector<double>{rows + tokens}));
  }
  s.strategy.fidelity = config::Fidelity::kSimuMax;
  const auto simumax = layer_ops(s, false);
  EXPECT_EQ(simumax[index_of(simumax, "mlp.permutation")].work[0].mem_bytes.size(), 2u);
}

// The flex dispatcher with HybridEP (megatron fidelity): hybrid_ep_dispatch permutes in a kernel of its own (one
// pass, as TE's fused permute) unless --moe-permute-fusion-into-hybridep puts it inside the dispatch kernel (no
// pass); its preprocessing is three small kernels (no host synchronisation, no sort, no zero-filled output).
// --moe-router-fusion: 8 kernels over [tokens, experts] forward and 7 backward instead of 23 and 15;
// force-balanced routing adds RandomSTE's one forward kernel.
TEST(OpBuilder, HybridEpAndRouterFusionPriceTheirKernels) {
  auto s = moe_with_shared_expert();
  s.strategy.moe_token_dispatcher = "flex";
  s.strategy.moe_flex_dispatcher_backend = "hybridep";
  const double rows = 2.0 * kSeq * kHidden * 2, tokens = 1.0 * kSeq * kHidden * 2, scores = kSeq * kExperts * 4.0;
  auto ops = layer_ops(s, false);
  const Op& perm = ops[index_of(ops, "mlp.permutation")];
  EXPECT_EQ(perm.work[0].mem_bytes, (std::vector<double>{tokens + rows}));
  EXPECT_EQ(perm.extra_kernel_bytes[0].size(), 3u);
  const Op& router = ops[index_of(ops, "mlp.router")];
  EXPECT_EQ(router.extra_kernel_bytes[0], std::vector<double>(23, scores));
  s.strategy.moe_permute_fusion_into_hybridep = true;
  s.strategy.moe_router_fusion = true;
  s.strategy.moe_router_force_load_balancing = true;
  ops = layer_ops(s, false);
  EXPECT_TRUE(ops[index_of(ops, "mlp.permutation")].work[0].mem_bytes.empty());
  EXPECT_TRUE(ops[index_of(ops, "mlp.unpermutation")].work[1].mem_bytes.empty());
  EXPECT_EQ(ops[index_of(ops, "mlp.router")].extra_kernel_bytes[0], std::vector<double>(9, scores));
  const size_t grad = 1;  // op_pass_index(Pass::kInputGrad)
  EXPECT_EQ(ops[index_of(ops, "mlp.router")].extra_kernel_bytes[grad].size(), 7u + 1u);  // + the loss scale's
}

// Megatron's output layer is a plain ColumnParallelLinear that stays in bf16 under fp8 and, with sequence
// parallelism, saves its input shard before the all-gather. SimuMax keeps the gathered input there whenever
// the strategy is fp8 (tp times more: grid lines g283, g288); we keep the shard (docs/simumax-differences.md 5).
TEST(OpBuilder, Fp8OutputLayerKeepsItsSequenceParallelShard) {
  auto s = moe_with_shared_expert();
  s.model.expert_num = 1;
  s.model.model_type = "dense";
  s.strategy.ep_size = 1;
  s.strategy.tp_size = 4;
  s.strategy.fp8 = true;
  const int64_t s_local = kSeq / 4;
  std::vector<Op> ops;
  OpBuilder(s, s.model.vocab_size).head(ops, s_local);
  EXPECT_EQ(ops[index_of(ops, "output_layer")].act_cache, s_local * kHidden * 2);
}

// Megatron fidelity (op_builder_megatron.cpp): the kernels SimuMax omits ride on the ops they run beside; the
// SimuMax level has none, so its costs stay SimuMax's.
TEST(OpBuilder, MegatronLevelAddsTheKernelsSimuMaxOmits) {
  auto s = moe_with_shared_expert();
  s.strategy.fidelity = config::Fidelity::kSimuMax;
  for (const auto& op : layer_ops(s, true)) {
    for (const auto& pass : op.extra_kernel_bytes) EXPECT_TRUE(pass.empty()) << op.name;
  }
  s.strategy.fidelity = config::Fidelity::kMegatron;
  const auto dense = layer_ops(s, true);
  const double x = 1.0 * kSeq * kHidden * 2;  // the residual stream, bf16
  const Op& qkv = dense[index_of(dense, "attn.linear_qkv")];
  EXPECT_EQ(qkv.extra_kernel_bytes[0].size(), 4u);  // RoPE q, RoPE k, v made contiguous, RNG unpack
  EXPECT_EQ(qkv.extra_kernel_bytes[1].size(), 3u);  // RoPE q, k backward, the dq/dk/dv concatenation
  const Op& proj = dense[index_of(dense, "attn.linear_out")];
  EXPECT_EQ(proj.extra_kernel_bytes[0], std::vector<double>{3 * x});  // the residual add
  EXPECT_EQ(proj.extra_kernel_bytes[1], std::vector<double>{3 * x});  // its gradient accumulation
  const auto moe = layer_ops(s, false);
  const Op& router = moe[index_of(moe, "mlp.router")];
  EXPECT_GT(router.extra_kernel_bytes[0].size(), 20u);
  EXPECT_GT(moe[index_of(moe, "mlp.permutation")].extra_kernel_bytes[0].size(), 10u);
}

// --deterministic-mode: every pass that runs the op's kernel fills the output TE allocates (one residual-sized
// kernel more); the weight gradient only without gradient accumulation fusion (with it TE accumulates into
// main_grad, allocating nothing); nothing at the simumax fidelity or with the mode off.
TEST(OpBuilder, DeterministicModeFillsEachAllocatedOutput) {
  auto s = moe_with_shared_expert();
  const auto plain = layer_ops(s, true);
  auto filled = [&](const config::Scenario& sc) {
    auto ops = layer_ops(sc, true);
    OpBuilder(sc, sc.model.vocab_size).megatron_deterministic_fills(ops, kSeq);
    return ops;
  };
  EXPECT_EQ(filled(s)[0].extra_kernel_bytes, plain[0].extra_kernel_bytes);  // the mode is off
  s.strategy.deterministic_mode = true;
  const double x = 1.0 * kSeq * kHidden * 2;  // the residual stream, bf16
  for (bool fused : {true, false}) {
    s.strategy.use_fused_grad_accumulation = fused;
    const auto base = layer_ops(s, true);
    const auto ops = filled(s);
    int fills = 0;
    for (size_t i = 0; i < ops.size(); ++i) {
      for (int p = 0; p < kNumOpPasses; ++p) {
        const auto& w = ops[i].work[p];
        const bool fills_here = (w.flops > 0 || !w.mem_bytes.empty()) && !(p == 2 && fused);
        ASSERT_EQ(ops[i].extra_kernel_bytes[p].size(), base[i].extra_kernel_bytes[p].size() + (fills_here ? 1 : 0))
            << ops[i].name << " pass " << p;
        if (fills_here) {
          EXPECT_EQ(ops[i].extra_kernel_bytes[p].back(), x) << ops[i].name;
        }
        fills += fills_here;
      }
    }
    const Op& qkv = ops[index_of(ops, "attn.linear_qkv")];
    EXPECT_EQ(qkv.extra_kernel_bytes[2].size(), base[index_of(base, "attn.linear_qkv")].extra_kernel_bytes[2].size() +
                                                    (fused ? 0 : 1));
    EXPECT_GT(fills, 10);
  }
  s.strategy.fidelity = config::Fidelity::kSimuMax;
  for (const auto& op : filled(s)) {
    for (const auto& pass : op.extra_kernel_bytes) EXPECT_TRUE(pass.empty()) << op.name;
  }
}

}  // namespace
}  // namespace simumax::model
