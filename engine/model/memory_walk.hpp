// SimuMax's single-micro-batch activation walk for one block of ops, as a program of memory steps:
// forward ops, then the backward in reverse with each recompute segment replayed just before its backward.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/op.hpp"

namespace simumax::model {

struct MemStep {
  int op = 0;            // index into the block's ops
  // kForward, kRecompute, kBackward (the op's B and W back to back) or, split (zero-bubble schedules), its
  // kInputGrad and, later, its kWeightGrad.
  Pass kind = Pass::kForward;
  int64_t peak = 0;      // transient bytes above the live activations while the step runs
  int64_t delta = 0;     // change of live activations when it ends
};

struct BlockProgram {
  std::vector<MemStep> forward;
  std::vector<MemStep> backward;  // recompute steps interleaved, in execution order
};

// The backward split (zero-bubble schedules): `input_grad` is `backward` step for step (kInputGrad for
// kBackward), and `weight` the weight gradients in the same op order. An op whose weight gradient runs later
// keeps what it needs until then (Op::wgrad_keep_bytes): its B frees that much less and its W frees it.
struct SplitBackward {
  std::vector<MemStep> input_grad;
  std::vector<MemStep> weight;
};
SplitBackward split_backward(const std::vector<Op>& ops, const BlockProgram& p);


// Segments follow SimuMax's recompute statuses: a recomputed op opens one (FIRST) when it is the block's first
// op, follows a break point, or follows an op that is not recomputed and is followed by one that is; a lone
// recomputed op and a break point are not FIRST. A FIRST op holds its inputs (`act_in_bytes`) through the
// forward; the others hold nothing until the replay, which re-creates their caches right before the segment's
// backward. An op with `recompute_lead_in` opens its segment through SimuMax's zero-memory leaves before it:
// they hold `act_in_bytes`, and the replay still re-creates the op's own cache.
BlockProgram block_program(const std::vector<Op>& ops);

// Peak above the live activations at its start, and net change, of a run of steps repeated `repeat` times.
struct MemSpan {
  int64_t peak = 0;
  int64_t delta = 0;
};
MemSpan span_of(const std::vector<MemStep>& steps, int repeat = 1);
// `a` followed by `b`, and `s` run `n` times in a row (n >= 1), without walking the steps again.
MemSpan then(const MemSpan& a, const MemSpan& b);
MemSpan repeated(const MemSpan& s, int n);

}  // namespace simumax::model
