// ZB-V: Qi, Wan, Huang, Lin, "Zero Bubble Pipeline Parallelism" (ICLR 2024), section 6 (ZB-V, its Figure 8),
// and the authors' code, github.com/sail-sg/zero-bubble-pipeline-parallelism (scheduler/zbv.py, PipelineGraph:
// a greedy that places passes of unit-free costs under a memory limit). Rank r holds stages r and 2pp - 1 - r of
// a model cut into 2pp stages, so the forward runs down the ranks and back up (a "V"), and so does the backward,
// split into B and W. The program here is our own greedy over equal pass times (the paper's T_F = T_B = T_W),
// in the spirit of theirs: forwards fill each rank up to 1F1B's activation memory (2pp chunk forwards in
// flight; fewer with fewer than 2pp - 1 micro-batches, see warm_up_cap), then every rank alternates one backward
// and one forward; a W runs when a forward needs its memory or when it ends before the next pass's input arrives,
// the rest at the end.
#include <algorithm>
#include <array>
#include <deque>
#include <stdexcept>
#include <string>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "engine/schedule/registry.hpp"

namespace simumax::schedule {

namespace {

class VPlanner {
 public:
  VPlanner(int pp, int mbc)
      : pp_(pp), mbc_(mbc), t_(pp, 0), in_flight_(pp, 0), pending_(pp), order_(pp),
        done_(2 * pp * mbc * 2, -1) {
    for (auto& c : count_) c.assign(pp, {0, 0});
  }

  std::vector<Program> run() {
    warm_up();
    for (int round = 0; round < 4 * mbc_ && !finished(); ++round) {
      backwards();
      for (int r = 0; r < pp_; ++r) forward(r);
    }
    if (!finished()) throw std::logic_error("zb-v: the greedy left backwards unplaced");
    for (int r = 0; r < pp_; ++r) {
      while (!pending_[r].empty()) weight(r);
    }
    return programs();
  }

 private:
  enum Dir { kF = 0, kB = 1 };  // the planner's two kinds of pass: forward, input gradient
  struct Step {
    Pass kind;
    int mb, chunk;
  };

  int stage(int r, int c) const { return c == 0 ? r : 2 * pp_ - 1 - r; }
  int& done(Dir p, int mb, int s) { return done_[(static_cast<size_t>(p) * mbc_ + mb) * 2 * pp_ + s]; }
  int done(Dir p, int mb, int s) const { return done_[(static_cast<size_t>(p) * mbc_ + mb) * 2 * pp_ + s]; }
  int next(Dir p, int r, int c) const { return count_[p][r][c]; }
  // When the input of rank r's next pass `p` of chunk c exists (-1: not placed yet; 0 for the first stage).
  int input(Dir p, int r, int c) const {
    const int mb = next(p, r, c), s = stage(r, c);
    if (p == kF) return s == 0 ? 0 : done(kF, mb, s - 1);
    if (done(kF, mb, s) < 0) return -1;
    return s == 2 * pp_ - 1 ? done(kF, mb, s) : done(kB, mb, s + 1);
  }
  bool can(Dir p, int r, int c) const { return next(p, r, c) < mbc_ && input(p, r, c) >= 0; }
  bool finished() const {
    for (int r = 0; r < pp_; ++r) {
      if (next(kB, r, 0) < mbc_ || next(kB, r, 1) < mbc_) return false;
    }
    return true;
  }

  void put(Dir p, int r, int c) {
    const int ready = input(p, r, c), mb = count_[p][r][c]++;
    t_[r] = std::max(t_[r], ready) + 1;
    done(p, mb, stage(r, c)) = t_[r];
    order_[r].push_back({p == kF ? Pass::kForward : Pass::kInputGrad, mb, c});
    if (p == kF) ++in_flight_[r];
    if (p == kB) pending_[r].emplace_back(mb, c);
  }
  void weight(int r) {
    const auto [mb, c] = pending_[r].front();
    pending_[r].pop_front();
    --in_flight_[r];
    ++t_[r];
    order_[r].push_back({Pass::kWeightGrad, mb, c});
  }
  // W's that end before `until`, the time the next pass's input arrives: they cost the rank nothing.
  void fill(int r, int until) {
    while (!pending_[r].empty() && until >= t_[r] + 1) weight(r);
  }

  // How many chunk forwards rank r runs before its first B. From 2pp - 1 micro-batches on, 2pp: with unit passes
  // they fill the 2pp slots before the input of its first B arrives (the loss on rank 0, then back up the V).
  // With d = 2pp - 1 - m fewer micro-batches the chunk-0 forwards run out earlier and the warm-up's last forwards
  // are chunk 1's, whose inputs come back up the V later and later: the last d - r of them would hold up the
  // rank's first B (filling 2pp left 2d unit passes of bubble). They run in the rounds instead, each behind a B,
  // as in the authors' greedy, whose warm-up places a forward only while it ends before the next chunk-1 input
  // arrives (zbv.py, try_v_schedule). With unit costs this gives their makespan: 6m + pp - 1 for m >= pp, and
  // theirs below that too (tests/schedule_v_test.cpp).
  int warm_up_cap(int r) const { return 2 * pp_ - std::max(0, 2 * pp_ - 1 - mbc_ - r); }

  // Each rank runs forwards, its mirror chunk's first when its input is there, up to its warm-up cap.
  void warm_up() {
    for (bool placed = true; placed;) {
      placed = false;
      for (int r = 0; r < pp_; ++r) {
        if (in_flight_[r] >= warm_up_cap(r)) continue;
        int c = -1;
        for (int k : {1, 0}) {
          if (can(kF, r, k) && (c < 0 || std::max(t_[r], input(kF, r, k)) < std::max(t_[r], input(kF, r, c)))) c = k;
        }
        if (c < 0) continue;
        put(kF, r, c);
        placed = true;
      }
    }
  }

  // One backward per rank: chunk 1 (the V's second half, which the loss starts) unless chunk 0 lags behind it
  // and has its input. Chunk 1's backwards run up the ranks and chunk 0's down, so they are placed in that order.
  void backwards() {
    std::vector<int> chunk(pp_, -1);
    for (int r = 0; r < pp_; ++r) {
      const int b1 = next(kB, r, 1), b0 = next(kB, r, 0);
      if (b0 < b1 && (can(kB, r, 0) || b1 >= mbc_)) {
        chunk[r] = 0;
      } else if (b1 < mbc_) {
        chunk[r] = 1;
      }
    }
    for (int r = 0; r < pp_; ++r) {
      if (chunk[r] == 1 && can(kB, r, 1)) fill(r, input(kB, r, 1)), put(kB, r, 1);
    }
    for (int r = pp_ - 1; r >= 0; --r) {
      if (chunk[r] == 0 && can(kB, r, 0)) fill(r, input(kB, r, 0)), put(kB, r, 0);
    }
  }

  // One forward per rank, the mirror chunk's while it lags behind the own chunk's; W's first when the memory of
  // 2pp chunk forwards is in use.
  void forward(int r) {
    int c = -1;
    if (next(kF, r, 1) < next(kF, r, 0) && can(kF, r, 1)) {
      c = 1;
    } else if (can(kF, r, 0)) {
      c = 0;
    }
    if (c < 0) return;
    while (in_flight_[r] >= 2 * pp_ && !pending_[r].empty()) weight(r);
    fill(r, input(kF, r, c));
    put(kF, r, c);
  }

  // The order with its transfers: a forward's activation goes to the next stage's rank (chunk 0 up the ranks,
  // chunk 1 down), a B's gradient to the previous stage's; at the V's tip (rank pp - 1) both stages are local.
  std::vector<Program> programs() const {
    std::vector<Program> out(pp_);
    for (int r = 0; r < pp_; ++r) {
      Program& prog = out[r];
      prog.async_p2p = true;
      for (const Step& s : order_[r]) {
        if (s.kind == Pass::kWeightGrad) {
          prog.compute(s.kind, s.mb, s.chunk);
          continue;
        }
        const bool fwd = s.kind == Pass::kForward;
        // The peer that feeds this pass and the one it feeds, -1 when none or local; chunk 0 flows up the ranks
        // in the forward and down in the backward, chunk 1 the other way.
        const int up = s.chunk == 0 ? r + 1 : r - 1, down = s.chunk == 0 ? r - 1 : r + 1;
        const int from = fwd ? down : up, to = fwd ? up : down;
        const auto link = [&](int sender, int receiver) {
          const int chunk = s.chunk;  // both ends of a hop off the tip compute the same chunk
          return P2p{fwd, chunk * pp_ + receiver, s.mb, sender, receiver};
        };
        if (from >= 0 && from < pp_) {
          const P2p p = link(from, r);
          prog.comm({&p});
        }
        prog.compute(s.kind, s.mb, s.chunk);
        if (to >= 0 && to < pp_) {
          const P2p p = link(r, to);
          prog.comm({&p});
        }
      }
    }
    return out;
  }

  int pp_, mbc_;
  std::vector<int> t_, in_flight_;
  std::vector<std::deque<std::pair<int, int>>> pending_;  // (micro-batch, chunk) of each B whose W is queued
  std::vector<std::vector<Step>> order_;
  std::vector<int> done_;  // [pass][micro-batch][stage] -> end time, -1 while not placed
  std::vector<std::array<int, 2>> count_[2];  // [pass][rank][chunk] -> passes placed
};

// Why ZB-V cannot run this layout, or "". The authors' validate_arguments (megatron/core/zbpp_utils.py) asks for
// pipeline parallelism, layers per pipeline rank that split into two chunks, no virtual pipeline of its own and,
// with the distributed optimizer, no overlapped gradient reduce or parameter gather.
std::string zb_v_why(const Layout& l) {
  if (l.vp > 1) return fmt::format("interleaving_size is {}", l.vp);
  if (l.pp < 2) return fmt::format("pp_size is {}", l.pp);
  return v_shape_why(l);
}

std::string zb_v_refusal(const Layout& l, const std::string& legal) {
  const std::string why = zb_v_why(l);
  if (why.empty()) return why;
  return fmt::format("\"zb-v\" cannot run this layout: {}; ZB-V cuts the model into 2 * pp_size stages and gives "
                     "rank r stages r and 2 * pp_size - 1 - r as its two chunks, so it needs a pp_size of at least 2, "
                     "interleaving_size 1 and a layer_num that 2 * pp_size divides; the legal choices for this "
                     "layout are {}",
                     why, legal);
}

std::vector<Program> zb_v_programs(const Layout& l) {
  return VPlanner(static_cast<int>(l.pp), static_cast<int>(l.micro_batches)).run();
}

}  // namespace

extern const Schedule kZbV{"zb-v", Placement::kVShape, true, zb_v_refusal, zb_v_programs};

}  // namespace simumax::schedule
