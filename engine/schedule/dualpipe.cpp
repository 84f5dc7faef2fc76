// DualPipe's programs (DeepSeek-V3 technical report, section 3.2.1; github.com/deepseek-ai/DualPipe, DualPipe.step):
// two micro-batch streams fed from both ends of the pipeline, each rank holding two mirrored stages; and
// DualPipeV (the same repository's dualpipev.py, DualPipeV.step), DualPipe "cut in half" into a V.
#include <algorithm>
#include <deque>
#include <string>
#include <utility>

#include <spdlog/fmt/fmt.h>

#include "engine/schedule/registry.hpp"

namespace simumax::schedule {

namespace {

// One rank's program. A phase is the rank's view of a direction: phase 0 is the direction in which the rank is
// in the first half of the pipeline (the forward one on ranks below pp / 2, the reverse one above), so every rank
// runs the same eight-part schedule with its half-rank `h` (distance from the nearer end). Direction d's
// micro-batch k is global micro-batch d * n + k, computed in chunk d (0: the rank's own stage, 1: its mirror).
// Transfers are batched as DualPipe batches them: what a compute sends and what the next compute receives are
// posted together when that next compute begins, and it waits for all of them (batch_isend_irecv + wait).
//
// DualPipeV is DualPipe on 2 pp ranks with rank r and rank 2 pp - 1 - r merged into one: rank r runs DualPipe's
// eight parts with half-rank r on stages r (phase 0, chunk 0) and 2 pp - 1 - r (phase 1, chunk 1), every
// micro-batch enters at rank 0 and runs both phases, and at the V's tip (rank pp - 1) the hand-over from one
// phase to the other is local, no transfer.
class DualRank {
 public:
  struct Shape {
    int half;     // DualPipe's pp / 2: ranks per direction before the middle
    int h;        // this rank's half-rank
    int stages;   // the pipeline's stages (DualPipe's pp)
    int n;        // micro-batches per phase
    int offset;   // direction 1's first global micro-batch (DualPipe: n; DualPipeV: 0, every micro-batch runs both)
    bool second;  // phase 0 is the reverse direction (DualPipe's upper half)
  };
  DualRank(int r, int pp, const Shape& shape, Program& prog)
      : r_(r), pp_(pp), n_(shape.n), second_(shape.second), shape_(shape), prog_(prog) {}

  void run() {
    const int half = shape_.half, h = shape_.h;
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
    for (int i = 0; i < n_ - shape_.stages + h + 1; ++i) {
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
  // The rank's neighbours along direction d: the ranks it receives from and sends to; -1 past the ends of the
  // pipeline and, under DualPipeV, at the V's tip, where the hand-over is local.
  int next(int d) const { return valid(d == 0 ? r_ + 1 : r_ - 1); }
  int prev(int d) const { return valid(d == 0 ? r_ - 1 : r_ + 1); }
  int valid(int rank) const { return rank >= 0 && rank < pp_ ? rank : -1; }
  int global(int d, int k) const { return d * shape_.offset + k; }
  // The receiving rank's chunk is the direction (its own stage for the forward direction).
  P2p p2p(bool forward, int d, int k, int sender, int receiver) const {
    return P2p{forward, d * pp_ + receiver, global(d, k), sender, receiver};
  }

  void recv_forward(int phase) {
    const int d = direction(phase);
    if (prev(d) < 0) return;
    pending_.push_back(p2p(true, d, recv_f_[d]++, prev(d), r_));
  }
  void send_forward(int phase) {
    const int d = direction(phase);
    if (next(d) < 0) return;
    pending_.push_back(p2p(true, d, send_f_[d]++, r_, next(d)));
  }
  void recv_backward(int phase) {
    const int d = direction(phase);
    if (next(d) < 0) return;
    pending_.push_back(p2p(false, d, recv_b_[d]++, next(d), r_));
  }
  void send_backward(int phase) {
    const int d = direction(phase);
    if (prev(d) < 0) return;
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
    prog_.compute(Pass::kForward, global(d, f_[d]++), d);
  }
  // A whole backward, or with `zb` its B alone, its W queued (DualPipe's WeightGradStore, popped in order).
  void compute_backward(int phase, bool zb) {
    const int d = direction(phase);
    const int mb = global(d, b_[d]++);
    prog_.compute(zb ? Pass::kInputGrad : Pass::kBackward, mb, d);
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
  // F&B (DualPipe's overlapped_forward_backward): one overlapped pair step (ScheduleStep::paired), the forward of
  // one phase's chunk and the whole backward of the other's merged layer by layer, each one's EP all-to-alls
  // beside the other's compute (the graph stage's fb_pair, docs/overlap.md).
  void forward_backward(int phase0, int phase1, bool recv0 = true) {
    if (recv0) recv_forward(phase0);
    recv_backward(phase1);
    commit();
    const int fd = direction(phase0), bd = direction(phase1);
    const int f_mb = global(fd, f_[fd]++), b_mb = global(bd, b_[bd]++);
    prog_.pair(f_mb, fd, b_mb, bd);
    send_forward(phase0);
    send_backward(phase1);
  }
  void weight() {
    commit();
    const auto [mb, chunk] = deferred_.front();
    deferred_.pop_front();
    prog_.compute(Pass::kWeightGrad, mb, chunk);
  }

  int r_, pp_, n_;
  bool second_;
  Shape shape_;
  Program& prog_;
  int f_[2] = {0, 0}, b_[2] = {0, 0};
  int send_f_[2] = {0, 0}, send_b_[2] = {0, 0}, recv_f_[2] = {0, 0}, recv_b_[2] = {0, 0};
  std::vector<P2p> pending_;
  std::deque<std::pair<int, int>> deferred_;  // (micro-batch, chunk) of each B whose W is queued
};

}  // namespace

std::vector<Program> dualpipe(int pp, int mbc) {
  std::vector<Program> programs(pp);
  for (int r = 0; r < pp; ++r) {
    const int h = std::min(r, pp - 1 - r);
    DualRank(r, pp, {pp / 2, h, pp, mbc / 2, mbc / 2, r >= pp / 2}, programs[r]).run();
  }
  return programs;
}

namespace {

// Why DualPipe cannot run this layout, or "" (DeepSeek's DualPipe.step asserts an even number of ranks and an
// even number of micro-batches of at least twice the ranks; it runs two stages per rank, not virtual chunks).
std::string dualpipe_why(const Layout& l) {
  if (l.vp > 1) return fmt::format("interleaving_size is {}", l.vp);
  if (l.pp % 2 != 0) return fmt::format("pp_size {} is odd", l.pp);
  if (l.micro_batches % 2 != 0 || l.micro_batches < 2 * l.pp) {
    return fmt::format("micro_batch_num {} is not an even number of at least 2 * pp_size = {}", l.micro_batches,
                       2 * l.pp);
  }
  return dp_overlap_why(l);
}

std::string dualpipe_refusal(const Layout& l, const std::string& legal) {
  const std::string why = dualpipe_why(l);
  if (why.empty()) return why;
  return fmt::format("\"dualpipe\" cannot run this layout: {}; DualPipe holds stages r and pp_size - 1 - r on rank r "
                     "and feeds half the micro-batches from each end, so it needs an even pp_size, an even "
                     "micro_batch_num of at least 2 * pp_size and interleaving_size 1; the legal choices for this "
                     "layout are {}",
                     why, legal);
}

std::vector<Program> dualpipe_programs(const Layout& l) {
  return dualpipe(static_cast<int>(l.pp), static_cast<int>(l.micro_batches));
}

}  // namespace

extern const Schedule kDualPipe{"dualpipe", Placement::kMirror, true, dualpipe_refusal, dualpipe_programs};

namespace {

// Why DualPipeV cannot run this layout, or "". DualPipeV.step asserts num_chunks >= 2 * num_ranks (no parity
// rule: every micro-batch runs both phases); its two modules are stages r and 2 pp - 1 - r of a model cut into
// 2 pp stages (examples/example_dualpipev.py), not virtual chunks.
std::string dualpipe_v_why(const Layout& l) {
  if (l.vp > 1) return fmt::format("interleaving_size is {}", l.vp);
  if (l.micro_batches < 2 * l.pp) {
    return fmt::format("micro_batch_num {} is smaller than 2 * pp_size = {}", l.micro_batches, 2 * l.pp);
  }
  return v_shape_why(l);
}

std::string dualpipe_v_refusal(const Layout& l, const std::string& legal) {
  const std::string why = dualpipe_v_why(l);
  if (why.empty()) return why;
  return fmt::format("\"dualpipev\" cannot run this layout: {}; DualPipeV cuts the model into 2 * pp_size stages, "
                     "gives rank r stages r and 2 * pp_size - 1 - r and feeds every micro-batch in at rank 0, so it "
                     "needs a micro_batch_num of at least 2 * pp_size, interleaving_size 1 and a layer_num that "
                     "2 * pp_size divides; the legal choices for this layout are {}",
                     why, legal);
}

std::vector<Program> dualpipe_v_programs(const Layout& l) {
  const int pp = static_cast<int>(l.pp), mbc = static_cast<int>(l.micro_batches);
  std::vector<Program> programs(pp);
  for (int r = 0; r < pp; ++r) DualRank(r, pp, {pp, r, 2 * pp, mbc, 0, false}, programs[r]).run();
  return programs;
}

}  // namespace

extern const Schedule kDualPipeV{"dualpipev", Placement::kVShape, true, dualpipe_v_refusal, dualpipe_v_programs};

}  // namespace simumax::schedule
