#include "tests/parity_lines.hpp"

#include <algorithm>
#include <cctype>

#include "engine/common/logging.hpp"

namespace simumax::tests {

namespace {

bool is_dense_base(const config::GridCase& gc) {
  const auto& st = gc.scenario.strategy;
  const auto& m = gc.scenario.model;
  return m.expert_num == 1 && st.recompute_granularity == config::RecomputeGranularity::kNone &&
         st.interleaving_size == 1 && st.cp_size == 1 && !st.fp8;
}

}  // namespace

std::vector<config::GridCase> dense_parity_lines() {
  std::vector<config::GridCase> out;
  common::set_log_level("error");  // grid line 299's deliberate "all2all-seq" warning is not news here
  for (auto& gc : config::load_grid(SIMUMAX_SHARED_DIR "/reference/simumax_grid.jsonl", SIMUMAX_SHARED_DIR)) {
    if (is_dense_base(gc)) out.push_back(std::move(gc));
  }
  return out;
}

std::string memory_difference_reason(const config::GridCase& gc) {
  const auto& st = gc.scenario.strategy;
  // docs/simumax-differences.md "Phantom in-flight micro-batches": SimuMax holds pp - r forward caches on
  // stage r even when fewer micro-batches exist; Megatron's 1F1B holds min(pp - r, mbc).
  if (st.micro_batch_num < st.pp_size) return "mbc < pp: phantom in-flight micro-batches";
  return "";
}

double stage_peak(const report::Summary& s, const std::string& stage_key) {
  double best = 0;
  for (const auto& st : s.stages) {
    if (st.kind + "_stage" == stage_key) best = std::max(best, static_cast<double>(st.peak_alloc_bytes));
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
