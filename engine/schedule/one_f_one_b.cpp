// Megatron's 1F1B (interleaved with VPP) and ZB-H1, which keeps 1F1B's order with each backward split into B and W.
#include <algorithm>
#include <string>

#include <spdlog/fmt/fmt.h>

#include "engine/schedule/registry.hpp"

namespace simumax::schedule {

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
    const Pass backward = zb_h1 ? Pass::kInputGrad : Pass::kBackward;
    int f = 0, b = 0;
    // After backward b (and its transfers): from the r-th backward on, the oldest deferred W; after the last,
    // every one left. W's run in micro-batch order, so the oldest deferred one is micro-batch `w`.
    int w = 0;
    auto weight_grads = [&] {
      if (!zb_h1) return;
      const bool final = b == mbc - 1;
      if (b < r && !final) return;
      do {
        prog.compute(Pass::kWeightGrad, w++, 0);
      } while (final && w <= b);
    };
    for (int i = 0; i < warmup; ++i, ++f) {
      if (!first) one(recv_prev(f));
      prog.compute(Pass::kForward, f, 0);
      if (!last) one(send_next(f));
    }
    const bool send_first = r % 2 == 1;
    for (int i = 0; i < steady; ++i) {
      if (i == 0 && !first) one(recv_prev(f));
      prog.compute(Pass::kForward, f, 0);
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


namespace {

std::string runs_anywhere(const Layout&, const std::string&) { return ""; }

std::vector<Program> one_f_one_b_programs(const Layout& l) {
  const int pp = static_cast<int>(l.pp), mbc = static_cast<int>(l.micro_batches), vp = static_cast<int>(l.vp);
  if (vp <= 1) return one_f_one_b(pp, mbc);
  return interleaved_one_f_one_b(pp, vp, mbc, static_cast<int>(l.group));
}

std::string zb_h1_refusal(const Layout& l, const std::string&) {
  if (l.vp == 1) return "";
  return fmt::format(
      "\"zb-h1\" with interleaving_size {} is not modelled: ZB-H1 runs one model chunk per pipeline rank; with "
      "interleaving_size {} the legal choice is \"1f1b\" (interleaved 1F1B), or set interleaving_size 1 to use "
      "\"zb-h1\"",
      l.vp, l.vp);
}

std::vector<Program> zb_h1_programs(const Layout& l) {
  return zb_h1(static_cast<int>(l.pp), static_cast<int>(l.micro_batches));
}

}  // namespace

// Megatron's 1F1B, interleaved when interleaving_size > 1 (what SimuMax models); the default.
extern const Schedule kOneFOneB{"1f1b", Placement::kOwn, false, runs_anywhere, one_f_one_b_programs};
extern const Schedule kZbH1{"zb-h1", Placement::kOwn, true, zb_h1_refusal, zb_h1_programs};

}  // namespace simumax::schedule
