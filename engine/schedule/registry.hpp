// The pipeline schedules a strategy can name ("pipeline_schedule"), each registered once: its name, the chunks a
// rank holds, whether it splits backwards into B and W, the layouts it refuses and its programs. The config
// stage checks a strategy against the entry, the model stage places chunks by it, the graph stage lowers its
// programs (docs/schedules.md, "Adding a schedule").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/schedule/program.hpp"

namespace simumax::schedule {

// Which stages of the model a pipeline rank computes and holds (parameters, gradients, optimizer state).
enum class Placement : uint8_t {
  kOwn,     // stage r of a pp-stage model (with interleaving_size vp: Megatron's virtual stages v * pp + r)
  kMirror,  // stage r (chunk 0) and its mirror, stage pp - 1 - r (chunk 1), of a pp-stage model (DualPipe)
  kVShape,  // stage r (chunk 0) and stage 2pp - 1 - r (chunk 1) of a 2pp-stage model (ZB-V, DualPipeV)
};

// What a schedule's refusal and programs read from the strategy and the model (config::schedule_layout).
struct Layout {
  int64_t pp = 1;
  int64_t vp = 1;               // interleaving_size
  int64_t micro_batches = 1;    // micro_batch_num
  int64_t group = 1;            // microbatch_group_size_per_vp_stage (pp_size when unset)
  int64_t layers = 0;           // the model's layer_num
  int64_t layer_slots = 0;      // layer_num, + 1 each when the embedding / loss count in the pipeline split
  bool custom_end_stages = false;  // num_layers_in_first/last_pipeline_stage set
  bool overlapped_dp = false;      // megatron_overlap_grad_reduce or megatron_overlap_param_gather
  int64_t ep = 1;                  // ep_size
  int64_t experts = 0;             // the model's expert_num (0 without a model)
  bool full_recompute = false;     // recompute_granularity "full_block" with layers to recompute
  bool shared_expert_overlap = false;  // megatron_moe_shared_expert_overlap
};

struct Schedule {
  const char* name;  // the strategy's "pipeline_schedule" value
  Placement placement;
  bool splits_backward;  // programs run B and W (the emitter then builds the split), not whole backwards
  // The error message (after "<file>: /pipeline_schedule: ") when the schedule cannot run `layout`, or "".
  // `legal` lists, quoted, the schedules that can run it.
  std::string (*refusal)(const Layout& layout, const std::string& legal);
  // One program per pipeline rank. REQUIRES: refusal(layout, ...) is empty.
  std::vector<Program> (*programs)(const Layout& layout);
};

// Every registered schedule, in the order messages list them; the first is the default.
const std::vector<const Schedule*>& all();
// REQUIRES: `name` is registered (config checked it); anything else is our fault (std::logic_error).
const Schedule& find(const std::string& name);
std::vector<std::string> names();
// The schedules that can run `layout`, quoted and comma-separated ("\"1f1b\", \"zb-h1\"").
std::string legal(const Layout& layout);
// Why `name` cannot run `layout` (the full message), or "". REQUIRES: `name` is registered.
std::string refusal(const std::string& name, const Layout& layout);

// What every V-shaped schedule (Placement::kVShape) refuses, or "": custom first/last stage layer counts, layers
// that do not split into 2 * pp stages, and overlapped DP (not modelled with them).
std::string v_shape_why(const Layout& layout);
// Why a schedule that does not model overlapped DP communication refuses `layout` (overlapped_dp), or "".
std::string dp_overlap_why(const Layout& layout);

}  // namespace simumax::schedule
