// Private to engine/config: the groups of cross-field rules that check_scenario runs, and what they share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::config::detail {

// The scenario under check, and errors located at the field at fault.
class RuleContext {
 public:
  explicit RuleContext(const Scenario& s) : s_(s) {}
  const StrategyConfig& st() const { return s_.strategy; }
  const ModelConfig& md() const { return s_.model; }
  const SystemConfig& sys() const { return s_.system; }
  // How messages name the model config ("llama3-70b.json", or "scenario.json /model" when inline).
  std::string model_name() const { return s_.model_origin.describe(); }
  std::string sys_name() const { return s_.system_origin.describe(); }
  FieldLocation system_field(const std::string& key) const { return s_.system_origin.locate(key); }
  FieldLocation strategy_field(const std::string& key) const { return s_.strategy_origin.locate(key); }

  // ConfigError at strategy field `key` (plus `suffix`, e.g. "/1" for a list item).
  [[noreturn]] void strategy_error(const std::string& key, const std::string& message,
                                   const std::string& suffix = "") const;
  [[noreturn]] void model_error(const std::string& key, const std::string& message) const;
  [[noreturn]] void system_error(const std::string& key, const std::string& message) const;

 private:
  const Scenario& s_;
};

// Divisors of n in ascending order, at most `limit` of them (enough for a "use one of" hint).
std::vector<int64_t> divisors(int64_t n, size_t limit = 16);
// "1, 2, 4, 8"
std::string join(const std::vector<int64_t>& values);

// Group sizes against the world size, sequence split, VPP schedule, strategy feature flags.
void check_parallel_groups(const RuleContext& c);
// Megatron selective recompute and the legacy SimuMax recompute flags.
void check_recompute(const RuleContext& c);
// How the model's heads, FFN, vocabulary and experts split over TP / CP / EP / ETP.
void check_model_split(const RuleContext& c);
// Layers per pipeline stage and per virtual chunk.
void check_layer_split(const RuleContext& c);
// The system config against the strategy: network tiers present, usable fp8 tables.
void check_system_fit(const RuleContext& c);

}  // namespace simumax::config::detail
