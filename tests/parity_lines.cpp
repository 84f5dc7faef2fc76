#include "tests/parity_lines.hpp"

#include <algorithm>
#include <cctype>
#include <set>

#include "engine/common/logging.hpp"

namespace simumax::tests {

const std::vector<config::GridCase>& grid_lines() {
  static const std::vector<config::GridCase> lines = [] {
    common::set_log_level("error");  // grid line 299's deliberate "all2all-seq" warning is not news here
    return config::load_grid(SIMUMAX_SHARED_DIR "/reference/simumax_grid.jsonl", SIMUMAX_SHARED_DIR);
  }();
  return lines;
}

std::vector<config::GridCase> sim_sample() {
  std::vector<config::GridCase> out;
  std::set<std::string> seen;
  for (const auto& gc : grid_lines()) {
    const auto& st = gc.scenario.strategy;
    const bool dense_base = gc.scenario.model.expert_num == 1 &&
                            st.recompute_granularity == config::RecomputeGranularity::kNone &&
                            st.interleaving_size == 1 && st.cp_size == 1 && !st.fp8;
    if (seen.insert(gc.family).second || dense_base) out.push_back(gc);
  }
  return out;
}

std::string time_difference_reason(const config::GridCase& gc) {
  const auto& st = gc.scenario.strategy;
  // "Recompute charged when it is disabled": SimuMax adds legacy-granularity recompute time even with
  // enable_recompute = false.
  if (!st.enable_recompute && st.recompute_granularity != config::RecomputeGranularity::kNone) {
    return "enable_recompute = false: no recompute (difference 2)";
  }
  return "";
}

std::string memory_difference_reason(const config::GridCase& gc) {
  const auto& st = gc.scenario.strategy;
  if (st.micro_batch_num < st.pp_size) return "mbc < pp: phantom in-flight micro-batches (difference 1)";
  return "";
}

double time_tolerance(const config::GridCase&) { return kExactTolerance; }

double memory_tolerance(const config::GridCase& gc) {
  const auto& st = gc.scenario.strategy;
  return st.fp8 && st.enable_sequence_parallel && st.tp_size > 1 ? kParityTolerance : kExactTolerance;
}

double stage_peak(const report::Summary& s, const std::string& stage_key) {
  double best = 0;
  for (const auto& st : s.stages) {
    if (st.kind + "_stage" == stage_key || "pp_stage_" + std::to_string(st.stage) == stage_key) {
      best = std::max(best, static_cast<double>(st.peak_alloc_bytes));
    }
  }
  return best;
}

std::string test_name(const std::string& id) {
  std::string n = id;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

}  // namespace simumax::tests
