#include "engine/graph/stage_emitter.hpp"

#include <algorithm>

#include "engine/cost/host_cost.hpp"

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

int block_index(model::BlockKind k) {
  switch (k) {
    case model::BlockKind::kEmbedding: return 0;
    case model::BlockKind::kHead: return 2;
    default: return 1;
  }
}

}  // namespace

StageEmitter::StageEmitter(GraphBuilder& b, const config::Scenario& s, const model::StepModel& m,
                           const cost::StepCost& c, const LoweringOptions& o)
    : b_(b), s_(s), m_(m), c_(c), options_(o), ratio_(c.straggler_ratio), shares_(cost::sm_shares(s, c.nets)),
      contention_(b.num_ranks(), contention_on(s.strategy, shares_)) {
  for (const auto& chunk : m.chunks) {
    std::vector<BlockMem> per_block;
    BlockMem whole;  // the chunk's blocks in order (forward) and in reverse (backward), for chunk-sized tasks
    for (const auto& blk : chunk.blocks) {
      per_block.push_back({model::span_of(blk.program->forward), model::span_of(blk.program->backward), {}, {}});
      whole.fwd = model::then(whole.fwd, model::repeated(per_block.back().fwd, blk.repeat));
    }
    for (size_t k = chunk.blocks.size(); k-- > 0;) {
      whole.bwd = model::then(whole.bwd, model::repeated(per_block[k].bwd, chunk.blocks[k].repeat));
    }
    chunk_mem_.push_back(whole);
    std::vector<std::pair<int64_t, int64_t>> params;
    for (const auto& blk : chunk.blocks) {
      int64_t dense = 0, moe = 0;
      for (const auto& op : *blk.ops) dense += op.dense_numel, moe += op.moe_numel;
      params.emplace_back(dense, moe);
    }
    block_params_.push_back(std::move(params));
    block_mem_.push_back(std::move(per_block));
  }
  track_params_ = s.strategy.overlaps_dp();
  grads_ready_.resize(b.num_ranks());
  params_used_.resize(b.num_ranks());
  // Task -> op references serve the traces of op-sized tasks; coarser tasks refer to blocks and chunks.
  if (o.granularity == Granularity::kOp) index_op_refs();
  intern_names(schedule::Pass::kForward);
  intern_names(schedule::Pass::kBackward);
  plan_overlap();
  if (cost::host_lane(s)) {
    b.enable_host_lane();
    const char* const what[5] = {"host.fwd", "host.bwd_input", "host.bwd_weight", "host.bwd", "host.recompute"};
    for (int p = 0; p < 5; ++p) host_names_[p] = b.name(what[p]);
  }
}

void StageEmitter::issue(const std::vector<uint32_t>& lanes, double seconds, const Task& base) {
  if (!b_.host_lane() || !(seconds > 0)) return;
  Task h = base;
  h.seconds = seconds;
  h.latency_seconds = 0;
  h.name = host_names_[static_cast<int>(base.pass.value_or(schedule::Pass::kForward))];
  for (uint32_t r : lanes) b_.issue(r, h);
}

void StageEmitter::host_sync(const std::vector<uint32_t>& lanes, bool sync) {
  if (!sync) return;
  for (uint32_t r : lanes) b_.host_waits(r);
}

void StageEmitter::p2p_launches(const std::vector<uint32_t>& lanes, uint32_t transfers, bool forward) {
  Task t;
  t.pass = forward ? schedule::Pass::kForward : schedule::Pass::kBackward;
  issue(lanes, cost::launch_seconds(s_.system, transfers), t);
}

void StageEmitter::p2p_sync(const std::vector<uint32_t>& lanes) { host_sync(lanes, true); }

std::pair<double, bool> StageEmitter::step_host(const cost::OpCost& oc, const model::MemStep& st) {
  switch (st.kind) {
    case schedule::Pass::kForward: return {oc.host_seconds[0], oc.host_sync[0]};
    case schedule::Pass::kRecompute:
      return oc.recompute_seconds > 0 ? std::pair{oc.host_seconds[0], oc.host_sync[0]} : std::pair{0.0, false};
    case schedule::Pass::kBackward:
      return {oc.host_seconds[1] + oc.host_seconds[2], oc.host_sync[1] || oc.host_sync[2]};
    case schedule::Pass::kInputGrad: return {oc.host_seconds[1], oc.host_sync[1]};
    case schedule::Pass::kWeightGrad: return {oc.host_seconds[2], oc.host_sync[2]};
  }
  return {0.0, false};
}

std::pair<double, bool> StageEmitter::pass_host(const cost::HostTime& h, schedule::Pass kind) {
  switch (kind) {
    case schedule::Pass::kForward: return {h.fwd, h.sync_fwd};
    case schedule::Pass::kInputGrad: return {h.bwd - h.wgrad, h.sync_bwd};
    case schedule::Pass::kWeightGrad: return {h.wgrad, false};
    default: return {h.bwd, h.sync_bwd};
  }
}

void StageEmitter::intern_names(schedule::Pass pass) {
  const char* const suffix = pass == schedule::Pass::kForward     ? ".fwd"
                             : pass == schedule::Pass::kBackward  ? ".bwd"
                             : pass == schedule::Pass::kInputGrad ? ".bwd_input"
                                                               : ".bwd_weight";
  const char* const what[4] = {"chunk", "embedding", "layer", "head"};
  for (int w = 0; w < 4; ++w) names_[names_row(pass)][w] = b_.name(std::string(what[w]) + suffix);
}

void StageEmitter::split_backward() {
  // Only schedules that split the backward pay for it: names, step lists and memory spans of B and W.
  intern_names(schedule::Pass::kInputGrad);
  intern_names(schedule::Pass::kWeightGrad);
  split_.resize(m_.chunks.size());
  for (size_t ci = 0; ci < m_.chunks.size(); ++ci) {
    const auto& blocks = m_.chunks[ci].blocks;
    BlockMem& whole = chunk_mem_[ci];
    split_[ci].resize(blocks.size());
    for (size_t k = blocks.size(); k-- > 0;) {
      split_[ci][k] = model::split_backward(*blocks[k].ops, *blocks[k].program);
      BlockMem& bm = block_mem_[ci][k];
      bm.input = model::span_of(split_[ci][k].input_grad);
      bm.weight = model::span_of(split_[ci][k].weight);
      whole.input = model::then(whole.input, model::repeated(bm.input, blocks[k].repeat));
      whole.weight = model::then(whole.weight, model::repeated(bm.weight, blocks[k].repeat));
    }
  }
}

void StageEmitter::index_op_refs() {
  // Chunks share op lists (model::Block::ops), so an op's place is looked up within its chunk.
  op_where_.resize(m_.chunks.size());
  comm_where_.resize(m_.chunks.size());
  for (size_t ci = 0; ci < m_.chunks.size(); ++ci) {
    const auto& blocks = m_.chunks[ci].blocks;
    for (size_t k = 0; k < blocks.size(); ++k) {
      for (size_t o = 0; o < blocks[k].ops->size(); ++o) {
        const model::Op& op = (*blocks[k].ops)[o];
        const OpRef at{static_cast<int32_t>(ci), static_cast<int32_t>(k), static_cast<int32_t>(o)};
        op_where_[ci][&op] = at;
        for (int p = 0; p < schedule::kNumOpPasses; ++p) {
          for (size_t i = 0; i < op.comm[p].size(); ++i) {
            OpRef c = at;
            c.work = static_cast<int8_t>(p);
            c.comm = static_cast<int16_t>(i);
            comm_where_[ci][&op.comm[p][i]] = c;
          }
        }
      }
    }
  }
}

uint32_t StageEmitter::op_ref(const model::Op& op, int work) {
  OpRef r = op_where_[chunk_now_].at(&op);
  r.work = static_cast<int8_t>(work);
  return b_.op_ref(r);
}

void StageEmitter::note_params(const std::vector<uint32_t>& lanes, bool forward, int mb, int64_t dense,
                               int64_t moe) {
  if (!track_params_ || (dense == 0 && moe == 0)) return;
  if (forward ? mb != 0 : mb != s_.strategy.micro_batch_num - 1) return;
  // The lanes' tasks were the last ones appended, one per lane.
  const auto first = static_cast<uint32_t>(b_.size() - lanes.size());
  for (size_t l = 0; l < lanes.size(); ++l) {
    (forward ? params_used_ : grads_ready_)[lanes[l]].push_back({first + static_cast<uint32_t>(l), dense, moe});
  }
}

void StageEmitter::append_compute(const std::vector<uint32_t>& lanes, Task t) {
  t.seconds = contention_.run(lanes, t.seconds);
  if (pair_clock_) t.seconds = pair_clock_->compute(t.seconds);
  for (uint32_t r : lanes) {
    t.rank = r;
    t.group = kNoGroup;
    b_.append(t);
  }
}

Task StageEmitter::comm_task(const std::vector<uint32_t>& lanes, const cost::CommCost& cc, Task t) {
  t.seconds = cc.seconds * ratio_;
  t.latency_seconds = cc.latency_seconds * ratio_;
  t.kind = comm_kind(cc.comm->group);
  t.pattern = pattern_of(cc.comm->coll);
  t.name = b_.name(std::string(model::to_string(cc.comm->group)) + "." + model::to_string(cc.comm->coll) + " " +
                   cc.comm->stage);
  t.group = b_.group(lanes);
  t.rank = lanes.front();
  t.mem_peak_bytes = t.mem_delta_bytes = 0;
  t.op_ref = b_.op_ref(comm_where_[chunk_now_].at(cc.comm));
  return t;
}

uint32_t StageEmitter::comm(const std::vector<uint32_t>& lanes, const cost::CommCost& cc, Task t, uint8_t stream) {
  if (cc.seconds == 0) return kNoGroup;
  t = comm_task(lanes, cc, t);
  if (overlapped_tp(cc)) stream = kTpStream;
  if (stream == kComputeStream) {
    t.seconds = contention_.run(lanes, t.seconds);
    if (pair_clock_) t.seconds = pair_clock_->compute(t.seconds);
    return b_.append(t);
  }
  // tp-comm-overlap: the collective starts with its kernel on the TP stream, and what follows the kernel waits
  // for both; shared-expert overlap: the all-to-all runs on the EP stream beside the shared experts.
  t.stream = stream;
  const uint32_t id = b_.append(t);
  for (uint32_t r : lanes) b_.after_current(r, id);
  contention_.issue(lanes, stream, t.seconds, stream == kTpStream ? shares_.tp : shares_.ep);
  if (stream == kTpStream) {
    for (uint32_t r : lanes) pending_tp_.emplace_back(r, id);
  }
  return id;
}

bool StageEmitter::overlapped_tp(const cost::CommCost& cc) const {
  return s_.strategy.megatron_tp_comm_overlap && cc.comm->group == model::CommGroup::kTp;
}

void StageEmitter::compute(const std::vector<uint32_t>& lanes, Task t) {
  append_compute(lanes, t);
  if (pending_tp_.empty()) return;
  for (const auto& [r, id] : pending_tp_) b_.also_wait(r, id);
  pending_tp_.clear();
  contention_.joined(lanes, kTpStream);
}

void StageEmitter::op_forward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                              const model::MemStep& mem, Task base) {
  issue(lanes, oc.host_seconds[0], base);
  comms_before(lanes, oc.comm[0], base);
  Task t = base;
  t.seconds = oc.seconds[0] * ratio_;
  t.name = b_.name(op.name + ".fwd");
  t.op_ref = op_ref(op, 0);
  t.mem_peak_bytes = std::max(mem.peak, mem.delta);
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  note_params(lanes, true, base.microbatch, op.dense_numel, op.moe_numel);
  comms_after(lanes, oc.comm[0], base, mem);
  host_sync(lanes, oc.host_sync[0]);
}

void StageEmitter::op_recompute(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                                const model::MemStep& mem, Task base) {
  base.kind = TaskKind::kRecompute;
  base.pass = schedule::Pass::kRecompute;
  const auto [host, sync] = step_host(oc, mem);
  issue(lanes, host, base);
  if (oc.recompute_comm) comms_before(lanes, oc.comm[0], base);
  Task t = base;
  t.seconds = oc.recompute_seconds * ratio_;  // zero for a variance tail: its replay is free
  t.name = b_.name(op.name + ".recompute");
  t.op_ref = op_ref(op, 0);
  t.mem_peak_bytes = std::max(mem.peak, mem.delta);
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  if (oc.recompute_comm) comms_after(lanes, oc.comm[0], base, mem);
  host_sync(lanes, sync);
}

void StageEmitter::op_backward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                               const model::MemStep& mem, Task base) {
  const bool has_wgrad = oc.seconds[2] > 0 || !oc.comm[2].empty();
  // B alone (kInputGrad) runs the weight gradient's collectives (the gathered input it keeps) but leaves its
  // kernel, and what it keeps (mem.delta), to a kWeightGrad step.
  const bool whole = mem.kind == schedule::Pass::kBackward;
  for (int p = 1; p <= 2; ++p) {
    if (p == 2 && !has_wgrad) break;
    if (p == 1 || whole) issue(lanes, oc.host_seconds[p], base);
    comms_before(lanes, oc.comm[p], base);
    if (p == 1 || whole) {
      Task t = base;
      t.seconds = oc.seconds[p] * ratio_;
      t.name = b_.name(op.name + (p == 1 ? ".dgrad" : ".wgrad"));
      t.op_ref = op_ref(op, p);
      t.mem_peak_bytes = p == 1 ? mem.peak : 0;
      t.mem_delta_bytes = (p == 2 || !has_wgrad || !whole) ? mem.delta : 0;
      compute(lanes, t);
      if (p == 2 || !has_wgrad) note_params(lanes, false, base.microbatch, op.dense_numel, op.moe_numel);
    }
    comms_after(lanes, oc.comm[p], base, mem, p == 1);
    host_sync(lanes, (p == 1 || whole) && oc.host_sync[p]);
  }
}

void StageEmitter::op_weight_grad(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                                  const model::MemStep& mem, Task base) {
  const bool has_wgrad = oc.seconds[2] > 0 || !oc.comm[2].empty();
  if (!has_wgrad && mem.delta == 0) return;  // its B noted its parameters and freed all it held
  issue(lanes, oc.host_seconds[2], base);
  Task t = base;
  t.seconds = oc.seconds[2] * ratio_;
  t.name = b_.name(op.name + ".wgrad");
  t.op_ref = op_ref(op, 2);
  t.mem_peak_bytes = mem.peak;
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  if (has_wgrad) note_params(lanes, false, base.microbatch, op.dense_numel, op.moe_numel);
}

void StageEmitter::coarse(const std::vector<uint32_t>& lanes, Task t, double seconds, uint32_t name, OpRef ref,
                          const model::MemSpan& mem, std::pair<int64_t, int64_t> params,
                          std::pair<double, bool> host) {
  issue(lanes, host.first, t);
  t.seconds = seconds * ratio_;
  t.name = name;
  t.op_ref = b_.op_ref(ref);
  t.mem_peak_bytes = mem.peak;
  t.mem_delta_bytes = mem.delta;
  compute(lanes, t);
  note_params(lanes, t.pass == schedule::Pass::kForward, t.microbatch, params.first, params.second);
  host_sync(lanes, host.second);
}

const model::MemSpan& StageEmitter::BlockMem::of(schedule::Pass kind) const {
  switch (kind) {
    case schedule::Pass::kForward: return fwd;
    case schedule::Pass::kInputGrad: return input;
    case schedule::Pass::kWeightGrad: return weight;
    default: return bwd;
  }
}

Task StageEmitter::compute_task(schedule::Pass pass, int mb, int vchunk) {
  Task t;
  t.kind = TaskKind::kCompute;
  t.pass = pass;
  t.microbatch = mb;
  t.chunk = vchunk;
  return t;
}

bool StageEmitter::per_layer(bool forward, int mb) const {
  if (options_.granularity == Granularity::kLayer) return true;
  if (options_.granularity != Granularity::kChunk || !track_params_) return false;
  return forward ? mb == 0 : mb == s_.strategy.micro_batch_num - 1;
}

void StageEmitter::pass(schedule::Pass kind, int stage, const std::vector<uint32_t>& lanes, int mb, int vchunk) {
  const int ci = m_.compute_chunks[stage][vchunk];
  chunk_now_ = ci;
  const int layer0 = m_.first_layer[stage][vchunk];
  const auto& chunk = m_.chunks[ci];
  const bool fwd = kind == schedule::Pass::kForward;
  if ((kind == schedule::Pass::kInputGrad || kind == schedule::Pass::kWeightGrad) && split_.empty()) split_backward();
  const uint32_t* names = names_[names_row(kind)];
  const Task base = compute_task(fwd ? schedule::Pass::kForward : schedule::Pass::kBackward, mb, vchunk);
  // A chunk's or a layer's B leaves its parameters' gradients to its W.
  const auto params = [kind](std::pair<int64_t, int64_t> p) {
    return kind == schedule::Pass::kInputGrad ? std::pair<int64_t, int64_t>{0, 0} : p;
  };
  if (options_.granularity == Granularity::kChunk && !per_layer(fwd, mb)) {
    const cost::ChunkCost& cc = c_.chunks[ci];
    const double seconds = fwd                             ? cc.fwd_seconds
                           : kind == schedule::Pass::kBackward   ? cc.bwd_seconds
                           : kind == schedule::Pass::kInputGrad  ? cc.bwd_seconds - cc.wgrad_seconds
                                                           : cc.wgrad_seconds;
    coarse(lanes, base, seconds, names[0], OpRef{ci}, chunk_mem_[ci].of(kind),
           params({chunk.params.dense_numel, chunk.params.moe_numel}), pass_host(cc.host, kind));
    return;
  }
  // The forward runs the blocks and their layers in order, the backward (B, W) in reverse.
  const size_t n = chunk.blocks.size();
  for (size_t j = 0; j < n; ++j) {
    const size_t k = fwd ? j : n - 1 - j;
    const auto& blk = chunk.blocks[k];
    for (int r = 0; r < blk.repeat; ++r) {
      Task t = base;
      t.layer = blk.first_layer < 0 ? -1 : layer0 + blk.first_layer + (fwd ? r : blk.repeat - 1 - r);
      if (options_.granularity != Granularity::kOp) {
        coarse(lanes, t, block_seconds(ci, k, kind), names[1 + block_index(blk.kind)],
               OpRef{ci, static_cast<int32_t>(k)}, block_mem_[ci][k].of(kind), params(block_params_[ci][k]),
               pass_host(c_.chunks[ci].blocks[k]->host, kind));
        continue;
      }
      emit_block(lanes, ci, k, kind, t);
    }
  }
}

}  // namespace simumax::graph
