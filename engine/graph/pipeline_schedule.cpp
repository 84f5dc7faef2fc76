#include "engine/graph/pipeline_schedule.hpp"

#include <algorithm>

namespace simumax::graph {

std::vector<std::vector<ScheduleStep>> one_f_one_b(int pp, int mbc) {
  std::vector<std::vector<ScheduleStep>> programs(pp);
  for (int r = 0; r < pp; ++r) {
    auto& prog = programs[r];
    const bool first = r == 0, last = r == pp - 1;
    const int warmup = std::min(pp - r - 1, mbc);
    const int steady = mbc - warmup;
    int f = 0, b = 0;
    auto push = [&](StepKind k, int mb) { prog.push_back(ScheduleStep{k, mb}); };
    for (int i = 0; i < warmup; ++i, ++f) {
      if (!first) push(StepKind::kRecvPrev, f);
      push(StepKind::kForward, f);
      if (!last) push(StepKind::kSendNext, f);
    }
    const bool send_first = r % 2 == 1;
    for (int i = 0; i < steady; ++i) {
      if (i == 0 && !first) push(StepKind::kRecvPrev, f);
      push(StepKind::kForward, f);
      if (!last) {
        if (send_first) {
          push(StepKind::kSendNext, f);
          push(StepKind::kRecvNext, b);
        } else {
          push(StepKind::kRecvNext, b);
          push(StepKind::kSendNext, f);
        }
      }
      ++f;
      push(StepKind::kBackward, b);
      if (!first) {
        if (i == steady - 1) {
          push(StepKind::kSendPrev, b);
        } else if (send_first) {
          push(StepKind::kSendPrev, b);
          push(StepKind::kRecvPrev, f);
        } else {
          push(StepKind::kRecvPrev, f);
          push(StepKind::kSendPrev, b);
        }
      }
      ++b;
    }
    for (int i = 0; i < warmup; ++i, ++b) {
      if (!last) push(StepKind::kRecvNext, b);
      push(StepKind::kBackward, b);
      if (!first) push(StepKind::kSendPrev, b);
    }
  }
  return programs;
}

}  // namespace simumax::graph
