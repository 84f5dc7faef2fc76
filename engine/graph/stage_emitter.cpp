#include "engine/graph/stage_emitter.hpp"

#include <algorithm>

namespace simumax::graph {

namespace {

TaskKind comm_kind(model::CommGroup g) {
  switch (g) {
    case model::CommGroup::kTp: return TaskKind::kTpComm;
    case model::CommGroup::kCp: return TaskKind::kCpComm;
    default: return TaskKind::kEpComm;
  }
}

CommPattern pattern_of(model::Coll c) {
  switch (c) {
    case model::Coll::kAllToAll: return CommPattern::kAllToAll;
    case model::Coll::kP2p: return CommPattern::kPeer;
    default: return CommPattern::kRing;
  }
}

const char* block_name(model::BlockKind k) {
  switch (k) {
    case model::BlockKind::kEmbedding: return "embedding";
    case model::BlockKind::kHead: return "head";
    default: return "layer";
  }
}

}  // namespace

StageEmitter::StageEmitter(GraphBuilder& b, const config::Scenario& s, const model::StepModel& m,
                           const cost::StepCost& c, const LoweringOptions& o)
    : b_(b), s_(s), m_(m), c_(c), options_(o), ratio_(c.straggler_ratio) {
  for (const auto& chunk : m.chunks) {
    std::vector<BlockMem> per_block;
    BlockMem whole;
    int64_t cum = 0;
    for (const auto& blk : chunk.blocks) {
      per_block.push_back(block_mem(blk));
      for (int i = 0; i < blk.repeat; ++i) {
        whole.fwd.peak = std::max(whole.fwd.peak, cum + per_block.back().fwd.peak);
        cum += per_block.back().fwd.delta;
      }
    }
    whole.fwd.delta = cum;
    // Backward walks the blocks in reverse; peaks are relative to the live memory at the task's start.
    int64_t freed = 0;
    for (size_t k = chunk.blocks.size(); k-- > 0;) {
      for (int i = 0; i < chunk.blocks[k].repeat; ++i) {
        whole.bwd.peak = std::max(whole.bwd.peak, per_block[k].bwd.peak - freed);
        freed -= per_block[k].bwd.delta;
      }
    }
    whole.bwd.delta = -freed;
    block_mem_.push_back(std::move(per_block));
    chunk_mem_.push_back(whole);
  }
}

StageEmitter::BlockMem StageEmitter::block_mem(const model::Block& blk) {
  // SimuMax's single-micro-batch walk: forward holds each op's cache; backward frees it in reverse.
  BlockMem bm;
  int64_t cum = 0;
  for (const auto& op : blk.ops) {
    bm.fwd.peak = std::max(bm.fwd.peak, cum + op.act_fwd_peak);
    cum += op.act_cache;
  }
  bm.fwd.peak = std::max(bm.fwd.peak, cum);
  bm.fwd.delta = cum;
  int64_t freed = 0;
  for (auto it = blk.ops.rbegin(); it != blk.ops.rend(); ++it) {
    bm.bwd.peak = std::max(bm.bwd.peak, it->act_bwd_peak - freed);
    freed += it->act_cache;
  }
  bm.bwd.delta = -freed;
  return bm;
}

void StageEmitter::compute(const std::vector<uint32_t>& lanes, Task t) {
  for (uint32_t r : lanes) {
    t.rank = r;
    t.group = kNoGroup;
    b_.append(t);
  }
}

void StageEmitter::comm(const std::vector<uint32_t>& lanes, const cost::CommCost& cc, Task t) {
  if (cc.seconds == 0) return;
  t.seconds = cc.seconds * ratio_;
  t.latency_seconds = cc.latency_seconds * ratio_;
  t.kind = comm_kind(cc.comm->group);
  t.pattern = pattern_of(cc.comm->coll);
  t.name = b_.name(std::string(model::to_string(cc.comm->group)) + "." + model::to_string(cc.comm->coll) + " " +
                   cc.comm->stage);
  t.group = b_.group(lanes);
  t.rank = lanes.front();
  t.mem_peak_bytes = t.mem_delta_bytes = 0;
  b_.append(t);
}

void StageEmitter::op_forward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                              Task base) {
  for (const auto& cc : oc.comm[0]) {
    if (cc.comm->before_compute) comm(lanes, cc, base);
  }
  Task t = base;
  t.seconds = oc.seconds[0] * ratio_;
  t.name = b_.name(op.name + ".fwd");
  t.mem_peak_bytes = std::max(op.act_fwd_peak, op.act_cache);
  t.mem_delta_bytes = op.act_cache;
  compute(lanes, t);
  for (const auto& cc : oc.comm[0]) {
    if (!cc.comm->before_compute) comm(lanes, cc, base);
  }
}

void StageEmitter::op_recompute(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                                Task base) {
  if (oc.recompute_seconds == 0 && !oc.recompute_comm) return;
  base.kind = TaskKind::kRecompute;
  base.pass = Pass::kRecompute;
  if (oc.recompute_comm) {
    for (const auto& cc : oc.comm[0]) comm(lanes, cc, base);
  }
  Task t = base;
  t.seconds = oc.recompute_seconds * ratio_;
  t.name = b_.name(op.name + ".recompute");
  compute(lanes, t);
}

void StageEmitter::op_backward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                               Task base) {
  const bool has_wgrad = oc.seconds[2] > 0 || !oc.comm[2].empty();
  for (int p = 1; p <= 2; ++p) {
    if (p == 2 && !has_wgrad) break;
    for (const auto& cc : oc.comm[p]) {
      if (cc.comm->before_compute) comm(lanes, cc, base);
    }
    Task t = base;
    t.seconds = oc.seconds[p] * ratio_;
    t.name = b_.name(op.name + (p == 1 ? ".dgrad" : ".wgrad"));
    t.mem_peak_bytes = p == 1 ? op.act_bwd_peak : 0;
    t.mem_delta_bytes = (p == 2 || !has_wgrad) ? -op.act_cache : 0;
    compute(lanes, t);
    for (const auto& cc : oc.comm[p]) {
      if (!cc.comm->before_compute) comm(lanes, cc, base);
    }
  }
}

void StageEmitter::forward(int stage, const std::vector<uint32_t>& lanes, int mb) {
  const int ci = m_.chunk_of_stage[stage];
  const auto& chunk = m_.chunks[ci];
  const auto& cc = c_.chunks[ci];
  Task base;
  base.kind = TaskKind::kCompute;
  base.pass = Pass::kForward;
  base.microbatch = mb;
  base.chunk = 0;
  if (options_.granularity == Granularity::kChunk) {
    base.seconds = cc.fwd_seconds * ratio_;
    base.name = b_.name("chunk.fwd");
    base.mem_peak_bytes = chunk_mem_[ci].fwd.peak;
    base.mem_delta_bytes = chunk_mem_[ci].fwd.delta;
    compute(lanes, base);
    return;
  }
  for (size_t k = 0; k < chunk.blocks.size(); ++k) {
    const auto& blk = chunk.blocks[k];
    for (int i = 0; i < blk.repeat; ++i) {
      Task t = base;
      t.layer = blk.first_layer < 0 ? -1 : blk.first_layer + i;
      if (options_.granularity == Granularity::kLayer) {
        t.seconds = cc.blocks[k].fwd_seconds * ratio_;
        t.name = b_.name(std::string(block_name(blk.kind)) + ".fwd");
        t.mem_peak_bytes = block_mem_[ci][k].fwd.peak;
        t.mem_delta_bytes = block_mem_[ci][k].fwd.delta;
        compute(lanes, t);
        continue;
      }
      for (size_t o = 0; o < blk.ops.size(); ++o) op_forward(lanes, blk.ops[o], cc.blocks[k].ops[o], t);
    }
  }
}

void StageEmitter::backward(int stage, const std::vector<uint32_t>& lanes, int mb) {
  const int ci = m_.chunk_of_stage[stage];
  const auto& chunk = m_.chunks[ci];
  const auto& cc = c_.chunks[ci];
  Task base;
  base.kind = TaskKind::kCompute;
  base.pass = Pass::kBackward;
  base.microbatch = mb;
  base.chunk = 0;
  if (options_.granularity == Granularity::kChunk) {
    base.seconds = cc.bwd_seconds * ratio_;
    base.name = b_.name("chunk.bwd");
    base.mem_peak_bytes = chunk_mem_[ci].bwd.peak;
    base.mem_delta_bytes = chunk_mem_[ci].bwd.delta;
    compute(lanes, base);
    return;
  }
  for (size_t k = chunk.blocks.size(); k-- > 0;) {
    const auto& blk = chunk.blocks[k];
    for (int i = blk.repeat; i-- > 0;) {
      Task t = base;
      t.layer = blk.first_layer < 0 ? -1 : blk.first_layer + i;
      if (options_.granularity == Granularity::kLayer) {
        t.seconds = cc.blocks[k].bwd_seconds * ratio_;
        t.name = b_.name(std::string(block_name(blk.kind)) + ".bwd");
        t.mem_peak_bytes = block_mem_[ci][k].bwd.peak;
        t.mem_delta_bytes = block_mem_[ci][k].bwd.delta;
        compute(lanes, t);
        continue;
      }
      // Megatron replays the recomputed forward of a layer before that layer's backward.
      for (size_t o = 0; o < blk.ops.size(); ++o) op_recompute(lanes, blk.ops[o], cc.blocks[k].ops[o], t);
      for (size_t o = blk.ops.size(); o-- > 0;) op_backward(lanes, blk.ops[o], cc.blocks[k].ops[o], t);
    }
  }
}

}  // namespace simumax::graph
