// The strategy and model as the pipeline schedules read them (engine/schedule/registry.hpp).
#pragma once

#include "engine/config/model_config.hpp"
#include "engine/config/strategy_config.hpp"
#include "engine/schedule/registry.hpp"

namespace simumax::config {

// The layout a schedule's refusal and programs read. Without `model`, `layers`, `layer_slots` and `experts` are 0 (enough
// for programs, which do not read them).
schedule::Layout schedule_layout(const StrategyConfig& st, const ModelConfig* model = nullptr);

}  // namespace simumax::config
