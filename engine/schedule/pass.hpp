// The one vocabulary of passes, in docs/schedules.md's words: F, B, W, the whole backward B+W, and recompute.
// Ops, memory steps, schedule steps and tasks all say which pass they belong to with it.
#pragma once

#include <cstdint>

namespace simumax::schedule {

// What is not a pass is said without an enumerator: a schedule's comm step and a task of the step's end (DP,
// optimizer) hold no pass (std::optional, empty), so a comparison with a pass is false for them, never a
// default that happens to match.
enum class Pass : uint8_t {
  kForward = 0,     // F
  kInputGrad = 1,   // B: the input gradients (dgrad), which the previous pipeline stage waits for
  kWeightGrad = 2,  // W: the weight gradients (wgrad), which nothing in the pipeline waits for
  kBackward = 3,    // B+W: each op's input and weight gradients back to back (1F1B)
  kRecompute = 4,   // F replayed in the backward (activation recomputation)
};

// An op's own work comes in three passes, F, B and W, and its per-pass arrays (Op::work, Op::comm,
// Op::extra_kernel_bytes, cost::OpCost::seconds, graph::OpRef::work) are indexed by them: a recompute replays
// F's work, a whole backward runs B's then W's.
inline constexpr int kNumOpPasses = 3;
// REQUIRES: p is kForward, kInputGrad or kWeightGrad.
constexpr int op_pass_index(Pass p) { return static_cast<int>(p); }
static_assert(op_pass_index(Pass::kForward) == 0 && op_pass_index(Pass::kInputGrad) == 1 &&
              op_pass_index(Pass::kWeightGrad) == 2 && kNumOpPasses == 3);

}  // namespace simumax::schedule
