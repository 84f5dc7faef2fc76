// The architecture keys beyond SimuMax's schema: parameters, saved bytes and Megatron kernels they add.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "engine/model/op_builder.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::model {
namespace {

constexpr int64_t kSeq = 2048, kHidden = 1024, kVocab = 50304;

// A GPT-3-style dense model (16 heads of 64), tp1 pp1, bf16, one micro-batch.
config::Scenario gpt(config::Fidelity fidelity) {
  config::Scenario s;
  auto& m = s.model;
  m.model_type = "dense";
  m.hidden_size = kHidden;
  m.head_num = 16;
  m.kv_head_num = 16;
  m.head_size = 64;
  m.intermediate_size = 4 * kHidden;
  m.layer_num = 2;
  m.vocab_size = kVocab;
  m.use_swiglu = false;
  auto& st = s.strategy;
  st.seq_len = kSeq;
  st.micro_batch_size = 1;
  st.micro_batch_num = 1;
  st.world_size = 1;
  st.fidelity = fidelity;
  return s;
}

void make_gpt_style(config::ModelConfig& m) {
  m.normalization = config::Normalization::kLayerNorm;
  m.add_bias_linear = true;
  m.position_embedding = config::PositionEmbedding::kLearnedAbsolute;
  m.untie_embeddings_and_output_weights = false;
}

std::vector<Op> layer_ops(const config::Scenario& s) {
  std::vector<Op> ops;
  OpBuilder(s, s.model.vocab_size).layer(ops, 0, kSeq, true);
  return ops;
}

int64_t numel(const std::vector<Op>& ops) {
  int64_t n = 0;
  for (const Op& op : ops) n += op.dense_numel;
  return n;
}

const Op& find(const std::vector<Op>& ops, const std::string& name) {
  for (const Op& op : ops) {
    if (op.name == name) return op;
  }
  ADD_FAILURE() << "no op " << name;
  return ops.front();
}

// Megatron's GPT layer: QKV 3h^2 + 3h, proj h^2 + h, fc1 4h^2 + 4h, fc2 4h^2 + h, two LayerNorms 2h each.
TEST(ArchitectureKeys, GptLayerHasMegatronsParameterCount) {
  auto s = gpt(config::Fidelity::kMegatron);
  const int64_t h = kHidden;
  EXPECT_EQ(numel(layer_ops(s)), 12 * h * h + 2 * h);  // RMSNorm, no biases: SimuMax's layer
  make_gpt_style(s.model);
  EXPECT_EQ(numel(layer_ops(s)), 12 * h * h + 13 * h);
  s.model.add_bias_linear = false;
  s.model.add_qkv_bias = true;
  EXPECT_EQ(numel(layer_ops(s)), 12 * h * h + 3 * h + 4 * h);
}

TEST(ArchitectureKeys, TiedOutputLayerHoldsNoWeightOnASingleStage) {
  auto s = gpt(config::Fidelity::kMegatron);
  std::vector<Op> untied, tied;
  OpBuilder(s, kVocab).head(untied, kSeq);
  EXPECT_EQ(find(untied, "output_layer").dense_numel, kVocab * kHidden);
  s.model.untie_embeddings_and_output_weights = false;
  OpBuilder(s, kVocab).head(tied, kSeq);
  EXPECT_EQ(find(tied, "output_layer").dense_numel, 0);
  // With two stages the last one keeps its own copy of the table.
  s.strategy.pp_size = 2;
  std::vector<Op> last;
  OpBuilder(s, kVocab).head(last, kSeq);
  EXPECT_EQ(find(last, "output_layer").dense_numel, kVocab * kHidden);
}

TEST(ArchitectureKeys, LearnedPositionTableIsReplicatedOverTensorParallelRanks) {
  auto s = gpt(config::Fidelity::kMegatron);
  s.model.position_embedding = config::PositionEmbedding::kLearnedAbsolute;
  s.model.max_position_embeddings = 4096;
  s.strategy.tp_size = 2;
  std::vector<Op> ops;
  OpBuilder(s, kVocab).embedding(ops, kSeq);
  EXPECT_EQ(ops.front().dense_numel, kVocab / 2 * kHidden + 4096 * kHidden);
}

TEST(ArchitectureKeys, HiddenDropoutKeepsAByteMaskPerResidualElement) {
  for (auto fidelity : {config::Fidelity::kSimuMax, config::Fidelity::kMegatron}) {
    auto s = gpt(fidelity);
    const auto plain = layer_ops(s);
    s.model.hidden_dropout = 0.1;
    const auto dropped = layer_ops(s);
    int64_t extra = 0;
    for (size_t i = 0; i < plain.size(); ++i) extra += dropped[i].act_cache - plain[i].act_cache;
    EXPECT_EQ(extra, 2 * kSeq * kHidden);
  }
}

// Unfused attention with dropout keeps the byte mask and the dropped probabilities beside the softmax output.
TEST(ArchitectureKeys, UnfusedAttentionDropoutKeepsMaskAndDroppedProbabilities) {
  auto s = gpt(config::Fidelity::kMegatron);
  s.strategy.use_flash_sdp = false;
  const int64_t plain = find(layer_ops(s), "attn.core_attention").act_cache;
  s.model.attention_dropout = 0.1;
  const int64_t scores = 16 * kSeq * kSeq;
  EXPECT_EQ(find(layer_ops(s), "attn.core_attention").act_cache - plain, scores * (1 + 2));
  s.strategy.use_flash_sdp = true;
  const int64_t flash = find(layer_ops(s), "attn.core_attention").act_cache;
  s.model.attention_dropout = 0;
  EXPECT_EQ(find(layer_ops(s), "attn.core_attention").act_cache, flash);
}

TEST(ArchitectureKeys, MegatronGeluKeepsOnlyItsInput) {
  auto s = gpt(config::Fidelity::kSimuMax);
  const int64_t in = kSeq * 4 * kHidden * 2;
  EXPECT_EQ(find(layer_ops(s), "mlp.activation").act_cache, 3 * in);  // SimuMax's count, kept for parity
  s.strategy.fidelity = config::Fidelity::kMegatron;
  EXPECT_EQ(find(layer_ops(s), "mlp.activation").act_cache, in);
}

TEST(ArchitectureKeys, LearnedPositionsDropTheRotaryKernels) {
  auto s = gpt(config::Fidelity::kMegatron);
  EXPECT_EQ(find(layer_ops(s), "attn.linear_qkv").extra_kernel_bytes[0].size(), 4u);
  s.model.position_embedding = config::PositionEmbedding::kLearnedAbsolute;
  EXPECT_EQ(find(layer_ops(s), "attn.linear_qkv").extra_kernel_bytes[0].size(), 2u);
}

TEST(ArchitectureKeys, UnfusedGradientAccumulationAddsTheHookAddAndItsBuffer) {
  auto s = gpt(config::Fidelity::kMegatron);
  const Op fused = find(layer_ops(s), "mlp.linear_fc1");
  s.strategy.use_fused_grad_accumulation = false;
  const Op unfused = find(layer_ops(s), "mlp.linear_fc1");
  const int64_t w = kHidden * 4 * kHidden;
  EXPECT_EQ(unfused.extra_kernel_bytes[2].size(), fused.extra_kernel_bytes[2].size() + 1);
  EXPECT_EQ(unfused.extra_kernel_bytes[2].back(), static_cast<double>(w) * (2 + 8));
  EXPECT_EQ(unfused.act_bwd_peak - fused.act_bwd_peak, w * 2);
}

TEST(ArchitectureKeys, MultiTokenPredictionAddsALayerAProjectionAndAHeadPerDepth) {
  auto s = gpt(config::Fidelity::kMegatron);
  std::vector<Op> plain, mtp;
  OpBuilder(s, kVocab).head(plain, kSeq);
  s.model.mtp_num_layers = 2;
  OpBuilder(s, kVocab).head(mtp, kSeq);
  const int64_t h = kHidden;
  // Per depth: enorm, hnorm, eh_proj (2h x h), one layer and its final norm; the head and table are shared.
  EXPECT_EQ(numel(mtp) - numel(plain), 2 * (h + h + 2 * h * h + (12 * h * h + 2 * h) + h));
  EXPECT_EQ(find(mtp, "mtp1.output_layer").dense_numel, 0);
  EXPECT_GT(find(mtp, "mtp1.cross_entropy").act_cache, 0);
  EXPECT_EQ(find(mtp, "mtp0.attn.linear_qkv").type, OpType::kLinearCol);
  // Megatron's FLOPs count each depth as one more layer, projection and output layer.
  EXPECT_GT(flops_per_token(s.model, kVocab, kSeq), flops_per_token(gpt(config::Fidelity::kMegatron).model, kVocab,
                                                                   kSeq));
}

// Megatron's native fused cross-entropy (fusions/fused_cross_entropy.py): the unfused algorithm under torch.compile,
// whose functionalized in-place steps hold one more fp32 copy of the logits in the forward; TE's fused kernel (and
// the simumax fidelity, which knows only TE's) keep the bf16 logits.
TEST(ArchitectureKeys, NativeFusedCrossEntropyHoldsOneMoreFp32LogitsCopy) {
  auto s = gpt(config::Fidelity::kMegatron);
  auto ce = [&] {
    std::vector<Op> ops;
    OpBuilder(s, kVocab).head(ops, kSeq);
    return find(ops, "cross_entropy");
  };
  const Op unfused = ce();
  s.strategy.cross_entropy_loss_fusion = true;
  const Op te = ce();
  s.strategy.cross_entropy_fusion_impl = config::StrategyConfig::CeFusionImpl::kNative;
  const Op native = ce();
  const int64_t logits = kSeq * kVocab;
  EXPECT_EQ(te.act_cache, logits * 2);
  EXPECT_EQ(native.act_cache, unfused.act_cache);
  EXPECT_EQ(native.act_fwd_peak - unfused.act_fwd_peak, logits * 4);
  EXPECT_EQ(native.work[0].mem_bytes, unfused.work[0].mem_bytes);
  s.strategy.fidelity = config::Fidelity::kSimuMax;
  EXPECT_EQ(ce().act_cache, te.act_cache);
}

}  // namespace
}  // namespace simumax::model
