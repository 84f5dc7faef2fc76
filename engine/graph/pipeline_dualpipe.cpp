// DualPipe's programs (DeepSeek-V3 technical report, section 3.2.1; github.com/deepseek-ai/DualPipe, DualPipe.step):
// two micro-batch streams fed from both ends of the pipeline, each rank holding two mirrored stages.
#include <deque>
#include <utility>

#include "engine/graph/pipeline_schedule.hpp"

namespace simumax::graph {

namespace {

// One rank's program. A phase is the rank's view of a direction: phase 0 is the direction in which the rank is
// in the first half of the pipeline (the forward one on ranks below pp / 2, the reverse one above), so every rank
// runs the same eight-part schedule with its half-rank `h` (distance from the nearer end). Direction d's
// micro-batch k is global micro-batch d * n + k, computed in chunk d (0: the rank's own stage, 1: its mirror).
// Transfers are batched as DualPipe batches them: what a compute sends and what the next compute receives are
// posted together when that next compute begins, and it waits for all of them (batch_isend_irecv + wait).
class DualRank {
 public:
  DualRank(int r, int pp, int mbc, Program& prog)
      : r_(r), pp_(pp), n_(mbc / 2), second_(r >= pp / 2), prog_(prog) {}

  void run() {
    const int half = pp_ / 2, h = std::min(r_, pp_ - 1 - r_);
    const bool middle = h == half - 1;
    // 1. nF0: the phase-0 forwards that fill the pipeline up to this rank.
    for (int i = 0; i < 2 * (half - h - 1); ++i) forward(0);
    // 2. nF0F1: alternating, the phase-1 stream starting.
    recv_forward(0);
    for (int i = 0; i <= h; ++i) {
      forward(0, false, middle);
      recv_forward(0);
      forward(1, true, !middle || i < h);
      if (!middle) send_forward(0);
    }
    // 3. nB1W1F1: the first phase-1 backwards, each W right after (zero bubble).
    for (int i = 0; i < half - h - 1; ++i) {
      backward(1, true);
      recv_forward(1);
      weight();
      forward(1, false);
    }
    // 4. The main part, nF0B1F1B0: a forward of one phase with a backward of the other (F&B).
    for (int i = 0; i < n_ - pp_ + h + 1; ++i) {
      if (i == 0 && middle) {
        // DualPipe does not overlap this pair on the middle ranks, to shorten the bubble.
        forward(0, false, false);
        send_forward(1);
        backward(1, false, true, false);
        send_forward(0);
        send_backward(1);
      } else {
        forward_backward(0, 1, i > 0);
      }
      forward_backward(1, 0);
    }
    // 5. nB1F1B0.
    for (int i = 0; i < half - h - 1; ++i) {
      backward(1);
      forward_backward(1, 0);
    }
    // 6. nB1B0: the second half of these backwards defer their W's.
    bool zb = false;
    for (int i = 0; i <= h; ++i) {
      if (i == (h + 1) / 2 && h % 2 == 1) zb = true;
      backward(1, zb);
      if (i == (h + 1) / 2 && h % 2 == 0) zb = true;
      backward(0, zb);
    }
    // 7. nWB0 and 8. nW: the deferred W's fill the drain.
    for (int i = 0; i < half - h - 1; ++i) {
      weight();
      backward(0, true);
    }
    for (int i = 0; i <= h; ++i) weight();
    commit();
  }

 private:
  int direction(int phase) const { return phase ^ (second_ ? 1 : 0); }
  // The rank's position along direction d, and its neighbours there.
  int position(int d) const { return d == 0 ? r_ : pp_ - 1 - r_; }
  int next(int d) const { return d == 0 ? r_ + 1 : r_ - 1; }
  int prev(int d) const { return d == 0 ? r_ - 1 : r_ + 1; }
  int global(int d, int k) const { return d * n_ + k; }
  // The receiving rank's chunk is the direction (its own stage for the forward direction).
  P2p p2p(bool forward, int d, int k, int sender, int receiver) const {
    return P2p{forward, d * pp_ + receiver, global(d, k), sender, receiver};
  }

  void recv_forward(int phase) {
    const int d = direction(phase);
    if (position(d) == 0) return;
    pending_.push_back(p2p(true, d, recv_f_[d]++, prev(d), r_));
  }
  void send_forward(int phase) {
    const int d = direction(phase);
    if (position(d) == pp_ - 1) return;
    pending_.push_back(p2p(true, d, send_f_[d]++, r_, next(d)));
  }
  void recv_backward(int phase) {
    const int d = direction(phase);
    if (position(d) == pp_ - 1) return;
    pending_.push_back(p2p(false, d, recv_b_[d]++, next(d), r_));
  }
  void send_backward(int phase) {
    const int d = direction(phase);
    if (position(d) == 0) return;
    pending_.push_back(p2p(false, d, send_b_[d]++, r_, prev(d)));
  }
  void commit() {
    if (pending_.empty()) return;
    ScheduleStep s;
    s.kind = std::nullopt;
    s.first_comm = static_cast<uint32_t>(prog_.comms.size());
    prog_.comms.insert(prog_.comms.end(), pending_.begin(), pending_.end());
    s.num_comms = static_cast<uint32_t>(pending_.size());
    prog_.steps.push_back(s);
    pending_.clear();
  }

  void compute_forward(int phase) {
    const int d = direction(phase);
    prog_.compute(model::Pass::kForward, global(d, f_[d]++), d);
  }
  // A whole backward, or with `zb` its B alone, its W queued (DualPipe's WeightGradStore, popped in order).
  void compute_backward(int phase, bool zb) {
    const int d = direction(phase);
    const int mb = global(d, b_[d]++);
    prog_.compute(zb ? model::Pass::kInputGrad : model::Pass::kBackward, mb, d);
    if (zb) deferred_.emplace_back(mb, d);
  }

  void forward(int phase, bool recv = true, bool send = true) {
    if (recv) recv_forward(phase);
    commit();
    compute_forward(phase);
    if (send) send_forward(phase);
  }
  void backward(int phase, bool zb = false, bool recv = true, bool send = true) {
    if (recv) recv_backward(phase);
    commit();
    compute_backward(phase, zb);
    if (send) send_backward(phase);
  }
  // F&B: DualPipe overlaps the two chunks' compute and all-to-alls; here they run one after the other.
  void forward_backward(int phase0, int phase1, bool recv0 = true) {
    if (recv0) recv_forward(phase0);
    recv_backward(phase1);
    commit();
    compute_forward(phase0);
    compute_backward(phase1, false);
    send_forward(phase0);
    send_backward(phase1);
  }
  void weight() {
    commit();
    const auto [mb, chunk] = deferred_.front();
    deferred_.pop_front();
    prog_.compute(model::Pass::kWeightGrad, mb, chunk);
  }

  int r_, pp_, n_;
  bool second_;
  Program& prog_;
  int f_[2] = {0, 0}, b_[2] = {0, 0};
  int send_f_[2] = {0, 0}, send_b_[2] = {0, 0}, recv_f_[2] = {0, 0}, recv_b_[2] = {0, 0};
  std::vector<P2p> pending_;
  std::deque<std::pair<int, int>> deferred_;  // (micro-batch, chunk) of each B whose W is queued
};

}  // namespace

std::vector<Program> dualpipe(int pp, int mbc) {
  std::vector<Program> programs(pp);
  for (int r = 0; r < pp; ++r) DualRank(r, pp, mbc, programs[r]).run();
  return programs;
}

}  // namespace simumax::graph
