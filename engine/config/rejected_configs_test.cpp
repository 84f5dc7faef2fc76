// The 27 configurations SimuMax v1.2 refuses (shared/reference/simumax_grid_rejected.jsonl): for each, either
// our check names the field at fault, or the configuration is legal in Megatron and SimuMax refused it only
// because of its own limits, so it must pass.
#include <fstream>

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::Json;

struct RejectedCase {
  int line;             // 0-based line of simumax_grid_rejected.jsonl
  const char* pointer;  // where our error points inside the scenario built from the line; "" = legal
  const char* why;
};

const RejectedCase kRejected[] = {
    {0, "/model/moe_pad_expert_input_to_capacity", "24576 routed rows over 20 local experts, no padding"},
    {1, "/model/moe_pad_expert_input_to_capacity", "the same with serial grouped GEMMs"},
    {2, "", "legal: VPP pp4 mbc6 in Megatron; SimuMax's sync VPP scheduler deadlocks"},
    {3, "", "legal: async VPP; SimuMax's analysis path does not support it"},
    {4, "/strategy/pp_comm_async", "Megatron's rule: sync p2p with VPP needs pp > 2"},
    {5, "", "legal: group 8 in [pp 4, mbc 16]; SimuMax's sync VPP scheduler deadlocks"},
    {6, "/strategy/tp_size", "tp16 does not divide kv_head_num 8"},
    {7, "", "legal: fp8 on b200; SimuMax divides by the table's zero fp8 efficiency (we warn)"},
    {8, "/strategy/megatron_recompute_modules/0", "fp8 with megatron layernorm recompute"},
    {9, "/model/vocab_size", "unpadded vocab 128257 over tp2"},
    {10, "/strategy/cp_comm_type", "all_gather CP is not modelled"},
    {11, "/strategy/tp_size", "MLA with tp2"},
    {12, "/strategy/megatron_recompute_modules/0", "core_attn recompute"},
    {13, "/strategy/pp_size", "pp8 over 3 layers"},
    {14, "/strategy/ep_size", "ep8*pp2 does not divide world 8"},
    {15, "/strategy/pp_size", "pp3 over 2 layers"},
    {16, "/strategy/ep_size", "ep4*pp4 does not divide world 8"},
    {17, "/strategy/interleaving_size", "1 layer per stage, vp4"},
    {18, "/strategy/pp_size", "16 layers over pp3"},
    {19, "/strategy/ep_size", "ep16*pp4 does not divide world 16"},
    {20, "/strategy/ep_size", "ep16*pp3 does not divide world 24"},
    {21, "/strategy/megatron_recompute_modules/0", "moe_act on a dense model"},
    {22, "/strategy/cp_size", "4 heads per TP rank over cp8"},
    {23, "/strategy/ep_size", "ep32*pp2 does not divide world 32"},
    {24, "/strategy/megatron_recompute_modules/0", "moe_act on a dense model (its 2 layers over pp4 also fail)"},
    {25, "/strategy/megatron_recompute_modules/0", "fp8 with megatron layernorm recompute"},
    {26, "/strategy/interleaving_size", "3 layers per stage, vp4"},
};

std::vector<Json> rejected_lines() {
  std::ifstream in(testing::shared("reference/simumax_grid_rejected.jsonl"));
  std::vector<Json> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(Json::parse(line));
  }
  return out;
}

class Rejected : public ::testing::TestWithParam<RejectedCase> {};

TEST_P(Rejected, FieldAtFaultIsNamedOrConfigIsLegal) {
  static const std::vector<Json> lines = rejected_lines();
  ASSERT_EQ(lines.size(), std::size(kRejected));
  const Json& input = lines.at(GetParam().line).at("input");
  SCOPED_TRACE(GetParam().why);
  testing::TempDir dir;
  const std::string path =
      dir.write("line.json", Json{{"model", input.at("model")},
                                  {"strategy", input.at("strategy")},
                                  {"system", testing::shared(input.at("system_file").get<std::string>())}});
  if (std::string(GetParam().pointer).empty()) {
    EXPECT_NO_THROW(load_scenario(path));
    return;
  }
  const auto e = testing::expect_config_error([&] { load_scenario(path); });
  EXPECT_EQ(e.file(), path);
  EXPECT_EQ(e.pointer(), GetParam().pointer) << e.what();
}

INSTANTIATE_TEST_SUITE_P(SimuMaxGrid, Rejected, ::testing::ValuesIn(kRejected),
                         [](const auto& info) { return "line" + std::to_string(info.param.line); });

}  // namespace
}  // namespace simumax::config
