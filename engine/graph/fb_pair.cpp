#include "engine/graph/fb_pair.hpp"

#include <algorithm>
#include <tuple>

namespace simumax::graph {

namespace {

using Kind = PairItem::Kind;

bool has_ep_all_to_all(const model::Op& op, int pass) {
  return std::any_of(op.comm[pass].begin(), op.comm[pass].end(), [](const model::Comm& c) {
    return c.group == model::CommGroup::kEp && c.coll == model::Coll::kAllToAll;
  });
}

// The block's token dispatch (permutation) and combine (unpermutation) ops, or -1 without EP all-to-alls.
std::pair<int, int> all_to_all_ops(const model::OpList& ops) {
  int dispatch = -1, combine = -1;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!has_ep_all_to_all(ops[i], 0) || !has_ep_all_to_all(ops[i], 1)) continue;
    if (ops[i].type == model::OpType::kPermutation) dispatch = static_cast<int>(i);
    if (ops[i].type == model::OpType::kUnpermutation) combine = static_cast<int>(i);
  }
  return dispatch >= 0 && combine > dispatch ? std::pair{dispatch, combine} : std::pair{-1, -1};
}

// Where op `op`'s step of `kind` sits in `steps` (its pass, not a recompute replay).
int position(const std::vector<model::MemStep>& steps, int op, schedule::Pass kind) {
  for (size_t s = 0; s < steps.size(); ++s) {
    if (steps[s].op == op && steps[s].kind == kind) return static_cast<int>(s);
  }
  return -1;
}

// Where a layer's program is cut (positions of the last step of each part, inclusive). The forward: attention
// through the permutation kernel (first) | the experts through the unpermutation kernel (second) | the rest. The
// backward's input gradients: through the unpermutation's (first) | through the permutation's (second) | the
// rest; a dense layer: nothing | its MLP | its attention. `weight`: the MLP's run of weight gradients.
struct Cuts {
  int first = -1, second = -1;
  bool a2a = false;
  int dispatch = -1, combine = -1;
  std::pair<int, int> weight{0, 0};
};

Cuts cuts(const model::Block& blk, const std::vector<model::MemStep>* fwd, const model::SplitBackward* sp) {
  const model::OpList& ops = *blk.ops;
  Cuts c;
  std::tie(c.dispatch, c.combine) = all_to_all_ops(ops);
  int lo = static_cast<int>(ops.size()), hi = static_cast<int>(ops.size()) - 1;  // the MLP's ops [lo, hi]
  if (c.dispatch >= 0) {
    lo = c.dispatch + 1, hi = c.combine;
  } else {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (ops[i].name.rfind("mlp.", 0) == 0) {
        lo = static_cast<int>(i);
        break;
      }
    }
  }
  const auto in_mlp = [&](const model::MemStep& st) { return st.op >= lo && st.op <= hi; };
  if (fwd) {
    const int n = static_cast<int>(fwd->size());
    c.first = static_cast<int>(std::find_if(fwd->begin(), fwd->end(), in_mlp) - fwd->begin()) - 1;
    c.second = c.dispatch >= 0 ? position(*fwd, c.combine, schedule::Pass::kForward) : n - 1;
    c.a2a = c.dispatch >= 0 && c.first >= 0 && c.second > c.first;
    if (c.dispatch >= 0 && !c.a2a) c.first = n - 1, c.second = n - 1;
    return c;
  }
  const auto& in = sp->input_grad;
  const int n = static_cast<int>(in.size());
  if (c.dispatch >= 0) {
    c.first = position(in, c.combine, schedule::Pass::kInputGrad);
    c.second = position(in, c.dispatch, schedule::Pass::kInputGrad);
    c.a2a = c.first >= 0 && c.second > c.first;
  }
  if (!c.a2a) {
    // Through the last input gradient of an MLP op (backward order: the MLP's come first).
    c.first = -1, c.second = -1;
    for (int s = 0; s < n; ++s) {
      if (in[static_cast<size_t>(s)].kind != schedule::Pass::kRecompute && in_mlp(in[static_cast<size_t>(s)])) {
        c.second = s;
      }
    }
    if (c.dispatch >= 0) c.second = n - 1;  // all-to-alls whose order we cannot place: one part, serial
  }
  const auto& w = sp->weight;
  c.weight.first = static_cast<int>(std::find_if(w.begin(), w.end(), in_mlp) - w.begin());
  c.weight.second = static_cast<int>(std::find_if_not(w.begin() + c.weight.first, w.end(), in_mlp) - w.begin());
  return c;
}

class Planner {
 public:
  Planner(const model::Chunk* f, const model::Chunk* b, const std::vector<model::SplitBackward>* split)
      : f_(f), b_(b), split_(split) {}

  std::vector<PairItem> run() {
    std::vector<std::pair<int, int>> fl, bl;  // (block, copy) of each layer, in each side's order
    if (f_) layers(*f_, false, fl);
    if (b_) layers(*b_, true, bl);
    if (f_) whole_blocks(false, model::BlockKind::kEmbedding);
    if (b_) whole_blocks(true, model::BlockKind::kHead);
    unit();
    const size_t n = std::max(fl.size(), bl.size());
    for (size_t i = 0; i < n; ++i) {
      layer_pair(i < fl.size() ? &fl[i] : nullptr, i < bl.size() ? &bl[i] : nullptr);
      unit();
    }
    if (f_) whole_blocks(false, model::BlockKind::kHead);
    if (b_) whole_blocks(true, model::BlockKind::kEmbedding);
    // What follows the pair needs the forward's output.
    if (f_pending_ >= 0) wait(f_pending_), f_pending_ = -1;
    unit();
    return std::move(items_);
  }

 private:
  static void layers(const model::Chunk& c, bool backward, std::vector<std::pair<int, int>>& out) {
    const int n = static_cast<int>(c.blocks.size());
    for (int j = 0; j < n; ++j) {
      const int k = backward ? n - 1 - j : j;
      const auto& blk = c.blocks[static_cast<size_t>(k)];
      if (blk.kind != model::BlockKind::kLayer) continue;
      for (int r = 0; r < blk.repeat; ++r) out.emplace_back(k, backward ? blk.repeat - 1 - r : r);
    }
  }

  void steps(bool backward, int block, int copy, const std::vector<model::MemStep>& list, int begin, int end,
             bool defer = false) {
    if (begin >= end) return;
    PairItem it;
    it.backward = backward;
    it.block = block;
    it.copy = copy;
    it.steps = &list;
    it.begin = begin;
    it.end = end;
    it.defer_last = defer;
    items_.push_back(it);
  }
  int issue(bool backward, int block, int op, int pass) {
    PairItem it;
    it.kind = Kind::kIssue;
    it.backward = backward;
    it.block = block;
    it.op = op;
    it.pass = pass;
    it.issue = issues_++;
    items_.push_back(it);
    return it.issue;
  }
  void wait(int id) {
    PairItem it;
    it.kind = Kind::kWait;
    it.issue = id;
    items_.push_back(it);
  }
  void unit() {
    if (!items_.empty() && items_.back().kind != Kind::kUnitEnd) items_.push_back({Kind::kUnitEnd});
  }

  // The embedding or head blocks of one side, each pass whole (a backward's W right after its B).
  void whole_blocks(bool backward, model::BlockKind kind) {
    const model::Chunk& c = backward ? *b_ : *f_;
    for (size_t k = 0; k < c.blocks.size(); ++k) {
      if (c.blocks[k].kind != kind) continue;
      const int bk = static_cast<int>(k);
      for (int r = 0; r < c.blocks[k].repeat; ++r) {
        if (!backward) {
          if (f_pending_ >= 0) wait(f_pending_), f_pending_ = -1;
          const auto& fwd = c.blocks[k].program->forward;
          steps(false, bk, r, fwd, 0, static_cast<int>(fwd.size()));
          continue;
        }
        const auto& sp = (*split_)[k];
        steps(true, bk, r, sp.input_grad, 0, static_cast<int>(sp.input_grad.size()));
        steps(true, bk, r, sp.weight, 0, static_cast<int>(sp.weight.size()));
      }
    }
  }

  void layer_pair(const std::pair<int, int>* f, const std::pair<int, int>* b);

  const model::Chunk* f_;
  const model::Chunk* b_;
  const std::vector<model::SplitBackward>* split_;
  std::vector<PairItem> items_;
  int issues_ = 0;
  int f_pending_ = -1;  // the forward's last combine, which its next compute needs
};

void Planner::layer_pair(const std::pair<int, int>* f, const std::pair<int, int>* b) {
  // The forward's cuts: attention through the permutation kernel | dispatch | experts through the unpermutation
  // kernel | combine; the backward's: through the unpermutation's input gradient | combine | experts through the
  // permutation's | dispatch | the rest (router, shared experts, attention).
  const model::Block* fb = f ? &f_->blocks[static_cast<size_t>(f->first)] : nullptr;
  const model::Block* bb = b ? &b_->blocks[static_cast<size_t>(b->first)] : nullptr;
  // A dense layer has no all-to-all, but the same attention and MLP nodes (fine_grained_callables.py): its MLP
  // is the ops from the first "mlp." one on.
  const Cuts fcut = fb ? cuts(*fb, &fb->program->forward, nullptr) : Cuts{};
  const model::SplitBackward* sp = bb ? &(*split_)[static_cast<size_t>(b->first)] : nullptr;
  const Cuts bcut = bb ? cuts(*bb, nullptr, sp) : Cuts{};
  const auto* fwd = fb ? &fb->program->forward : nullptr;
  const int fn = fwd ? static_cast<int>(fwd->size()) : 0, bn = sp ? static_cast<int>(sp->input_grad.size()) : 0;
  const int fd = fcut.first, fc = fcut.second, bc = bcut.first, bd = bcut.second;
  const bool f_a2a = fcut.a2a, b_a2a = bcut.a2a;
  const std::pair<int, int> wm = bcut.weight;  // the MLP's weight gradients in sp->weight
  int cb = -1, df = -1, db = -1;
  if (b) {
    steps(true, b->first, b->second, sp->input_grad, 0, bc + 1, b_a2a);
    if (b_a2a) cb = issue(true, b->first, bcut.combine, 1);
  }
  if (f) {
    if (f_pending_ >= 0) wait(f_pending_), f_pending_ = -1;
    steps(false, f->first, f->second, *fwd, 0, fd + 1, f_a2a);
    if (f_a2a) df = issue(false, f->first, fcut.dispatch, 0);
  }
  if (b) {
    if (cb >= 0) wait(cb);
    steps(true, b->first, b->second, sp->input_grad, bc + 1, bd + 1, b_a2a);
    if (b_a2a) db = issue(true, b->first, bcut.dispatch, 1);
    // The MLP's weight gradients (the experts', after the permutation: a contiguous run of the reversed op
    // order) run beside the dispatch backward.
    steps(true, b->first, b->second, sp->weight, wm.first, wm.second);
  }
  if (f) {
    if (df >= 0) wait(df);
    steps(false, f->first, f->second, *fwd, fd + 1, fc + 1, f_a2a);
    if (f_a2a) {
      f_pending_ = issue(false, f->first, fcut.combine, 0);
      if (fc + 1 < fn) {
        wait(f_pending_), f_pending_ = -1;
        steps(false, f->first, f->second, *fwd, fc + 1, fn);
      }
    }
  }
  if (b) {
    if (db >= 0) wait(db);
    steps(true, b->first, b->second, sp->input_grad, bd + 1, bn);
    steps(true, b->first, b->second, sp->weight, 0, wm.first);
    steps(true, b->first, b->second, sp->weight, wm.second, static_cast<int>(sp->weight.size()));
  }
}

}  // namespace

std::vector<PairItem> plan_pair(const model::Chunk* f, const model::Chunk* b,
                                const std::vector<model::SplitBackward>* b_split) {
  return Planner(f, b, b_split).run();
}

}  // namespace simumax::graph
