// SimuMax's own renderings of a configuration and of quantities: its parallelism and recompute-status strings,
// its parameter counts and its human-readable sizes and times (core/utils.py:HumanReadableSize, "%.4f UNIT").
// What the SimuMax-compatible files and the console summary print.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "engine/config/scenario.hpp"
#include "engine/schedule/pass.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::report {

// StrategyConfig.parallelism: "seq4096.mbs1.mbc8.gbs32 tp1.sp1.cp1.ep1.pp2.dp4.etp1.edp8, world_size:8".
std::string simumax_parallelism(const config::StrategyConfig& st);
// StrategyConfig.recompute_status: "No Recompute", "full_block, recompute_layer_num=2", ...
std::string simumax_recompute_status(const config::StrategyConfig& st);
// SimuMax's recompute_granularity value as its JSON writes it ("full_block", ...); empty for none (null).
std::string simumax_granularity(const config::StrategyConfig& st);
// "bf16" or "fp8".
const char* simumax_dtype(const config::StrategyConfig& st);

// A task's phase as SimuMax's trace ("direction") and memory snapshot name it: "fwd", "bwd" (B, W and B+W) or
// "recompute_fwd"; the step's end (no pass) is "fwd".
const char* simumax_phase(std::optional<schedule::Pass> pass);

// ModelConfig.param_numel / activated_param_numel (the closed forms of base_info.json), with the padded vocab.
double closed_form_param_numel(const config::ModelConfig& m, int64_t padded_vocab, bool activated);

// compute_result's param_numel_info: every stage's chunk, linears and embedding counted over their TP shards,
// experts over EP x ETP (PerfLLM._analysis_single_iter_cost_impl).
struct ParamCounts {
  double dense = 0, moe = 0;
  double all() const { return dense + moe; }
  double activated = 0;  // dense + moe * topk / experts (all for a dense model)
};
ParamCounts param_counts(const config::Scenario& s, const model::StepModel& m);

// "8.03B": SimuMax's f'{n/1e9:.2f}B'.
std::string billions(double n);
// HumanReadableSize strings: bytes with base 1024 and units B..TB ("50.8854 GB"), times in ms with base 1000
// ("5554.6770 ms" stays in ms below 1000, else "5.5547 s"), counts with base 1000 ("12.3456 T").
std::string human_bytes(double bytes);
std::string human_ms(double ms);
std::string human_count(double n);

}  // namespace simumax::report
