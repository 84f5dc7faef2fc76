#include "engine/model/memory_walk.hpp"

#include <algorithm>

namespace simumax::model {

namespace {

// SimuMax's FIRST status (LLMModel.set_first_last_recompute_status, then set_breakpoints): the op opens a
// recompute segment and holds its inputs through the forward. A recomputed op following one that is not is FIRST
// only if the next op is recomputed too: a lone one is overwritten LAST, holds nothing and has its cache
// re-created by the replay. A break point is LAST; the op after it is FIRST; so is the layer's first op. The op
// after a block's last one is taken as not recomputed: no layer ends with a lone recomputed op.
std::vector<bool> segment_firsts(const std::vector<Op>& ops) {
  const size_t n = ops.size();
  auto rec = [&](size_t j) { return j < n && ops[j].recompute; };
  std::vector<bool> first(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (!ops[i].recompute) continue;
    const bool after_break = i > 0 && rec(i - 1) && ops[i - 1].break_point;
    const bool after_plain = i > 0 && !rec(i - 1);
    if (ops[i].recompute_lead_in) {
      // The lead-in leaves are never break points and never alone (this op follows them).
      first[i] = i == 0 || after_break || after_plain;
    } else {
      first[i] = i == 0 || (!ops[i].break_point && (after_break || (after_plain && rec(i + 1))));
    }
  }
  return first;
}

// What op i keeps live from its forward until its backward.
int64_t held_in_forward(const Op& op, bool first) {
  if (!op.recompute) return op.act_cache;
  if (!first) return 0;
  return op.offload_inputs && !op.recompute_lead_in ? 0 : op.act_in_bytes;
}

// What the replay re-creates for op j: its cache, unless it opened the segment holding its own inputs.
int64_t replayed(const Op& op, bool first) {
  return first && !op.recompute_lead_in ? 0 : op.act_cache;
}

}  // namespace

BlockProgram block_program(const std::vector<Op>& ops) {
  BlockProgram p;
  const std::vector<bool> first = segment_firsts(ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    const int64_t held = held_in_forward(ops[i], first[i]);
    // Lead-in leaves take their hold before the op runs; an op's own hold comes after its forward.
    const int64_t before = ops[i].recompute_lead_in ? held : 0;
    p.forward.push_back({static_cast<int>(i), Pass::kForward, before + ops[i].act_fwd_peak, held});
  }
  int i = static_cast<int>(ops.size()) - 1;
  while (i >= 0) {
    if (!ops[i].recompute) {
      p.backward.push_back({i, Pass::kBackward, ops[i].act_bwd_peak, -ops[i].act_cache});
      --i;
      continue;
    }
    // The segment [start, i]: back to its FIRST op, or to the start of the recomputed run when it has none.
    int start = i;
    while (!first[start] && start > 0 && ops[start - 1].recompute) --start;
    for (int j = start; j <= i; ++j) {
      p.backward.push_back({j, Pass::kRecompute, ops[j].act_fwd_peak, replayed(ops[j], first[j])});
    }
    for (int j = i; j >= start; --j) {
      const int64_t held = held_in_forward(ops[j], first[j]) + replayed(ops[j], first[j]);
      p.backward.push_back({j, Pass::kBackward, ops[j].act_bwd_peak, -held});
    }
    i = start - 1;
  }
  return p;
}

SplitBackward split_backward(const std::vector<Op>& ops, const BlockProgram& prog) {
  SplitBackward p;
  for (const MemStep& st : prog.backward) {
    MemStep b = st;
    if (st.kind == Pass::kBackward) {
      const Op& op = ops[static_cast<size_t>(st.op)];
      const int64_t keep = op.wgrad_keep_bytes;
      b.kind = Pass::kInputGrad;
      b.delta += keep;
      if (keep != 0 || op.dense_numel + op.moe_numel != 0) {
        p.weight.push_back({st.op, Pass::kWeightGrad, op.act_bwd_peak, -keep});
      }
    }
    p.input_grad.push_back(b);
  }
  return p;
}

MemSpan span_of(const std::vector<MemStep>& steps, int repeat) {
  MemSpan s;
  int64_t live = 0;
  for (int r = 0; r < repeat; ++r) {
    for (const auto& st : steps) {
      s.peak = std::max(s.peak, live + st.peak);
      live += st.delta;
      s.peak = std::max(s.peak, live);
    }
  }
  s.delta = live;
  return s;
}

MemSpan then(const MemSpan& a, const MemSpan& b) {
  return {std::max({a.peak, a.delta + b.peak, a.delta + b.delta}), a.delta + b.delta};
}

MemSpan repeated(const MemSpan& s, int n) {
  // The peak of the k-th copy is (k - 1) * delta + peak: the last copy when delta grows, the first otherwise.
  const int64_t shift = static_cast<int64_t>(std::max(n - 1, 0)) * s.delta;
  return {std::max({s.peak, shift + s.peak, shift + s.delta}), s.delta * n};
}

}  // namespace simumax::model
