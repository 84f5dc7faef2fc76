#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::RuleCase;

class SplitRule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(SplitRule, ReportsTheFieldAtFaultWithTheFix) { testing::expect_rule(GetParam()); }

// How heads, FFN, vocabulary and experts split over TP / CP / EP / ETP.
INSTANTIATE_TEST_SUITE_P(
    Model, SplitRule,
    ::testing::Values(
        RuleCase{"mla_tp", true, [](Scenario& s) { s.strategy.tp_size = 2; },
                 "strategy.json: /tp_size: 2 with MLA attention (deepseekv2.json): SimuMax v1.2 models MLA only "
                 "without tensor parallelism; use tp_size 1 and scale with ep_size, cp_size or pp_size"},
        RuleCase{"kv_heads_tp", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 16;
                   s.strategy.tp_size = 16;
                 },
                 "strategy.json: /tp_size: 16 does not divide kv_head_num 8 (llama3-70b.json); use a tp_size that "
                 "divides both head_num 64 and kv_head_num 8: 1, 2, 4, 8"},
        RuleCase{"heads_tp", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 24;
                   s.strategy.tp_size = 3;
                   s.strategy.enable_sequence_parallel = false;
                 },
                 "strategy.json: /tp_size: 3 does not divide head_num 64 (llama3-70b.json); use a tp_size that "
                 "divides both head_num 64 and kv_head_num 8: 1, 2, 4, 8"},
        RuleCase{"heads_cp", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 16;
                   s.strategy.tp_size = 8;
                   s.strategy.cp_size = 2;
                 },
                 "strategy.json: /cp_size: 2 does not divide the attention heads of a TP rank: head_num 64 / "
                 "tp_size 8 = 8, kv_head_num 8 / tp_size 8 = 1 (llama3-70b.json); a2a context parallelism scatters "
                 "heads over the cp ranks; use a cp_size that divides 1: 1"},
        RuleCase{"experts_ep", true,
                 [](Scenario& s) {
                   s.strategy.world_size = 24;
                   s.strategy.ep_size = 3;
                 },
                 "strategy.json: /ep_size: 3 does not divide expert_num 160 (deepseekv2.json); use an ep_size that "
                 "divides it: 1, 2, 4, 5, 8, 10, 16, 20, 32, 40, 80, 160"},
        RuleCase{"dense_ep", false, [](Scenario& s) { s.strategy.ep_size = 2; },
                 "strategy.json: /ep_size: 2 needs a MoE model, but llama3-70b.json is dense (expert_num 1); use "
                 "ep_size 1"},
        RuleCase{"vocab_unpadded", false,
                 [](Scenario& s) {
                   s.model.vocab_size = 128257;
                   s.model.padded_vocab_size = false;
                   s.strategy.tp_size = 2;
                 },
                 "llama3-70b.json: /vocab_size: 128257 is not divisible by tp_size 2 and padded_vocab_size is "
                 "false, so the embedding and the LM head cannot be split over the TP ranks; set padded_vocab_size "
                 "true (Megatron pads to a multiple of make_vocab_size_divisible_by*tp) or use a vocab_size "
                 "divisible by tp_size"},
        RuleCase{"vocab_padded", false,
                 [](Scenario& s) {
                   s.model.vocab_size = 128257;
                   s.strategy.tp_size = 2;
                 },
                 ""},
        RuleCase{"ffn_tp", false,
                 [](Scenario& s) {
                   s.model.intermediate_size = 28673;
                   s.strategy.tp_size = 2;
                 },
                 "strategy.json: /tp_size: 2 does not divide intermediate_size 28673 (llama3-70b.json): the layer's "
                 "GEMMs are split column- and row-wise over these ranks; use a tp_size that divides 28673"},
        RuleCase{"ffn_etp", true,
                 [](Scenario& s) {
                   s.model.moe_ffn_hidden_size = 1537;
                   s.strategy.ep_size = 4;
                   s.strategy.etp_size = 2;
                 },
                 "strategy.json: /etp_size: 2 does not divide moe_ffn_hidden_size 1537 (deepseekv2.json): the "
                 "layer's GEMMs are split column- and row-wise over these ranks; use a etp_size that divides 1537"},
        RuleCase{"moe_rows_unpadded", true, [](Scenario& s) { s.model.moe_pad_expert_input_to_capacity = false; },
                 "deepseekv2.json: /moe_pad_expert_input_to_capacity: false needs the routed token rows of a rank "
                 "to split evenly over its local experts, but topk * micro_batch_size * tokens per rank = 6 * 1 * "
                 "4096 = 24576 rows is not divisible by expert_num / ep_size = 160 / 8 = 20 local experts (the "
                 "grouped-GEMM shapes give every expert the same rows); set it true, or choose an ep_size for which "
                 "expert_num / ep_size divides 24576"},
        RuleCase{"moe_rows_ep4", true,
                 [](Scenario& s) {
                   s.model.moe_pad_expert_input_to_capacity = false;
                   s.strategy.ep_size = 4;
                   s.strategy.world_size = 8;
                 },
                 "deepseekv2.json: /moe_pad_expert_input_to_capacity: false needs the routed token rows of a rank "
                 "to split evenly over its local experts, but topk * micro_batch_size * tokens per rank = 6 * 1 * "
                 "4096 = 24576 rows is not divisible by expert_num / ep_size = 160 / 4 = 40 local experts (the "
                 "grouped-GEMM shapes give every expert the same rows); set it true, or choose an ep_size for which "
                 "expert_num / ep_size divides 24576"},
        RuleCase{"moe_rows_divisible", true,
                 [](Scenario& s) {
                   s.model.moe_pad_expert_input_to_capacity = false;
                   s.strategy.world_size = 40;
                   s.strategy.ep_size = 5;  // 32 local experts share 24576 rows evenly
                 },
                 ""}),
    [](const auto& info) { return std::string(info.param.name); });

void uneven(Scenario& s, int64_t pp, std::optional<int64_t> first, std::optional<int64_t> last) {
  s.strategy.pp_size = pp;
  s.strategy.num_layers_in_first_pipeline_stage = first;
  s.strategy.num_layers_in_last_pipeline_stage = last;
}

// Layers per pipeline stage and virtual chunk (llama3-70b: 80 layers; world 8).
INSTANTIATE_TEST_SUITE_P(
    Layers, SplitRule,
    ::testing::Values(
        RuleCase{"pp_not_dividing", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 24;
                   s.strategy.pp_size = 3;
                 },
                 "strategy.json: /pp_size: 3 does not divide layer_num 80 (llama3-70b.json); use a pp_size that "
                 "divides 80: 1, 2, 4, 5, 8, 10, 16, 20, 40, 80, or set num_layers_in_first/last_pipeline_stage for "
                 "an uneven split"},
        RuleCase{"pp_over_layers", false,
                 [](Scenario& s) {
                   s.model.layer_num = 2;
                   s.strategy.pp_size = 4;
                 },
                 "strategy.json: /pp_size: 4 exceeds the 2 layers of llama3-70b.json: every pipeline stage needs at "
                 "least one layer; use a pp_size that divides 2: 1, 2"},
        RuleCase{"pp_accounting", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 4;
                   s.strategy.account_for_embedding_in_pipeline_split = true;
                 },
                 "strategy.json: /pp_size: 4 does not divide layer_num 80 (+1 for embedding/loss) "
                 "(llama3-70b.json); use a pp_size that divides 81: 1, 3, 9, 27, 81, or set "
                 "num_layers_in_first/last_pipeline_stage for an uneven split"},
        RuleCase{"pp_accounting_ok", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 2;
                   s.strategy.account_for_embedding_in_pipeline_split = true;
                   s.strategy.account_for_loss_in_pipeline_split = true;
                 },
                 ""},
        RuleCase{"vp_not_dividing", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 4;
                   s.strategy.interleaving_size = 3;
                 },
                 "strategy.json: /interleaving_size: 3 does not divide the 20 layers of each pipeline stage: every "
                 "pipeline stage's layers are split evenly into interleaving_size virtual chunks; use an "
                 "interleaving_size that divides 20: 1, 2, 4, 5, 10, 20"},
        RuleCase{"uneven_with_accounting", false,
                 [](Scenario& s) {
                   uneven(s, 4, 20, std::nullopt);
                   s.strategy.account_for_loss_in_pipeline_split = true;
                 },
                 "strategy.json: /account_for_loss_in_pipeline_split: true cannot be combined with "
                 "num_layers_in_first_pipeline_stage (Megatron's uneven pipeline split has no embedding or loss "
                 "slot); use one or the other"},
        RuleCase{"uneven_without_pp", false, [](Scenario& s) { uneven(s, 1, std::nullopt, 10); },
                 "strategy.json: /num_layers_in_last_pipeline_stage: needs pp_size > 1: with one pipeline stage "
                 "there is nothing to split"},
        RuleCase{"uneven_pp2_sum", false, [](Scenario& s) { uneven(s, 2, 30, 30); },
                 "strategy.json: /num_layers_in_first_pipeline_stage: the first and last stages take 60 layers but "
                 "the model (llama3-70b.json) has layer_num 80; with pp_size 2 they must add up to 80"},
        RuleCase{"uneven_exceeds", false, [](Scenario& s) { uneven(s, 4, 50, 40); },
                 "strategy.json: /num_layers_in_first_pipeline_stage: the first and last stages take 90 layers but "
                 "the model (llama3-70b.json) has layer_num 80; with pp_size 4 they must not exceed 80"},
        RuleCase{"uneven_middle", false, [](Scenario& s) { uneven(s, 4, 21, 20); },
                 "strategy.json: /num_layers_in_first_pipeline_stage: the 39 layers left after the first/last "
                 "stages (41 of layer_num 80) do not split evenly over the 2 remaining stages of pp_size 4; adjust "
                 "num_layers_in_first/last_pipeline_stage"},
        RuleCase{"uneven_vpp", false,
                 [](Scenario& s) {
                   uneven(s, 4, 21, 21);
                   s.strategy.interleaving_size = 2;
                 },
                 "strategy.json: /interleaving_size: 2 does not divide the 21 layers of the first pipeline stage "
                 "(num_layers_in_first_pipeline_stage): every pipeline stage's layers are split evenly into "
                 "interleaving_size virtual chunks; use an interleaving_size that divides 21: 1, 3, 7, 21"},
        RuleCase{"uneven_empty_ends", false, [](Scenario& s) { uneven(s, 4, 0, 0); }, ""},
        RuleCase{"uneven_first_only", false, [](Scenario& s) { uneven(s, 4, 2, std::nullopt); }, ""}),
    [](const auto& info) { return std::string(info.param.name); });

// The system config against the strategy.
INSTANTIATE_TEST_SUITE_P(
    System, SplitRule,
    ::testing::Values(
        RuleCase{"missing_inter_node", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 16;
                   s.system.networks.erase("inter_node");
                 },
                 "system.json: /networks: has no \"inter_node\" tier, which world_size 16 needs (num_per_node 8, "
                 "intra_with_pcie false); add it"},
        RuleCase{"single_node_without_inter_node", false, [](Scenario& s) { s.system.networks.erase("inter_node"); },
                 ""},
        RuleCase{"mxfp8_without_block_scaled_gemms", false,
                 [](Scenario& s) {
                   s.strategy.fp8 = true;
                   s.strategy.fp8_recipe = Fp8Recipe::kMxfp8;
                 },
                 "strategy.json: /fp8_recipe: \"mxfp8\" needs the system's /accelerator/op/mxfp8_matmul (its GEMM "
                 "peak; block-scaled Tensor Cores, NVIDIA Blackwell on), which system.json does not have; use "
                 "\"delayed\" or \"tensorwise\", or a system that lists it"},
        RuleCase{"nvfp4_with_block_scaled_gemms", false,
                 [](Scenario& s) {
                   s.strategy.fp8 = true;
                   s.strategy.fp8_recipe = Fp8Recipe::kNvfp4;
                   for (const char* op : {"nvfp4_matmul", "nvfp4_group_matmul"}) s.system.op[op] = s.system.op.at("matmul");
                 },
                 ""},
        RuleCase{"fsdp_without_zero3", false, [](Scenario& s) { s.strategy.megatron_fsdp = true; },
                 "strategy.json: /zero_state: is 1 but megatron_fsdp is true: Megatron-FSDP (optim_grads_params) "
                 "shards parameters, gradients and optimizer state; set zero_state 3"},
        RuleCase{"fsdp_with_fused_grad_accumulation", false,
                 [](Scenario& s) {
                   s.strategy.megatron_fsdp = true;
                   s.strategy.zero_state = 3;
                 },
                 "strategy.json: /use_fused_grad_accumulation: true cannot be combined with megatron_fsdp: "
                 "Megatron-FSDP requires --no-gradient-accumulation-fusion (Megatron-LM's Megatron-FSDP user "
                 "guide); set it false"},
        RuleCase{"fsdp", false,
                 [](Scenario& s) {
                   s.strategy.megatron_fsdp = true;
                   s.strategy.zero_state = 3;
                   s.strategy.use_fused_grad_accumulation = false;
                 },
                 ""}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(CheckScenario, Fp8WithZeroEfficiencyOnlyWarns) {
  testing::CapturedLog log;
  Scenario s = testing::shipped_scenario(false);
  s.strategy.fp8 = true;
  s.strategy.fidelity = Fidelity::kSimuMax;  // the megatron fidelity prices them from the bf16 tables
  EXPECT_NO_THROW(check_scenario(s));
  EXPECT_EQ(log.text(),
            "warning: system.json: /accelerator/op/fp8_matmul: efficient_factor is 0 but fp8 is on: an fp8 GEMM "
            "shape missing from its table has no usable efficiency (SimuMax divides by zero there)\n"
            "warning: system.json: /accelerator/op/fp8_group_matmul: efficient_factor is 0 but fp8 is on: an fp8 "
            "GEMM shape missing from its table has no usable efficiency (SimuMax divides by zero there)\n");
}

TEST(CheckScenario, Fp8WithZeroEfficiencyIsPricedAtMegatronFidelity) {
  testing::CapturedLog log;
  Scenario s = testing::shipped_scenario(false);
  s.strategy.fp8 = true;
  EXPECT_NO_THROW(check_scenario(s));
  EXPECT_EQ(log.text(), "");
}

}  // namespace
}  // namespace simumax::config
