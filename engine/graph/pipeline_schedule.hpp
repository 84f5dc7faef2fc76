// The pipeline schedule as the lowering sees it: the strategy's registered schedule (engine/schedule) and its
// per-rank programs, under the names the graph stage uses.
#pragma once

#include <vector>

#include "engine/config/strategy_config.hpp"
#include "engine/schedule/program.hpp"

namespace simumax::graph {

using schedule::P2p;
using schedule::Program;
using schedule::ScheduleStep;
using schedule::Pass;
using schedule::dualpipe;
using schedule::interleaved_one_f_one_b;
using schedule::one_f_one_b;
using schedule::zb_h1;

// The programs of the strategy's schedule, from its registry entry.
// REQUIRES: config::check_scenario passed.
std::vector<Program> schedule_programs(const config::StrategyConfig& st);
// Whether the schedule splits backwards into B and W (the emitter then builds the split).
bool splits_backward(const std::string& schedule_name);

}  // namespace simumax::graph
