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
    std::vector<model::BlockProgram> programs;
    std::vector<BlockMem> per_block;
    std::vector<model::MemStep> fwd, bwd;  // the whole chunk, for chunk-sized tasks
    for (const auto& blk : chunk.blocks) {
      programs.push_back(model::block_program(blk.ops));
      per_block.push_back({model::span_of(programs.back().forward), model::span_of(programs.back().backward)});
      for (int i = 0; i < blk.repeat; ++i) {
        fwd.insert(fwd.end(), programs.back().forward.begin(), programs.back().forward.end());
      }
    }
    for (size_t k = chunk.blocks.size(); k-- > 0;) {
      for (int i = 0; i < chunk.blocks[k].repeat; ++i) {
        bwd.insert(bwd.end(), programs[k].backward.begin(), programs[k].backward.end());
      }
    }
    chunk_mem_.push_back({model::span_of(fwd), model::span_of(bwd)});
    programs_.push_back(std::move(programs));
    block_mem_.push_back(std::move(per_block));
  }
  index_op_refs();
}

void StageEmitter::index_op_refs() {
  for (size_t ci = 0; ci < m_.chunks.size(); ++ci) {
    const auto& blocks = m_.chunks[ci].blocks;
    for (size_t k = 0; k < blocks.size(); ++k) {
      for (size_t o = 0; o < blocks[k].ops.size(); ++o) {
        const model::Op& op = blocks[k].ops[o];
        const OpRef at{static_cast<int32_t>(ci), static_cast<int32_t>(k), static_cast<int32_t>(o)};
        op_where_[&op] = at;
        for (int p = 0; p < model::kNumPasses; ++p) {
          for (size_t i = 0; i < op.comm[p].size(); ++i) {
            OpRef c = at;
            c.work = static_cast<int8_t>(p);
            c.comm = static_cast<int16_t>(i);
            comm_where_[&op.comm[p][i]] = c;
          }
        }
      }
    }
  }
}

uint32_t StageEmitter::op_ref(const model::Op& op, int work) {
  OpRef r = op_where_.at(&op);
  r.work = static_cast<int8_t>(work);
  return b_.op_ref(r);
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
  t.op_ref = b_.op_ref(comm_where_.at(cc.comm));
  b_.append(t);
}

void StageEmitter::op_forward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                              const model::MemStep& mem, Task base) {
  for (const auto& cc : oc.comm[0]) {
    if (cc.comm->before_compute) comm(lanes, cc, base);
  }
  Task t = base;
  t.seconds = oc.seconds[0] * ratio_;
  t.name = b_.name(op.name + ".fwd");
  t.op_ref = op_ref(op, 0);
  t.mem_peak_bytes = std::max(mem.peak, mem.delta);
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  for (const auto& cc : oc.comm[0]) {
    if (!cc.comm->before_compute) comm(lanes, cc, base);
  }
}

void StageEmitter::op_recompute(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                                const model::MemStep& mem, Task base) {
  base.kind = TaskKind::kRecompute;
  base.pass = Pass::kRecompute;
  if (oc.recompute_comm) {
    for (const auto& cc : oc.comm[0]) {
      if (cc.comm->before_compute) comm(lanes, cc, base);
    }
  }
  Task t = base;
  t.seconds = oc.recompute_seconds * ratio_;  // zero for a variance tail: its replay is free
  t.name = b_.name(op.name + ".recompute");
  t.op_ref = op_ref(op, 0);
  t.mem_peak_bytes = std::max(mem.peak, mem.delta);
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  if (oc.recompute_comm) {
    for (const auto& cc : oc.comm[0]) {
      if (!cc.comm->before_compute) comm(lanes, cc, base);
    }
  }
}

void StageEmitter::op_backward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                               const model::MemStep& mem, Task base) {
  const bool has_wgrad = oc.seconds[2] > 0 || !oc.comm[2].empty();
  for (int p = 1; p <= 2; ++p) {
    if (p == 2 && !has_wgrad) break;
    for (const auto& cc : oc.comm[p]) {
      if (cc.comm->before_compute) comm(lanes, cc, base);
    }
    Task t = base;
    t.seconds = oc.seconds[p] * ratio_;
    t.name = b_.name(op.name + (p == 1 ? ".dgrad" : ".wgrad"));
    t.op_ref = op_ref(op, p);
    t.mem_peak_bytes = p == 1 ? mem.peak : 0;
    t.mem_delta_bytes = (p == 2 || !has_wgrad) ? mem.delta : 0;
    compute(lanes, t);
    for (const auto& cc : oc.comm[p]) {
      if (!cc.comm->before_compute) comm(lanes, cc, base);
    }
  }
}

void StageEmitter::forward(int stage, const std::vector<uint32_t>& lanes, int mb, int vchunk) {
  const int ci = m_.compute_chunks[stage][vchunk];
  const int layer0 = m_.first_layer[stage][vchunk];
  const auto& chunk = m_.chunks[ci];
  const auto& cc = c_.chunks[ci];
  Task base;
  base.kind = TaskKind::kCompute;
  base.pass = Pass::kForward;
  base.microbatch = mb;
  base.chunk = vchunk;
  if (options_.granularity == Granularity::kChunk) {
    base.seconds = cc.fwd_seconds * ratio_;
    base.name = b_.name("chunk.fwd");
    base.op_ref = b_.op_ref({ci});
    base.mem_peak_bytes = chunk_mem_[ci].fwd.peak;
    base.mem_delta_bytes = chunk_mem_[ci].fwd.delta;
    compute(lanes, base);
    return;
  }
  for (size_t k = 0; k < chunk.blocks.size(); ++k) {
    const auto& blk = chunk.blocks[k];
    for (int i = 0; i < blk.repeat; ++i) {
      Task t = base;
      t.layer = blk.first_layer < 0 ? -1 : layer0 + blk.first_layer + i;
      if (options_.granularity == Granularity::kLayer) {
        t.seconds = cc.blocks[k].fwd_seconds * ratio_;
        t.name = b_.name(std::string(block_name(blk.kind)) + ".fwd");
        t.op_ref = b_.op_ref({ci, static_cast<int32_t>(k)});
        t.mem_peak_bytes = block_mem_[ci][k].fwd.peak;
        t.mem_delta_bytes = block_mem_[ci][k].fwd.delta;
        compute(lanes, t);
        continue;
      }
      for (const auto& step : programs_[ci][k].forward) {
        op_forward(lanes, blk.ops[step.op], cc.blocks[k].ops[step.op], step, t);
      }
    }
  }
}

void StageEmitter::backward(int stage, const std::vector<uint32_t>& lanes, int mb, int vchunk) {
  const int ci = m_.compute_chunks[stage][vchunk];
  const int layer0 = m_.first_layer[stage][vchunk];
  const auto& chunk = m_.chunks[ci];
  const auto& cc = c_.chunks[ci];
  Task base;
  base.kind = TaskKind::kCompute;
  base.pass = Pass::kBackward;
  base.microbatch = mb;
  base.chunk = vchunk;
  if (options_.granularity == Granularity::kChunk) {
    base.seconds = cc.bwd_seconds * ratio_;
    base.name = b_.name("chunk.bwd");
    base.op_ref = b_.op_ref({ci});
    base.mem_peak_bytes = chunk_mem_[ci].bwd.peak;
    base.mem_delta_bytes = chunk_mem_[ci].bwd.delta;
    compute(lanes, base);
    return;
  }
  for (size_t k = chunk.blocks.size(); k-- > 0;) {
    const auto& blk = chunk.blocks[k];
    for (int i = blk.repeat; i-- > 0;) {
      Task t = base;
      t.layer = blk.first_layer < 0 ? -1 : layer0 + blk.first_layer + i;
      if (options_.granularity == Granularity::kLayer) {
        t.seconds = cc.blocks[k].bwd_seconds * ratio_;
        t.name = b_.name(std::string(block_name(blk.kind)) + ".bwd");
        t.op_ref = b_.op_ref({ci, static_cast<int32_t>(k)});
        t.mem_peak_bytes = block_mem_[ci][k].bwd.peak;
        t.mem_delta_bytes = block_mem_[ci][k].bwd.delta;
        compute(lanes, t);
        continue;
      }
      // Each recompute segment is replayed right before its own backward (Megatron's checkpointed regions).
      for (const auto& step : programs_[ci][k].backward) {
        const auto& op = blk.ops[step.op];
        const auto& oc = cc.blocks[k].ops[step.op];
        if (step.kind == model::StepKind::kRecompute) {
          op_recompute(lanes, op, oc, step, t);
        } else {
          op_backward(lanes, op, oc, step, t);
        }
      }
    }
  }
}

}  // namespace simumax::graph
