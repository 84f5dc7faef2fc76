// What a strategy search may vary (parallel layout, micro-batch size, recompute, ZeRO, SP), the defaults of each
// search mode, and the command-line syntax of each list.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::search {

enum class SearchMode {
  kGrid,        // every combination of the lists
  kMicroBatch,  // SimuMax's search_max_micro_batch_size_fixed_gbs: every micro-batch size of a fixed layout
  kRecompute,   // the best recompute setting of a fixed layout
};

enum class RecomputeKind : uint8_t {
  kAsBase,         // the base strategy's recompute settings, unchanged
  kNone,           // recompute_granularity null, recompute_layer_num 0
  kSelectiveAll,   // selective_recompute with attn, mla_rms, mlp and mlp_rms recompute on every layer
  kSelectiveAttn,  // selective_recompute with attn and mla_rms recompute on every layer
  kSelectiveMlp,   // selective_recompute with mlp and mlp_rms recompute on every layer
  kFull,           // full_block with recompute_layer_num = layers
};

struct RecomputeChoice {
  RecomputeKind kind = RecomputeKind::kNone;
  // kFull only: the recompute_layer_num; kAllLayers = every layer of a chunk; kEveryCount = one candidate per
  // count from 1 to the layers of a chunk (expanded per layout by the enumeration).
  int64_t layers = 0;
  static constexpr int64_t kAllLayers = 0;
  static constexpr int64_t kEveryCount = -1;
  bool operator==(const RecomputeChoice&) const = default;
};

// Short form used in tables and on the command line: base, none, selective:all, selective:attn, selective:mlp,
// full (every layer), full:N, full:*.
std::string to_string(const RecomputeChoice& r);
const char* to_string(SearchMode m);

struct SearchSpace {
  std::vector<int64_t> tp, cp, pp, ep, etp, vpp;
  std::vector<int64_t> mbs;  // empty: every micro-batch size that gives a whole micro-batch count
  std::vector<RecomputeChoice> recompute;
  std::vector<int64_t> zero;
  std::vector<bool> sp;
  // When pp does not divide layer_num: the last stage takes what is left after ceil(layer_num/pp) layers on
  // every other stage (SimuMax's search; Megatron's --decoder-last-pipeline-num-layers).
  bool uneven_pp = true;
};

// The lists as given on the command line; an unset list takes the mode's default (see default_space).
struct SpaceArgs {
  std::optional<std::string> tp, cp, pp, ep, etp, vpp, mbs, recompute, zero, sp;
  bool uneven_pp = true;
};

// The defaults of each mode, documented in `simumax-sim search --help`:
//   grid: tp = powers of two up to min(8, GPUs per node, world) (MoE: 1, as SimuMax's search); pp = divisors of
//         world_size up to layer_num; cp 1; vpp 1; ep 1 (MoE: powers of two dividing expert_num, up to
//         world_size); etp 1; mbs 1,2,4;
//         recompute none,selective,full:*; zero 1; sp on.
//   micro-batch / recompute: the layout, ZeRO and SP of the base strategy; micro-batch mode tries every
//         micro-batch size (mbs "auto") with the base's recompute ("base"), recompute mode the recompute list
//         none,selective,full:* with the base's micro-batch size.
// Throws common::UsageError for a malformed list, naming the option.
SearchSpace build_space(SearchMode mode, const SpaceArgs& args, const config::Scenario& base, int64_t world_size);

// "1,2,4" -> {1, 2, 4}; each value a positive integer, no duplicates. `option` names the flag in errors.
std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text);
// "none,selective,full:*" (also base, selective:all|attn|mlp, full, full:N).
std::vector<RecomputeChoice> parse_recompute_list(const std::string& text);
// "on,off" -> {true, false}.
std::vector<bool> parse_sp_list(const std::string& text);

}  // namespace simumax::search
