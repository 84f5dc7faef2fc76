// Op lists shared by the step models of many strategies: a search builds thousands of candidates that differ
// mostly in what no op depends on (pipeline layout, micro-batch count, ZeRO, DP size), so each distinct layer,
// embedding and head is built once and shared.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "engine/config/strategy_config.hpp"
#include "engine/model/chunk.hpp"

namespace simumax::model {

// The strategy as the op builder sees it: `st` with every field that no op reads set to a fixed value.
config::StrategyConfig op_view(const config::StrategyConfig& st);

// One model and system per cache (they are not part of the key); not thread-safe: one cache per thread.
class OpCache {
 public:
  struct Entry {
    std::shared_ptr<const OpList> ops;
    std::shared_ptr<const BlockProgram> program;  // block_program(*ops)
    int64_t rows = 0;  // what the builder returned (the embedding's output rows)
  };
  // What tells the blocks of one strategy apart: kind, recomputed (layers), dense MLP (layers), input rows.
  using BlockKey = std::tuple<BlockKind, bool, bool, int64_t>;

  // The strategy of the blocks looked up next (the one build_step_model is building).
  void select(const config::StrategyConfig& st);
  // The entry of `key` under the selected strategy; `build` makes it on the first request.
  const Entry& get(const BlockKey& key, const std::function<Entry()>& build);

  size_t views() const { return views_.size(); }
  size_t blocks() const { return entries_.size(); }

 private:
  std::vector<config::StrategyConfig> views_;          // distinct op views, index = view id
  std::unordered_multimap<size_t, int> view_of_hash_;  // hash of a view -> candidates among views_
  int current_ = -1;
  std::map<std::tuple<int, BlockKey>, Entry> entries_;
};

}  // namespace simumax::model
