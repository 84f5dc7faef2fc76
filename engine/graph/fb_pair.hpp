// An overlapped forward-backward pair (Megatron's combined 1F1B, docs/overlap.md) as a flat program: ranges of
// the forward's and the backward's block programs in compute-stream order, the EP all-to-alls issued on the
// communication stream, and the compute that waits for them. The stage emitter runs it as op-sized tasks (the task
// DAG does the overlap) or times it in closed form (cost::PairClock) for layer- and chunk-sized tasks.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/model/chunk.hpp"
#include "engine/model/memory_walk.hpp"

namespace simumax::graph {

struct PairItem {
  enum class Kind : uint8_t { kSteps, kIssue, kWait, kUnitEnd };
  Kind kind = Kind::kSteps;
  bool backward = false;  // whose item: the pair's backward (true) or its forward
  int block = 0;          // block index in that side's chunk
  int copy = 0;           // kSteps: which copy of the block, in the forward's order
  const std::vector<model::MemStep>* steps = nullptr;  // kSteps: the block program's steps
  int begin = 0, end = 0;                              // kSteps: [begin, end) of *steps
  bool defer_last = false;  // kSteps: the last step's EP all-to-alls are left to the kIssue that follows
  int op = -1;              // kIssue: the op whose EP all-to-alls of pass `pass` are issued
  int pass = 0;             // kIssue: 0 forward, 1 backward (input gradient)
  int issue = -1;           // kIssue: its index among the pair's issues; kWait: the issue waited for
};

// The program of one pair: the forward of chunk `f` (nullptr: none) and the backward of chunk `b` (nullptr: none),
// whose B and W steps are `b_split` ([block], model::split_backward of each block; the W's run inside the pair as
// Megatron's --delay-wgrad-compute places them). Units (kUnitEnd) are the layer pairs, and the embedding and head
// before and after them. Megatron's order (model_chunk_schedule_plan.py, TransformerModelChunkSchedulePlan.run and
// TransformerLayerSchedulePlan.run): the forward's embedding, the backward's head; then per layer pair
//   compute: [B: to the combine]  F attention  B MLP dgrad  B MLP wgrad  F MLP  B attention dgrad  B attention wgrad
//   comm:     B combine a2a       F dispatch   B dispatch                F combine
// then the layers left to one side, the forward's head and the backward's embedding.
// REQUIRES: b_split parallel to b->blocks when b is set.
std::vector<PairItem> plan_pair(const model::Chunk* f, const model::Chunk* b,
                                const std::vector<model::SplitBackward>* b_split);

}  // namespace simumax::graph
