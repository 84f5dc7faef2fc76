// The stage emitter's overlapped F&B pairs (Megatron's combined 1F1B, docs/overlap.md; fb_pair.hpp): op-sized
// tasks with the EP all-to-alls on the EP stream, or layer- and chunk-sized tasks timed by cost::PairClock.
#include <algorithm>
#include <string>

#include "engine/graph/stage_emitter.hpp"

namespace simumax::graph {

namespace {

const char* block_word(model::BlockKind k) {
  switch (k) {
    case model::BlockKind::kEmbedding: return "embedding";
    case model::BlockKind::kHead: return "head";
    default: return "layer";
  }
}

}  // namespace

void StageEmitter::pair(int stage, const std::vector<uint32_t>& lanes, int f_mb, int f_vchunk, int b_mb,
                        int b_vchunk) {
  if (split_.empty()) split_backward();
  PairSide side[2];
  const int mb[2] = {f_mb, b_mb}, vchunk[2] = {f_vchunk, b_vchunk};
  for (int s = 0; s < 2; ++s) {
    if (mb[s] < 0) continue;
    side[s].present = true;
    side[s].ci = m_.compute_chunks[stage][vchunk[s]];
    side[s].layer0 = m_.first_layer[stage][vchunk[s]];
    side[s].base = compute_task(s == 0 ? schedule::Pass::kForward : schedule::Pass::kBackward, mb[s], vchunk[s]);
  }
  // Without EP all-to-alls on either side nothing overlaps: F then B, as the serial passes emit them.
  if (!has_all_to_all(side[0]) && !has_all_to_all(side[1])) {
    if (side[0].present) pass(schedule::Pass::kForward, stage, lanes, f_mb, f_vchunk);
    if (side[1].present) pass(schedule::Pass::kBackward, stage, lanes, b_mb, b_vchunk);
    return;
  }
  const auto items = plan_pair(side[0].present ? &m_.chunks[side[0].ci] : nullptr,
                               side[1].present ? &m_.chunks[side[1].ci] : nullptr,
                               side[1].present ? &split_[side[1].ci] : nullptr);
  if (options_.granularity == Granularity::kOp) {
    pair_ops(lanes, side, items);
  } else {
    pair_coarse(lanes, side, items);
  }
}

bool StageEmitter::has_all_to_all(const PairSide& side) const {
  if (!side.present) return false;
  for (const auto& bc : c_.chunks[side.ci].blocks) {
    for (const auto& oc : bc->ops) {
      if (std::any_of(oc.comm[0].begin(), oc.comm[0].end(), cost::is_ep_all_to_all)) return true;
    }
  }
  return false;
}

void StageEmitter::pair_ops(const std::vector<uint32_t>& lanes, const PairSide (&side)[2],
                            const std::vector<PairItem>& items) {
  cost::PairClock clock(shares_.ep);
  pair_clock_ = &clock;
  std::vector<std::vector<std::pair<uint32_t, size_t>>> issued;  // per issue: (task, clock id) of each all-to-all
  for (const PairItem& it : items) {
    const PairSide& sd = side[it.backward ? 1 : 0];
    if (it.kind == PairItem::Kind::kSteps) {
      chunk_now_ = sd.ci;
      const model::Block& blk = m_.chunks[sd.ci].blocks[static_cast<size_t>(it.block)];
      now_ = BlockNow{&blk, c_.chunks[sd.ci].blocks[static_cast<size_t>(it.block)].get(), nullptr, it.steps};
      Task t = sd.base;
      t.layer = blk.first_layer < 0 ? -1 : sd.layer0 + blk.first_layer + it.copy;
      for (int s = it.begin; s < it.end; ++s) {
        defer_ep_ = it.defer_last && s == it.end - 1;
        emit_step(lanes, (*it.steps)[static_cast<size_t>(s)], t);
      }
      defer_ep_ = false;
    } else if (it.kind == PairItem::Kind::kIssue) {
      // combined_1f1b: the all-to-all runs on the communication stream once its producer is done.
      chunk_now_ = sd.ci;
      const cost::OpCost& oc = c_.chunks[sd.ci].blocks[static_cast<size_t>(it.block)]->ops[static_cast<size_t>(it.op)];
      auto& ids = issued.emplace_back();
      for (const auto& cc : oc.comm[it.pass]) {
        if (!cost::is_ep_all_to_all(cc) || cc.seconds == 0) continue;
        Task t = comm_task(lanes, cc, sd.base);
        t.stream = kEpStream;
        const uint32_t id = b_.append(t);
        for (uint32_t r : lanes) b_.after_current(r, id);
        ids.emplace_back(id, clock.issue(t.seconds));
      }
    } else if (it.kind == PairItem::Kind::kWait) {
      for (const auto& [id, at] : issued[static_cast<size_t>(it.issue)]) {
        for (uint32_t r : lanes) b_.also_wait(r, id);
        clock.wait(at);
      }
    }
  }
  pair_clock_ = nullptr;
}

double StageEmitter::step_seconds(const cost::OpCost& oc, const model::MemStep& st, bool defer) const {
  // As op_forward, op_recompute, op_backward and op_weight_grad emit them: collectives serial on the compute
  // stream, tp-comm-overlap's beside their kernel.
  const auto pass = [&](double kernel, const std::vector<cost::CommCost>& comms, bool skip_ep) {
    double tp = 0, other = 0;
    for (const auto& cc : comms) {
      if (skip_ep && cost::is_ep_all_to_all(cc)) continue;
      (overlapped_tp(cc) ? tp : other) += cc.seconds;
    }
    return std::max(kernel, tp) + other;
  };
  const bool has_wgrad = oc.seconds[2] > 0 || !oc.comm[2].empty();
  switch (st.kind) {
    case schedule::Pass::kForward: return pass(oc.seconds[0], oc.comm[0], defer);
    case schedule::Pass::kRecompute:
      return oc.recompute_comm ? pass(oc.recompute_seconds, oc.comm[0], false) : oc.recompute_seconds;
    case schedule::Pass::kBackward:
      return pass(oc.seconds[1], oc.comm[1], defer) + (has_wgrad ? pass(oc.seconds[2], oc.comm[2], false) : 0.0);
    case schedule::Pass::kInputGrad:
      return pass(oc.seconds[1], oc.comm[1], defer) + (has_wgrad ? pass(0.0, oc.comm[2], false) : 0.0);
    case schedule::Pass::kWeightGrad: return (!has_wgrad && st.delta == 0) ? 0.0 : oc.seconds[2];
  }
  return 0;
}

void StageEmitter::PairUnit::add(int side, int block_index, int copy_index, std::pair<int64_t, int64_t> p) {
  auto& seen_side = seen[side];
  if (std::find(seen_side.begin(), seen_side.end(), std::pair{block_index, copy_index}) != seen_side.end()) return;
  seen_side.emplace_back(block_index, copy_index);
  if (block[side] < 0) block[side] = block_index, copy[side] = copy_index;
  params[side].first += p.first;
  params[side].second += p.second;
}

void StageEmitter::pair_coarse(const std::vector<uint32_t>& lanes, const PairSide (&side)[2],
                               const std::vector<PairItem>& items) {
  cost::PairClock clock(shares_.ep);
  std::vector<std::vector<size_t>> issued;
  const bool layer_sized = (side[0].present && per_layer(true, side[0].base.microbatch)) ||
                           (side[1].present && per_layer(false, side[1].base.microbatch));
  double emitted = 0;  // the clock's time already in tasks
  // A unit ends a task only while compute follows it: the pair's trailing wait for the forward's last combine
  // (plan_pair: what follows the pair needs its output) belongs to the last unit's task, not to no task.
  size_t last_steps = 0;
  for (size_t i = 0; i < items.size(); ++i) {
    if (items[i].kind == PairItem::Kind::kSteps) last_steps = i;
  }
  PairUnit unit;
  for (size_t i = 0; i < items.size(); ++i) {
    const PairItem& it = items[i];
    const PairSide& sd = side[it.backward ? 1 : 0];
    if (it.kind == PairItem::Kind::kSteps) {
      const cost::BlockCost& bc = *c_.chunks[sd.ci].blocks[static_cast<size_t>(it.block)];
      double seconds = 0;
      for (int k = it.begin; k < it.end; ++k) {
        const model::MemStep& st = (*it.steps)[static_cast<size_t>(k)];
        seconds += step_seconds(bc.ops[static_cast<size_t>(st.op)], st, it.defer_last && k == it.end - 1);
        const auto [host, sync] = step_host(bc.ops[static_cast<size_t>(st.op)], st);
        unit.host += host;
        unit.sync = unit.sync || sync;
      }
      clock.compute(seconds * ratio_);
      const std::vector<model::MemStep> range(it.steps->begin() + it.begin, it.steps->begin() + it.end);
      unit.mem = model::then(unit.mem, model::span_of(range));
      unit.add(it.backward ? 1 : 0, it.block, it.copy, block_params_[sd.ci][static_cast<size_t>(it.block)]);
    } else if (it.kind == PairItem::Kind::kIssue) {
      const auto& oc = c_.chunks[sd.ci].blocks[static_cast<size_t>(it.block)]->ops[static_cast<size_t>(it.op)];
      auto& ids = issued.emplace_back();
      for (const auto& cc : oc.comm[it.pass]) {
        if (cost::is_ep_all_to_all(cc) && cc.seconds > 0) ids.push_back(clock.issue(cc.seconds * ratio_));
      }
    } else if (it.kind == PairItem::Kind::kWait) {
      for (size_t id : issued[static_cast<size_t>(it.issue)]) clock.wait(id);
    }
    const bool last = i + 1 == items.size();
    if (!(last || (layer_sized && it.kind == PairItem::Kind::kUnitEnd && i < last_steps))) continue;
    if (unit.block[0] < 0 && unit.block[1] < 0) continue;
    // The unit's task lasts until the next can start on the compute stream; the last one until both streams
    // are done.
    const double until = last ? clock.end() : clock.frontier();
    pair_unit_task(lanes, side, unit, until - emitted, layer_sized);
    emitted = until;
    unit = PairUnit{};
  }
}

void StageEmitter::pair_unit_task(const std::vector<uint32_t>& lanes, const PairSide (&side)[2],
                                  const PairUnit& unit, double seconds, bool layer_sized) {
  const int w = unit.block[1] >= 0 ? 1 : 0;  // named after the backward's block when it has one
  const PairSide& named = side[w];
  const model::Block& blk = m_.chunks[named.ci].blocks[static_cast<size_t>(unit.block[w])];
  Task t = named.base;
  const char* what = layer_sized ? block_word(blk.kind) : "chunk";
  const char* pass = unit.block[0] >= 0 && unit.block[1] >= 0 ? ".fwd_bwd" : unit.block[1] >= 0 ? ".bwd" : ".fwd";
  t.name = b_.name(std::string(what) + pass);
  t.layer = layer_sized && blk.first_layer >= 0 ? named.layer0 + blk.first_layer + unit.copy[w] : -1;
  t.op_ref = b_.op_ref(layer_sized ? OpRef{named.ci, unit.block[w]} : OpRef{named.ci});
  t.seconds = seconds;
  t.mem_peak_bytes = unit.mem.peak;
  t.mem_delta_bytes = unit.mem.delta;
  issue(lanes, unit.host, t);
  compute(lanes, t);
  for (int k = 0; k < 2; ++k) {
    if (unit.block[k] >= 0) {
      note_params(lanes, k == 0, side[k].base.microbatch, unit.params[k].first, unit.params[k].second);
    }
  }
  host_sync(lanes, unit.sync);
}

}  // namespace simumax::graph
