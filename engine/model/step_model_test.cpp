#include "engine/model/step_model.hpp"

#include <gtest/gtest.h>

#include "engine/common/units.hpp"
#include "engine/model/op_cache.hpp"

namespace simumax::model {
namespace {

// The llama2-7b shape with 2 layers, tp2 + SP, dp4, ZeRO-1, bf16, vocab 32000 (SimuMax's worked check).
config::Scenario llama2_7b_two_layers() {
  config::Scenario s;
  s.name = "llama2-7b-2l";
  auto& m = s.model;
  m.model_type = "dense";
  m.hidden_size = 4096;
  m.head_num = 32;
  m.kv_head_num = 32;
  m.head_size = 128;
  m.intermediate_size = 11008;
  m.layer_num = 2;
  m.vocab_size = 32000;
  m.use_swiglu = true;
  auto& st = s.strategy;
  st.seq_len = 4096;
  st.micro_batch_size = 1;
  st.micro_batch_num = 1;
  st.world_size = 8;
  st.tp_size = 2;
  s.system.op["default"] = {100, 0.5, {}, {}};
  s.system.bandwidth["default"] = {1000, 0.5, 10, 0, {}};
  return s;
}

// Layers are built once per strategy "op view": shared within a step (first and middle stages) and between
// steps that differ only in what no op reads (pipeline size, micro-batch count, ZeRO); not across TP sizes.
TEST(StepModel, OpCacheSharesLayersBuiltAlike) {
  auto s = llama2_7b_two_layers();
  s.model.layer_num = 8;
  s.strategy.pp_size = 4, s.strategy.tp_size = 2, s.strategy.micro_batch_num = 4;
  OpCache cache;
  const StepModel a = build_step_model(s, &cache);
  ASSERT_EQ(a.chunks.size(), 3u);
  const auto& first_layer = a.chunks[0].blocks[1];
  ASSERT_EQ(first_layer.kind, BlockKind::kLayer);
  EXPECT_EQ(first_layer.ops, a.chunks[1].blocks[0].ops);
  EXPECT_EQ(first_layer.program, a.chunks[1].blocks[0].program);
  s.strategy.pp_size = 2, s.strategy.micro_batch_num = 8, s.strategy.zero_state = 0;
  const StepModel b = build_step_model(s, &cache);
  EXPECT_EQ(b.chunks[0].blocks[1].ops, first_layer.ops);
  EXPECT_EQ(b.chunks[0].blocks[0].ops, a.chunks[0].blocks[0].ops);  // the embedding
  EXPECT_EQ(cache.views(), 1u);
  s.strategy.tp_size = 4;
  const StepModel c = build_step_model(s, &cache);
  EXPECT_NE(c.chunks[0].blocks[1].ops, first_layer.ops);
  EXPECT_EQ(cache.views(), 2u);
  // What the cache hands back is what a fresh build makes.
  const StepModel fresh = build_step_model(s);
  ASSERT_EQ(fresh.chunks[0].blocks[1].ops->size(), c.chunks[0].blocks[1].ops->size());
  EXPECT_EQ(fresh.chunks[0].params.weight_bytes, c.chunks[0].params.weight_bytes);
}

TEST(StepModel, StaticMemoryMatchesSimuMaxWorkedCheck) {
  const auto s = llama2_7b_two_layers();
  const StepModel m = build_step_model(s);
  ASSERT_EQ(m.chunks.size(), 1u);
  const auto& p = m.chunks[0].params;
  EXPECT_EQ(p.dense_numel, 333467648);
  EXPECT_EQ(p.weight_bytes, 666935296);
  EXPECT_EQ(p.grad_bytes, 1333870592);
  EXPECT_DOUBLE_EQ(p.optimizer_state_bytes, 1000402944.0);
  EXPECT_EQ(p.model_bytes(), 3001208832);
}

// PyTorch's workspace twice (the forward thread's and autograd's cuBLAS handle) plus TE's one, at megatron
// fidelity on a system that declares them; the run's CUBLAS_WORKSPACE_CONFIG replaces PyTorch's default.
TEST(StepModel, CublasWorkspacesAtMegatronFidelityOnly) {
  auto s = llama2_7b_two_layers();
  EXPECT_EQ(cublas_workspace_bytes(s), 0);  // no "workspaces" in the system config
  s.system.workspaces = config::Workspaces{8519680, 4194304};
  EXPECT_EQ(cublas_workspace_bytes(s), 2 * 8519680 + 4194304);
  EXPECT_EQ(build_step_model(s).workspace_bytes, 2 * 8519680 + 4194304);
  s.strategy.cublas_workspace_config_bytes = 32 * 1024 * 1024;
  EXPECT_EQ(cublas_workspace_bytes(s), 68 * 1024 * 1024);  // the A100 tests' measured 68.0 MiB
  // TE's grouped GEMM (MoE experts) adds a workspace per compute stream.
  s.model.model_type = "moe";
  s.model.expert_num = 8;
  EXPECT_EQ(cublas_workspace_bytes(s), 64 * 1024 * 1024 + 5 * 4194304);
  s.model.group_linear_mode = config::GroupLinearMode::kSerial;
  EXPECT_EQ(cublas_workspace_bytes(s), 68 * 1024 * 1024);
  s.strategy.fidelity = config::Fidelity::kSimuMax;
  EXPECT_EQ(cublas_workspace_bytes(s), 0);
}

TEST(StepModel, LayerActivationCacheMatchesSimuMaxWorkedCheck) {
  const auto s = llama2_7b_two_layers();
  const StepModel m = build_step_model(s);
  int64_t layer_cache = 0;
  for (const auto& blk : m.chunks[0].blocks) {
    if (blk.kind != BlockKind::kLayer) continue;
    for (const auto& op : *blk.ops) layer_cache += op.act_cache;
  }
  // 16 (ln) + 16 (qkv) + 48.125 (attention) + 16 (out) + 16 (ln2) + 16 (fc1) + 86 (swiglu) + 43 (fc2) MiB
  EXPECT_DOUBLE_EQ(static_cast<double>(layer_cache) / common::kMiB, 257.125);
}

TEST(StepModel, IdenticalLayersShareOneBlock) {
  auto s = llama2_7b_two_layers();
  s.model.layer_num = 8;
  const StepModel m = build_step_model(s);
  ASSERT_EQ(m.chunks[0].blocks.size(), 3u);  // embedding, 8 x layer, head
  EXPECT_EQ(m.chunks[0].blocks[1].repeat, 8);
}

TEST(StepModel, UnevenPipelineStagesGetTheirLayers) {
  auto s = llama2_7b_two_layers();
  s.model.layer_num = 12;
  s.strategy.tp_size = 1;
  s.strategy.pp_size = 3;
  s.strategy.world_size = 3;
  s.strategy.num_layers_in_first_pipeline_stage = 2;
  s.strategy.num_layers_in_last_pipeline_stage = 4;
  const StepModel m = build_step_model(s);
  ASSERT_EQ(m.chunks.size(), 3u);
  EXPECT_EQ(m.chunks[0].num_layers, 2);
  EXPECT_EQ(m.chunks[1].num_layers, 6);
  EXPECT_EQ(m.chunks[2].num_layers, 4);
  EXPECT_EQ(m.first_layer[2][0], 8);
  EXPECT_EQ(m.chunk_of_stage, (std::vector<int>{0, 1, 2}));
}

TEST(StepModel, InterleavedStagesComputeVirtualChunksInLayerOrder) {
  auto s = llama2_7b_two_layers();
  s.model.layer_num = 16;
  s.strategy.tp_size = 1;
  s.strategy.pp_size = 4;
  s.strategy.world_size = 4;
  s.strategy.interleaving_size = 2;
  const StepModel m = build_step_model(s);
  ASSERT_EQ(m.virtual_chunks(), 2);
  // Virtual stage v * pp + r holds layers [2 (v * pp + r), 2 (v * pp + r) + 2).
  EXPECT_EQ(m.first_layer[1], (std::vector<int>{2, 10}));
  EXPECT_EQ(m.first_layer[3], (std::vector<int>{6, 14}));
  EXPECT_TRUE(m.chunks[m.compute_chunks[0][0]].has_embedding);
  EXPECT_FALSE(m.chunks[m.compute_chunks[0][1]].has_embedding);
  EXPECT_TRUE(m.chunks[m.compute_chunks[3][1]].has_head);
  EXPECT_EQ(m.chunks[m.compute_chunks[2][1]].num_layers, 2);
  // Parameters (DP, optimizer) stay with the physical chunks.
  EXPECT_EQ(m.chunks[m.chunk_of_stage[1]].num_layers, 4);
}

TEST(StepModel, AccountForEmbeddingAndLossRemovesALayer) {
  auto s = llama2_7b_two_layers();
  s.model.layer_num = 6;
  s.strategy.tp_size = 1;
  s.strategy.pp_size = 2;
  s.strategy.world_size = 2;
  s.strategy.account_for_embedding_in_pipeline_split = true;
  s.strategy.account_for_loss_in_pipeline_split = true;
  const StepModel m = build_step_model(s);
  EXPECT_EQ(m.chunks[0].num_layers, 3);
  EXPECT_EQ(m.chunks[1].num_layers, 3);
}

TEST(StepModel, FlopsPerTokenMatchesSimuMaxExample) {
  // llama3-8b, seq 4096, vocab 128257 padded to 128384: 51,473,547,264 FLOPs per token (time spec §12).
  config::ModelConfig m;
  m.hidden_size = 4096;
  m.head_num = 32;
  m.kv_head_num = 8;
  m.head_size = 128;
  m.intermediate_size = 14336;
  m.layer_num = 32;
  m.use_swiglu = true;
  EXPECT_DOUBLE_EQ(flops_per_token(m, 128384, 4096), 51473547264.0);
}

}  // namespace
}  // namespace simumax::model
