#include "engine/graph/pipeline_schedule.hpp"

#include "engine/config/schedule_layout.hpp"
#include "engine/schedule/registry.hpp"

namespace simumax::graph {

std::vector<Program> schedule_programs(const config::StrategyConfig& st) {
  return schedule::find(st.pipeline_schedule).programs(config::schedule_layout(st));
}

bool splits_backward(const std::string& schedule_name) { return schedule::find(schedule_name).splits_backward; }

}  // namespace simumax::graph
