// The search's command-line lists, the defaults of each mode, and the enumeration of a space.
#include "engine/search/search_space.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/search/candidate.hpp"
#include "engine/search/search.hpp"

namespace simumax::search {
namespace {

const std::string kSrc = SIMUMAX_SOURCE_DIR;

config::Scenario llama70b() {
  return load_base(kSrc + "/models/llama3-70b.json", kSrc + "/platforms/b200_bf16.json", "", 8192);
}

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const common::UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(SearchSpace, IntListsParseAndTrim) {
  EXPECT_EQ(parse_int_list("--tp", "1,2, 4 ,8"), (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(parse_int_list("--pp", "16"), (std::vector<int64_t>{16}));
}

TEST(SearchSpace, BadIntListsNameTheOption) {
  const std::string expected = "--tp: expected a comma-separated list of positive integers (e.g. 1,2,4,8), got '";
  EXPECT_EQ(usage_error([] { parse_int_list("--tp", ""); }), expected + "'");
  EXPECT_EQ(usage_error([] { parse_int_list("--tp", "1,x"); }), expected + "1,x'");
  EXPECT_EQ(usage_error([] { parse_int_list("--tp", "0,2"); }), expected + "0,2'");
  EXPECT_EQ(usage_error([] { parse_int_list("--pp", "2,2"); }), "--pp: '2,2' lists a value twice");
}

TEST(SearchSpace, RecomputeChoicesExpandSelectiveIntoSimuMaxsThreeFlagSets) {
  const auto r = parse_recompute_list("none,selective,full,full:3,full:*,base");
  std::vector<std::string> names;
  for (const auto& c : r) names.push_back(to_string(c));
  EXPECT_EQ(names, (std::vector<std::string>{"none", "selective:all", "selective:attn", "selective:mlp", "full",
                                             "full:3", "full:*", "base"}));
  EXPECT_EQ(usage_error([] { parse_recompute_list("none,partial"); }),
            "--recompute: unknown choice 'partial'; choose from base, none, selective, selective:all, selective:attn, "
            "selective:mlp, full, full:N, full:*");
  EXPECT_EQ(usage_error([] { parse_recompute_list("full:0"); }).substr(0, 35), "--recompute: unknown choice 'full:0");
}

TEST(SearchSpace, SequenceParallelList) {
  EXPECT_EQ(parse_sp_list("on,off"), (std::vector<bool>{true, false}));
  EXPECT_EQ(usage_error([] { parse_sp_list("yes"); }), "--sp: expected on, off or on,off, got 'yes'");
}

TEST(SearchSpace, GridDefaultsForADenseModel) {
  const SearchSpace s = build_space(SearchMode::kGrid, {}, llama70b(), 64);
  EXPECT_EQ(s.tp, (std::vector<int64_t>{1, 2, 4, 8}));
  EXPECT_EQ(s.pp, (std::vector<int64_t>{1, 2, 4, 8, 16, 32, 64}));  // divisors of 64 up to 80 layers
  EXPECT_EQ(s.cp, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.ep, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.mbs, (std::vector<int64_t>{1, 2, 4}));
  EXPECT_EQ(s.zero, (std::vector<int64_t>{1}));
  EXPECT_EQ(s.sp, (std::vector<bool>{true}));
  EXPECT_EQ(s.recompute, parse_recompute_list("none,selective,full:*"));
}

TEST(SearchSpace, MicroBatchModeKeepsTheBaseLayoutAndTriesEveryMicroBatchSize) {
  config::Scenario base = llama70b();
  base.strategy.tp_size = 8, base.strategy.pp_size = 4;
  SpaceArgs args;
  args.zero = "0,1";
  const SearchSpace s = build_space(SearchMode::kMicroBatch, args, base, 64);
  EXPECT_EQ(s.tp, (std::vector<int64_t>{8}));
  EXPECT_EQ(s.pp, (std::vector<int64_t>{4}));
  EXPECT_TRUE(s.mbs.empty());
  EXPECT_EQ(s.recompute, (std::vector<RecomputeChoice>{{RecomputeKind::kAsBase, 0}}));
  EXPECT_EQ(s.zero, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(usage_error([&] {
              SpaceArgs bad;
              bad.zero = "1,4";
              build_space(SearchMode::kGrid, bad, base, 64);
            }),
            "--zero: expected ZeRO stages from 0, 1, 2, 3 (e.g. 0,1), got '1,4'");
}

TEST(SearchSpace, EnumerationOrderAndFullRecomputeExpansion) {
  const config::Scenario base = llama70b();
  SpaceArgs args;
  args.tp = "4,8", args.pp = "8,16", args.mbs = "1", args.recompute = "none,full:*";
  const SearchSpace s = build_space(SearchMode::kGrid, args, base, 64);
  const auto c = enumerate(s, SearchMode::kGrid, base, {64, 512, 8192});
  // pp 8: 10 layers per stage -> none + full:1..10; pp 16: 5 layers -> none + full:1..5; each for tp 4 and 8.
  ASSERT_EQ(c.size(), 2u * 11 + 2u * 6);
  EXPECT_EQ(label(c[0]), "tp4 pp8 dp2 mbs1 mbc256 none zero1 sp");
  EXPECT_EQ(label(c[10]), "tp4 pp8 dp2 mbs1 mbc256 full:10 zero1 sp");
  EXPECT_EQ(label(c[11]), "tp8 pp8 dp1 mbs1 mbc512 none zero1 sp");
  EXPECT_EQ(label(c.back()), "tp8 pp16 dp0 mbs1 mbc0 full:5 zero1 sp");  // 8*16 > 64 GPUs: illegal, still listed
}

TEST(SearchSpace, SequenceParallelOffIsNotRepeatedWithoutTensorParallelism) {
  const config::Scenario base = llama70b();
  SpaceArgs args;
  args.tp = "1,2", args.pp = "1", args.mbs = "1", args.recompute = "none", args.sp = "on,off";
  const auto c = enumerate(build_space(SearchMode::kGrid, args, base, 64), SearchMode::kGrid, base, {64, 64, 8192});
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(label(c[0]), "tp1 pp1 dp64 mbs1 mbc1 none zero1 sp");
  EXPECT_EQ(label(c[2]), "tp2 pp1 dp32 mbs1 mbc2 none zero1 nosp");
}

TEST(SearchSpace, AutoMicroBatchSizesFollowSimuMaxsFixedBatchRule) {
  config::Scenario base = llama70b();
  base.strategy.pp_size = 2;
  const SearchSpace s = build_space(SearchMode::kMicroBatch, {}, base, 8);  // tp1 pp2 -> dp 4
  std::vector<int64_t> grid_sizes, simumax_sizes;
  for (const auto& c : enumerate(s, SearchMode::kGrid, base, {8, 32, 4096})) grid_sizes.push_back(c.mbs);
  for (const auto& c : enumerate(s, SearchMode::kMicroBatch, base, {8, 32, 4096})) simumax_sizes.push_back(c.mbs);
  EXPECT_EQ(grid_sizes, (std::vector<int64_t>{1, 2, 4, 8}));  // every whole micro-batch count
  EXPECT_EQ(simumax_sizes, (std::vector<int64_t>{1, 2, 4}));  // micro_batch_num >= pp
}

}  // namespace
}  // namespace simumax::search
