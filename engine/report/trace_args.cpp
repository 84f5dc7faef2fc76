#include "engine/report/trace_args.hpp"

#include "engine/report/json_text.hpp"

namespace simumax::report::trace {

namespace {

struct Work {
  double flops = 0;
  double bytes = 0;
  int64_t misses = 0;  // kernels whose shape key was not in the efficiency table
};

void add(Work& w, const model::PassWork& pw, bool hit, double times = 1) {
  w.flops += pw.flops * times;
  for (double b : pw.mem_bytes) w.bytes += b * times;
  if (!pw.shape_key.empty() && pw.flops != 0 && !hit) w.misses += 1;
}

// What one copy of a block does in a pass; the backward includes its recompute replays.
Work block_work(const model::Block& blk, const cost::BlockCost& bc, bool backward) {
  Work w;
  for (size_t o = 0; o < blk.ops->size(); ++o) {
    const auto& op = (*blk.ops)[o];
    const auto& oc = bc.ops[o];
    if (!backward) {
      add(w, op.work[0], oc.table_hit[0]);
      continue;
    }
    add(w, op.work[1], oc.table_hit[1]);
    add(w, op.work[2], oc.table_hit[2]);
    if (oc.recompute_seconds > 0) add(w, op.work[0], oc.table_hit[0]);
  }
  return w;
}

// A whole block's or chunk's FLOPs and bytes; table_misses only when some kernel fell back (traces of every
// rank are large, so what is usually zero is left out).
std::string work_text(const Work& w) {
  std::string s = ",\"flops\":";
  append_double(s, w.flops);
  s += ",\"bytes\":";
  append_double(s, w.bytes);
  if (w.misses > 0) {
    s += ",\"table_misses\":";
    append_int(s, w.misses);
  }
  return s;
}

std::string aggregate_text(const RunView& v, const graph::OpRef& r, bool backward) {
  const auto& chunk = v.model.chunks[r.chunk];
  const auto& cc = v.cost.chunks[r.chunk];
  if (r.block >= 0) {
    const auto& blk = chunk.blocks[r.block];
    return work_text(block_work(blk, *cc.blocks[r.block], backward));  // the task's name says which block
  }
  Work total;
  for (size_t k = 0; k < chunk.blocks.size(); ++k) {
    const Work w = block_work(chunk.blocks[k], *cc.blocks[k], backward);
    total.flops += w.flops * chunk.blocks[k].repeat;
    total.bytes += w.bytes * chunk.blocks[k].repeat;
    total.misses += w.misses;
  }
  return ",\"chunk_kind\":\"" + std::string(model::to_string(chunk.stage)) + "\"" + work_text(total);
}

std::string kernel_text(const model::Op& op, const cost::OpCost& oc, int work) {
  const model::PassWork& pw = op.work[work];
  std::string s = ",\"op\":" + quoted(op.name) + ",\"op_type\":\"" + model::to_string(op.type) +
                  "\",\"kernel\":" + quoted(pw.compute_op);
  Work w;
  add(w, pw, oc.table_hit[work]);
  s += ",\"flops\":";
  append_double(s, w.flops);
  s += ",\"bytes\":";
  append_double(s, w.bytes);
  if (!pw.shape_key.empty()) {
    s += ",\"shape_key\":" + quoted(pw.shape_key);
    if (pw.flops != 0) s += oc.table_hit[work] ? ",\"table_hit\":true" : ",\"table_hit\":false";
  }
  return s;
}

std::string comm_text(const model::Op& op, const cost::OpCost& oc, int work, int index) {
  const model::Comm& c = op.comm[work][index];
  std::string s = ",\"op\":" + quoted(op.name) + ",\"collective\":\"" + model::to_string(c.coll) +
                  "\",\"group\":\"" + model::to_string(c.group) + "\",\"bytes\":";
  append_double(s, c.bytes);
  s += ",\"stage\":" + quoted(c.stage);
  for (const auto& cc : oc.comm[work]) {
    if (cc.comm != &c) continue;
    s += ",\"group_size\":";
    append_int(s, cc.group_size);
    s += ",\"net\":" + quoted(cc.net);
  }
  return s;
}

}  // namespace

const model::Op* op_of(const RunView& v, const graph::OpRef& r) {
  if (r.chunk < 0 || r.block < 0 || r.op < 0) return nullptr;
  return &(*v.model.chunks[r.chunk].blocks[r.block].ops)[r.op];
}

ArgsTable make_args_table(const RunView& v) {
  ArgsTable t;
  t.text_.resize(2 * v.graph.op_refs.size());
  for (size_t i = 0; i < v.graph.op_refs.size(); ++i) {
    const graph::OpRef& r = v.graph.op_refs[i];
    const model::Op* op = op_of(v, r);
    if (op == nullptr) {
      t.text_[2 * i] = aggregate_text(v, r, false);
      t.text_[2 * i + 1] = aggregate_text(v, r, true);
      continue;
    }
    const auto& oc = v.cost.chunks[r.chunk].blocks[r.block]->ops[r.op];
    const int work = r.work < 0 ? 0 : r.work;
    t.text_[2 * i] = r.comm < 0 ? kernel_text(*op, oc, work) : comm_text(*op, oc, work, r.comm);
    t.text_[2 * i + 1] = t.text_[2 * i];
  }
  return t;
}

}  // namespace simumax::report::trace
