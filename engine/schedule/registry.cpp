#include "engine/schedule/registry.hpp"

#include <stdexcept>

#include <spdlog/fmt/fmt.h>

namespace simumax::schedule {

// The registry: one line per schedule, in the order messages list them (the first is the default). Each names
// the `const Schedule` its file defines in namespace simumax::schedule.
#define SIMUMAX_SCHEDULES(X) \
  X(kOneFOneB)               \
  X(kZbH1)                   \
  X(kZbV)                    \
  X(kDualPipe)               \
  X(kDualPipeV)              \
  X(kCombined1F1B)

#define SIMUMAX_DECLARE_SCHEDULE(s) extern const Schedule s;
SIMUMAX_SCHEDULES(SIMUMAX_DECLARE_SCHEDULE)
#undef SIMUMAX_DECLARE_SCHEDULE

const std::vector<const Schedule*>& all() {
#define SIMUMAX_LIST_SCHEDULE(s) &s,
  static const std::vector<const Schedule*> kAll = {SIMUMAX_SCHEDULES(SIMUMAX_LIST_SCHEDULE)};
#undef SIMUMAX_LIST_SCHEDULE
  return kAll;
}

const Schedule& find(const std::string& name) {
  for (const Schedule* s : all()) {
    if (name == s->name) return *s;
  }
  throw std::logic_error("pipeline schedule \"" + name + "\" is not registered");
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const Schedule* s : all()) out.emplace_back(s->name);
  return out;
}

std::string legal(const Layout& layout) {
  std::vector<std::string> out;
  for (const Schedule* s : all()) {
    if (s->refusal(layout, "").empty()) out.push_back(fmt::format("\"{}\"", s->name));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

std::string refusal(const std::string& name, const Layout& layout) {
  const Schedule& s = find(name);
  const std::string why = s.refusal(layout, "");
  return why.empty() ? why : s.refusal(layout, legal(layout));
}

std::string v_shape_why(const Layout& l) {
  if (l.custom_end_stages) return "num_layers_in_first_pipeline_stage or num_layers_in_last_pipeline_stage is set";
  if (l.layer_slots % (2 * l.pp) != 0) {
    const std::string counted =
        l.layer_slots == l.layers ? "" : fmt::format(" (+{} for embedding/loss)", l.layer_slots - l.layers);
    return fmt::format("layer_num {}{} does not split into 2 * pp_size = {} stages", l.layers, counted, 2 * l.pp);
  }
  return dp_overlap_why(l);
}

std::string dp_overlap_why(const Layout& l) {
  if (!l.overlapped_dp) return "";
  return "megatron_overlap_grad_reduce or megatron_overlap_param_gather is on, which is not modelled with it";
}

}  // namespace simumax::schedule
