#include "engine/graph/pipeline_schedule.hpp"

#include <algorithm>
#include <tuple>

namespace simumax::graph {

bool P2p::operator<(const P2p& o) const {
  return std::tie(forward, target, microbatch, sender, receiver) <
         std::tie(o.forward, o.target, o.microbatch, o.sender, o.receiver);
}

bool P2p::operator==(const P2p& o) const {
  return std::tie(forward, target, microbatch, sender, receiver) ==
         std::tie(o.forward, o.target, o.microbatch, o.sender, o.receiver);
}

void Program::comm(std::initializer_list<const P2p*> batch) {
  ScheduleStep s;
  s.kind = StepKind::kComm;
  s.first_comm = static_cast<uint32_t>(comms.size());
  for (const P2p* p : batch) {
    if (p) comms.push_back(*p);
  }
  s.num_comms = static_cast<uint32_t>(comms.size()) - s.first_comm;
  if (s.num_comms > 0) steps.push_back(s);
}

namespace {

// Megatron's 1F1B order and blocking transfers. With `zb_h1`, each backward is B, and stage r runs the W of
// its j-th backward after that backward's transfers once j >= r, the rest after its last backward.
std::vector<Program> blocking_one_f_one_b(int pp, int mbc, bool zb_h1) {
  std::vector<Program> programs(pp);
  for (int r = 0; r < pp; ++r) {
    Program& prog = programs[r];
    const bool first = r == 0, last = r == pp - 1;
    const int warmup = std::min(pp - r - 1, mbc);
    const int steady = mbc - warmup;
    auto send_next = [&](int mb) { return P2p{true, r + 1, mb, r, r + 1}; };
    auto recv_prev = [&](int mb) { return P2p{true, r, mb, r - 1, r}; };
    auto send_prev = [&](int mb) { return P2p{false, r - 1, mb, r, r - 1}; };
    auto recv_next = [&](int mb) { return P2p{false, r, mb, r + 1, r}; };
    auto one = [&](const P2p& p) { prog.comm({&p}); };
    const StepKind backward = zb_h1 ? StepKind::kInputGrad : StepKind::kBackward;
    int f = 0, b = 0;
    // After backward b (and its transfers): from the r-th backward on, the oldest deferred W; after the last,
    // every one left. W's run in micro-batch order, so the oldest deferred one is micro-batch `w`.
    int w = 0;
    auto weight_grads = [&] {
      if (!zb_h1) return;
      const bool final = b == mbc - 1;
      if (b < r && !final) return;
      do {
        prog.compute(StepKind::kWeightGrad, w++, 0);
      } while (final && w <= b);
    };
    for (int i = 0; i < warmup; ++i, ++f) {
      if (!first) one(recv_prev(f));
      prog.compute(StepKind::kForward, f, 0);
      if (!last) one(send_next(f));
    }
    const bool send_first = r % 2 == 1;
    for (int i = 0; i < steady; ++i) {
      if (i == 0 && !first) one(recv_prev(f));
      prog.compute(StepKind::kForward, f, 0);
      if (!last) {
        if (send_first) {
          one(send_next(f));
          one(recv_next(b));
        } else {
          one(recv_next(b));
          one(send_next(f));
        }
      }
      ++f;
      prog.compute(backward, b, 0);
      if (!first) {
        if (i == steady - 1) {
          one(send_prev(b));
        } else if (send_first) {
          one(send_prev(b));
          one(recv_prev(f));
        } else {
          one(recv_prev(f));
          one(send_prev(b));
        }
      }
      weight_grads();
      ++b;
    }
    for (int i = 0; i < warmup; ++i, ++b) {
      if (!last) one(recv_next(b));
      prog.compute(backward, b, 0);
      if (!first) one(send_prev(b));
      weight_grads();
    }
  }
  return programs;
}

}  // namespace

std::vector<Program> one_f_one_b(int pp, int mbc) { return blocking_one_f_one_b(pp, mbc, false); }

std::vector<Program> zb_h1(int pp, int mbc) {
  std::vector<Program> programs = blocking_one_f_one_b(pp, mbc, true);
  for (Program& p : programs) p.async_p2p = true;
  return programs;
}

Program combined_one_f_one_b(int mbc) {
  Program p;
  p.pair(0, 0, -1, 0);
  for (int i = 0; i + 1 < mbc; ++i) p.pair(i + 1, 0, i, 0);
  p.pair(-1, 0, mbc - 1, 0);
  return p;
}

std::vector<Program> schedule_programs(const config::StrategyConfig& st) {
  const int pp = static_cast<int>(st.pp_size), mbc = static_cast<int>(st.micro_batch_num);
  const int vp = static_cast<int>(st.interleaving_size);
  switch (st.pipeline_schedule) {
    case config::PipelineSchedule::kZbH1: return zb_h1(pp, mbc);
    case config::PipelineSchedule::kDualPipe: return dualpipe(pp, mbc);
    case config::PipelineSchedule::kCombined1F1B: return {combined_one_f_one_b(mbc)};
    case config::PipelineSchedule::k1F1B: break;
  }
  if (vp <= 1) return one_f_one_b(pp, mbc);
  return interleaved_one_f_one_b(pp, vp, mbc, static_cast<int>(st.microbatch_group_size_per_vp_stage.value_or(pp)));
}

bool splits_backward(config::PipelineSchedule p) { return p != config::PipelineSchedule::k1F1B; }

}  // namespace simumax::graph
