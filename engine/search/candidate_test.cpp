// A candidate's strategy, and the reason keys under which illegal candidates are counted.
#include "engine/search/candidate.hpp"

#include <gtest/gtest.h>

#include <string>

#include "engine/search/search.hpp"

namespace simumax::search {
namespace {

const std::string kSrc = SIMUMAX_SOURCE_DIR;
const JobShape kJob{64, 512, 8192};

config::Scenario llama70b() {
  return load_base(kSrc + "/models/llama3-70b.json", kSrc + "/platforms/b200_bf16.json", "", 8192);
}

Candidate make(int64_t tp, int64_t pp, int64_t mbs, RecomputeChoice r = {}) {
  Candidate c;
  c.tp = tp, c.pp = pp, c.mbs = mbs, c.recompute = r;
  c.dp = kJob.world_size % (tp * pp) == 0 ? kJob.world_size / (tp * pp) : 0;
  c.mbc = c.dp > 0 && kJob.global_batch_size % (mbs * c.dp) == 0 ? kJob.global_batch_size / (mbs * c.dp) : 0;
  return c;
}

// The reason key of applying `c`, or "legal".
std::string outcome(const Candidate& c) {
  config::Scenario s = llama70b();
  const config::StrategyConfig base = s.strategy;
  try {
    apply(c, base, true, kJob, s);
  } catch (const common::ConfigError& e) {
    return reason_key(e);
  }
  return "legal";
}

TEST(Candidate, ReasonKeysNameTheFieldAndTheRule) {
  EXPECT_EQ(outcome(make(4, 8, 1)), "legal");
  EXPECT_EQ(outcome(make(16, 1, 1)), "tp_size does not divide kv_head_num");
  EXPECT_EQ(outcome(make(8, 16, 1)), "world_size is not a multiple of tp*cp*pp");
  EXPECT_EQ(outcome(make(8, 1, 3)), "global_batch_size is not a multiple of micro_batch_size*dp");
  EXPECT_EQ(outcome(make(1, 32, 1)), "pp_size does not divide layer_num");
  EXPECT_EQ(outcome(make(4, 8, 1, {RecomputeKind::kFull, 11})),
            "recompute_layer_num full:N exceeds the layers of "
            "the largest chunk");
}

TEST(Candidate, ReasonKeyDropsNumbersAndExplanations) {
  const common::ConfigError e("s.json", "/megatron_recompute_modules/2",
                              "\"core_attn\" is not supported: SimuMax v1.2 does not model it; remove it");
  EXPECT_EQ(reason_key(e), "megatron_recompute_modules \"core_attn\" is not supported");
  const common::ConfigError ep("s.json", "/ep_size",
                               "ep_size*etp_size*pp_size = 4*1*2 = 8 does not divide world_size "
                               "12, so the expert-data-parallel size is not whole");
  EXPECT_EQ(reason_key(ep), "ep_size*etp_size*pp_size does not divide world_size");
  // Issue #14: the bound of a comparison is part of the rule ("needs pp_size >" read as cut).
  const common::ConfigError vpp("s.json", "/interleaving_size",
                                "2 needs pp_size > 1: virtual stages interleave model chunks over pipeline ranks");
  EXPECT_EQ(reason_key(vpp), "interleaving_size needs pp_size > 1");
}

TEST(Candidate, StrategyCarriesTheSearchedFields) {
  config::Scenario s = llama70b();
  const config::StrategyConfig base = s.strategy;
  Candidate c = make(4, 4, 2, {RecomputeKind::kSelectiveAttn, 0});
  c.vpp = 2, c.zero = 0, c.sp = false;
  apply(c, base, true, kJob, s);
  const auto& st = s.strategy;
  EXPECT_EQ(st.world_size, 64);
  EXPECT_EQ(st.tp_size, 4);
  EXPECT_EQ(st.pp_size, 4);
  EXPECT_EQ(st.dp_size(), 4);
  EXPECT_EQ(st.micro_batch_size, 2);
  EXPECT_EQ(st.micro_batch_num, 64);
  EXPECT_EQ(st.global_batch_size(), 512);
  EXPECT_EQ(st.seq_len, 8192);
  EXPECT_EQ(st.interleaving_size, 2);
  EXPECT_EQ(st.microbatch_group_size_per_vp_stage, 4);  // Megatron's default: pp
  EXPECT_EQ(st.zero_state, 0);
  EXPECT_FALSE(st.enable_sequence_parallel);
  EXPECT_EQ(st.recompute_granularity, config::RecomputeGranularity::kSelective);
  EXPECT_EQ(st.recompute_layer_num, 10);  // 80 layers / pp 4 / vpp 2: every layer of a chunk
  EXPECT_TRUE(st.attn_recompute && st.mla_rms_recompute);
  EXPECT_FALSE(st.mlp_recompute || st.mlp_rms_recompute);
}

TEST(Candidate, UnevenPipelineGivesTheLastStageTheRest) {
  config::Scenario s = llama70b();
  s.model.layer_num = 61;
  const config::StrategyConfig base = s.strategy;
  apply(make(1, 16, 1, {RecomputeKind::kFull, RecomputeChoice::kAllLayers}), base, true, kJob, s);
  EXPECT_FALSE(s.strategy.num_layers_in_first_pipeline_stage.has_value());
  EXPECT_EQ(s.strategy.num_layers_in_last_pipeline_stage, 1);  // 15 stages of ceil(61/16) = 4, then 1
  EXPECT_EQ(s.strategy.recompute_layer_num, 4);
  EXPECT_EQ(max_layers_per_chunk(s.strategy, s.model), 4);
  try {
    apply(make(1, 16, 1), base, false, kJob, s);
    FAIL() << "an uneven split without --uneven-pp on must be refused";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(reason_key(e), "pp_size does not divide layer_num");
  }
}

}  // namespace
}  // namespace simumax::search
