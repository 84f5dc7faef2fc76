#include "engine/model/memory_walk.hpp"

#include <algorithm>

namespace simumax::model {

namespace {

std::vector<bool> segment_starts(const std::vector<Op>& ops) {
  std::vector<bool> first(ops.size(), false);
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!ops[i].recompute) continue;
    first[i] = i == 0 || !ops[i - 1].recompute || ops[i - 1].break_point;
  }
  return first;
}

// What op i keeps live from its forward until its backward.
int64_t held_in_forward(const Op& op, bool first) {
  if (!op.recompute) return op.act_cache;
  return first && !op.offload_inputs && !op.cached_inputs ? op.act_in_bytes : 0;
}

}  // namespace

BlockProgram block_program(const std::vector<Op>& ops) {
  BlockProgram p;
  const std::vector<bool> first = segment_starts(ops);
  for (size_t i = 0; i < ops.size(); ++i) {
    p.forward.push_back({static_cast<int>(i), StepKind::kForward, ops[i].act_fwd_peak, held_in_forward(ops[i], first[i])});
  }
  int i = static_cast<int>(ops.size()) - 1;
  while (i >= 0) {
    if (!ops[i].recompute) {
      p.backward.push_back({i, StepKind::kBackward, ops[i].act_bwd_peak, -ops[i].act_cache});
      --i;
      continue;
    }
    int start = i;
    while (!first[start]) --start;  // the segment [start, i]
    for (int j = start; j <= i; ++j) {
      // The replay re-creates every cache of the segment except the FIRST op's, whose input is held.
      p.backward.push_back({j, StepKind::kRecompute, ops[j].act_fwd_peak, j == start ? 0 : ops[j].act_cache});
    }
    for (int j = i; j >= start; --j) {
      const int64_t held = j == start ? held_in_forward(ops[j], true) : ops[j].act_cache;
      p.backward.push_back({j, StepKind::kBackward, ops[j].act_bwd_peak, -held});
    }
    i = start - 1;
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
