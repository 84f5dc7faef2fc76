#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::RuleCase;

TEST(CheckScenario, ShippedBasesPass) {
  EXPECT_NO_THROW(check_scenario(testing::shipped_scenario(false)));
  EXPECT_NO_THROW(check_scenario(testing::shipped_scenario(true)));
}

class Rule : public ::testing::TestWithParam<RuleCase> {};

TEST_P(Rule, ReportsTheFieldAtFaultWithTheFix) { testing::expect_rule(GetParam()); }

// Strategy-only rules: group sizes, sequence split, VPP schedule, feature flags.
INSTANTIATE_TEST_SUITE_P(
    Groups, Rule,
    ::testing::Values(
        RuleCase{"dp_not_whole", false,
                 [](Scenario& s) {
                   s.strategy.world_size = 12;
                   s.strategy.tp_size = 8;
                 },
                 "strategy.json: /world_size: 12 is not a multiple of tp_size*cp_size*pp_size = 8*1*1 = 8, so the "
                 "data-parallel size dp = world_size/(tp*cp*pp) is not whole; use a world_size that is a multiple "
                 "of 8"},
        RuleCase{"edp_not_whole", true, [](Scenario& s) { s.strategy.pp_size = 2; },
                 "strategy.json: /ep_size: ep_size*etp_size*pp_size = 8*1*2 = 16 does not divide world_size 8, so "
                 "the expert-data-parallel size edp = world_size/(ep*etp*pp) is not whole; use an ep_size that "
                 "divides both world_size/(etp*pp) = 4 and expert_num 160: 1, 2, 4"},
        RuleCase{"seq_cp", false,
                 [](Scenario& s) {
                   s.strategy.cp_size = 2;
                   s.strategy.seq_len = 4098;
                 },
                 "strategy.json: /seq_len: 4098 is not divisible by 2*cp_size = 4: Megatron splits the sequence "
                 "into 2*cp chunks so that every context-parallel rank gets an equal share of the causal attention; "
                 "use a multiple of 4"},
        RuleCase{"seq_sp", false,
                 [](Scenario& s) {
                   s.strategy.tp_size = 8;
                   s.strategy.seq_len = 4100;
                 },
                 "strategy.json: /seq_len: with sequence parallelism each TP rank holds seq_len/cp_size/tp_size "
                 "tokens, but 4100/1 is not divisible by tp_size 8; use a seq_len that is a multiple of "
                 "cp_size*tp_size = 8, or set enable_sequence_parallel false"},
        RuleCase{"seq_no_sp", false,
                 [](Scenario& s) {
                   s.strategy.tp_size = 8;
                   s.strategy.seq_len = 4100;
                   s.strategy.enable_sequence_parallel = false;
                 },
                 ""},
        RuleCase{"cp_all_gather", false,
                 [](Scenario& s) {
                   s.strategy.cp_size = 2;
                   s.strategy.cp_comm_type = "all_gather";
                 },
                 "strategy.json: /cp_comm_type: \"all_gather\" is not modelled: SimuMax v1.2 (and this simulator) "
                 "implement only \"a2a\" context parallelism (all-to-all over attention heads); use \"a2a\""},
        RuleCase{"vpp_without_pp", false, [](Scenario& s) { s.strategy.interleaving_size = 2; },
                 "strategy.json: /interleaving_size: 2 needs pp_size > 1: virtual stages interleave model chunks "
                 "over pipeline ranks; set interleaving_size 1 or pp_size of at least 2"},
        RuleCase{"vpp_sync_pp2", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 2;
                   s.strategy.interleaving_size = 2;
                   s.strategy.pp_comm_async = false;
                 },
                 "strategy.json: /pp_comm_async: false with interleaving_size 2 needs pp_size > 2: with pp_size 2 "
                 "one communication batch would hold two sends and receives between the same two ranks, which "
                 "Megatron refuses; set pp_comm_async true or use pp_size of at least 3"},
        RuleCase{"vpp_group_small", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 4;
                   s.strategy.interleaving_size = 2;
                   s.strategy.microbatch_group_size_per_vp_stage = 2;
                 },
                 "strategy.json: /microbatch_group_size_per_vp_stage: 2 is smaller than pp_size 4; Megatron's "
                 "interleaved schedule needs pp_size <= group <= micro_batch_num"},
        RuleCase{"vpp_too_few_microbatches", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 4;
                   s.strategy.interleaving_size = 2;
                   s.strategy.micro_batch_num = 2;
                   s.strategy.microbatch_group_size_per_vp_stage = 4;
                 },
                 "strategy.json: /micro_batch_num: micro_batch_num 2 is smaller than the interleaved schedule's "
                 "micro-batch group 4 (microbatch_group_size_per_vp_stage, which defaults to pp_size); Megatron "
                 "needs pp_size <= group <= micro_batch_num"},
        RuleCase{"vpp_legal_group", false,
                 [](Scenario& s) {
                   s.strategy.pp_size = 4;
                   s.strategy.interleaving_size = 2;
                   s.strategy.micro_batch_num = 16;
                   s.strategy.microbatch_group_size_per_vp_stage = 8;
                   s.strategy.pp_comm_async = false;
                 },
                 ""},
        RuleCase{"cache_needs_fp8", true, [](Scenario& s) { s.strategy.cache_groupgemm_col_fp8_inputs = true; },
                 "strategy.json: /cache_groupgemm_col_fp8_inputs: true needs fp8 true: it keeps the fp8 copies of "
                 "the grouped-GEMM inputs; set fp8 true or this flag false"},
        RuleCase{"offload_full_block", true,
                 [](Scenario& s) {
                   s.strategy.offload_groupgemm_col_inputs = true;
                   s.strategy.recompute_granularity = RecomputeGranularity::kFullBlock;
                 },
                 "strategy.json: /offload_groupgemm_col_inputs: true cannot be combined with recompute_granularity "
                 "\"full_block\" (a fully recomputed layer keeps no grouped-GEMM inputs to offload); set one of them "
                 "differently"}),
    [](const auto& info) { return std::string(info.param.name); });

void megatron(Scenario& s, std::vector<std::string> modules) {
  s.strategy.recompute_granularity = RecomputeGranularity::kSelective;
  s.strategy.recompute_layer_num = 2;
  s.strategy.megatron_recompute = true;
  s.strategy.megatron_recompute_modules = std::move(modules);
}

INSTANTIATE_TEST_SUITE_P(
    Recompute, Rule,
    ::testing::Values(
        RuleCase{"modules_without_switch", false, [](Scenario& s) { s.strategy.megatron_recompute_modules = {"mlp"}; },
                 "strategy.json: /megatron_recompute_modules: is set but megatron_recompute is false; set "
                 "megatron_recompute true (with recompute_granularity \"selective_recompute\") or remove the list"},
        RuleCase{"needs_enable", false,
                 [](Scenario& s) {
                   megatron(s, {"mlp"});
                   s.strategy.enable_recompute = false;
                 },
                 "strategy.json: /enable_recompute: false, but megatron_recompute is true; set enable_recompute true "
                 "or megatron_recompute false"},
        RuleCase{"needs_selective", false,
                 [](Scenario& s) {
                   megatron(s, {"mlp"});
                   s.strategy.recompute_granularity = RecomputeGranularity::kFullBlock;
                 },
                 "strategy.json: /recompute_granularity: megatron_recompute needs \"selective_recompute\" "
                 "(Megatron's --recompute-modules apply to selective recompute only)"},
        RuleCase{"needs_layers", false,
                 [](Scenario& s) {
                   megatron(s, {"mlp"});
                   s.strategy.recompute_layer_num = 0;
                 },
                 "strategy.json: /recompute_layer_num: 0, but megatron_recompute needs at least one layer per stage "
                 "chunk that recomputes; set how many"},
        RuleCase{"needs_modules", false, [](Scenario& s) { megatron(s, {}); },
                 "strategy.json: /megatron_recompute_modules: megatron_recompute needs a non-empty list from "
                 "layernorm, mla_up_proj, moe_act, mlp, moe"},
        RuleCase{"core_attn", false,
                 [](Scenario& s) {
                   megatron(s, {"mlp", "core_attn"});
                 },
                 "strategy.json: /megatron_recompute_modules/1: \"core_attn\" is not supported: SimuMax v1.2 does "
                 "not model Megatron's core-attention recompute; remove it and choose from layernorm, mla_up_proj, "
                 "moe_act, mlp, moe"},
        RuleCase{"legacy_flag", false,
                 [](Scenario& s) {
                   megatron(s, {"mlp"});
                   s.strategy.attn_recompute = true;
                 },
                 "strategy.json: /attn_recompute: true cannot be combined with megatron_recompute (its module list "
                 "replaces the legacy selective flags and the variance model); set it false"},
        RuleCase{"mla_up_proj_dense", false, [](Scenario& s) { megatron(s, {"mla_up_proj"}); },
                 "strategy.json: /megatron_recompute_modules/0: \"mla_up_proj\" needs MLA attention, but "
                 "llama3-70b.json uses standard attention; remove it"},
        RuleCase{"moe_act_dense", false,
                 [](Scenario& s) {
                   megatron(s, {"layernorm", "moe_act"});
                 },
                 "strategy.json: /megatron_recompute_modules/1: \"moe_act\" needs a MoE model, but llama3-70b.json "
                 "is dense (expert_num 1); use \"mlp\" to recompute a dense MLP"},
        RuleCase{"moe_act_serial", true,
                 [](Scenario& s) {
                   megatron(s, {"moe_act"});
                   s.model.group_linear_mode = GroupLinearMode::kSerial;
                 },
                 "strategy.json: /megatron_recompute_modules/0: \"moe_act\" needs grouped-GEMM experts, but "
                 "deepseekv2.json sets group_linear_mode \"serial\"; use \"moe\" or group_linear_mode \"parallel\""},
        RuleCase{"fp8_layernorm", true,
                 [](Scenario& s) {
                   megatron(s, {"moe", "layernorm"});
                   s.strategy.fp8 = true;
                 },
                 "strategy.json: /megatron_recompute_modules/1: \"layernorm\" cannot be recomputed with fp8 on "
                 "(SimuMax v1.2 refuses this combination and has no model for it); remove it or set fp8 false"},
        RuleCase{"megatron_ok", true,
                 [](Scenario& s) {
                   megatron(s, {"layernorm", "mla_up_proj", "moe_act"});
                 },
                 ""},
        RuleCase{"legacy_rms_needs_attn", false,
                 [](Scenario& s) {
                   s.strategy.recompute_granularity = RecomputeGranularity::kSelective;
                   s.strategy.recompute_layer_num = 1;
                   s.strategy.mla_rms_recompute = true;
                 },
                 "strategy.json: /mla_rms_recompute: true needs attn_recompute true (the norm is recomputed only "
                 "together with the attention it feeds); set attn_recompute true"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace simumax::config
