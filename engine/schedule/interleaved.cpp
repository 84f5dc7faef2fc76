// Megatron's interleaved 1F1B ("virtual pipeline") programs, with its batched, blocking p2p
// (forward_backward_pipelining_with_interleaving with overlap_p2p_comm off, as SimuMax's sync VPP models it).
#include <algorithm>
#include <optional>

#include "engine/schedule/program.hpp"

namespace simumax::schedule {

namespace {

struct Entry {
  int mb;
  int chunk;
};

class RankProgram {
 public:
  RankProgram(int r, int pp, int vp, const std::vector<Entry>& table)
      : r_(r), pp_(pp), vp_(vp), total_(static_cast<int>(table.size())), vs_(vp * pp), table_(table) {}

  // The k-th forward / backward of this rank: (micro-batch, chunk, virtual stage).
  Entry fwd(int k) const { return table_[k]; }
  Entry bwd(int k) const { return {table_[k].mb, vp_ - 1 - table_[k].chunk}; }
  int vstage(const Entry& e) const { return e.chunk * pp_ + r_; }

  // Whether the next forward (backward) needs a receive; the leading rank has nothing to receive for its
  // first pp - 1 steps and whenever the step pp - 1 earlier was the last (first) chunk.
  bool need_recv(int k, bool forward) const {
    const bool lead = forward ? r_ == 0 : r_ == pp_ - 1;
    if (!lead) return true;
    if (k < pp_ - 1) return false;
    const int c = table_[(k - (pp_ - 1)) % total_].chunk;
    const int chunk = forward ? c : vp_ - 1 - c;
    return chunk != (forward ? vp_ - 1 : 0);
  }
  std::optional<P2p> send_next(const Entry& e) const {
    const int v = vstage(e);
    if (v >= vs_ - 1) return std::nullopt;
    return P2p{true, v + 1, e.mb, r_, (r_ + 1) % pp_};
  }
  std::optional<P2p> recv_prev(const Entry& e) const {
    const int v = vstage(e);
    if (v <= 0) return std::nullopt;
    return P2p{true, v, e.mb, (r_ - 1 + pp_) % pp_, r_};
  }
  std::optional<P2p> send_prev(const Entry& e) const {
    const int v = vstage(e);
    if (v <= 0) return std::nullopt;
    return P2p{false, v - 1, e.mb, r_, (r_ - 1 + pp_) % pp_};
  }
  std::optional<P2p> recv_next(const Entry& e) const {
    const int v = vstage(e);
    if (v >= vs_ - 1) return std::nullopt;
    return P2p{false, v, e.mb, (r_ + 1) % pp_, r_};
  }
  int total() const { return total_; }

  // The receive before forward (backward) step k+1. The leading rank (first for forwards, last for backwards)
  // receives what the far end produced pp - 1 steps earlier, whichever chunk its own next step computes:
  // Megatron queues received tensors per chunk, so with micro-batch groups larger than pp they arrive ahead.
  std::optional<P2p> recv_before(int k, bool forward) const {
    const bool lead = forward ? r_ == 0 : r_ == pp_ - 1;
    if (!lead) return forward ? recv_prev(fwd(k + 1)) : recv_next(bwd(k + 1));
    if (!need_recv(k, forward)) return std::nullopt;
    const Entry src = forward ? fwd(k - (pp_ - 1)) : bwd(k - (pp_ - 1));
    const int chunk = forward ? src.chunk + 1 : src.chunk - 1;
    return forward ? P2p{true, chunk * pp_, src.mb, pp_ - 1, 0}
                   : P2p{false, chunk * pp_ + pp_ - 1, src.mb, 0, pp_ - 1};
  }

 private:
  int r_, pp_, vp_, total_, vs_;
  const std::vector<Entry>& table_;
};

const P2p* ptr(const std::optional<P2p>& p) { return p ? &*p : nullptr; }

// The compute of one step: F, B or both, as passes or, combined, as one overlapped pair step (Megatron's
// combined 1F1B runs every step through its F&B helper, a lone side included).
void run(Program& prog, bool combined, const Entry* f, const Entry* b) {
  if (combined) {
    prog.pair(f ? f->mb : -1, f ? f->chunk : 0, b ? b->mb : -1, b ? b->chunk : 0);
    return;
  }
  if (f) prog.compute(Pass::kForward, f->mb, f->chunk);
  if (b) prog.compute(Pass::kBackward, b->mb, b->chunk);
}

void warmup(Program& prog, bool combined, const RankProgram& rp, int r, int pp, int nw, int nrem) {
  const int total = rp.total();
  for (int k = 0; k < nw; ++k) {
    const Entry f = rp.fwd(k);
    run(prog, combined, &f, nullptr);
    const bool recv_f = rp.need_recv(k, true) && k != total - 1;
    std::optional<P2p> rp_next, rn_first;
    if (k + 1 < total && recv_f) {
      rp_next = rp.recv_before(k, true);
    } else if (k + 1 < total && nrem == 0 && r == 0) {
      rp_next = rp.recv_prev(rp.fwd(k + 1));
    }
    if (k == nw - 1 && nrem > 0 && r != pp - 1) rn_first = rp.recv_next(rp.bwd(0));
    const auto sn = rp.send_next(f);
    prog.comm({ptr(rp_next), ptr(sn), ptr(rn_first)});
  }
}

void steady(Program& prog, bool combined, const RankProgram& rp, int nw, int nrem) {
  const int total = rp.total();
  for (int k = 0; k < nrem; ++k) {
    const int fk = k + nw, bk = k;
    const Entry f = rp.fwd(fk), b = rp.bwd(bk);
    run(prog, combined, &f, &b);
    std::optional<P2p> rp_next, rn_next;
    if (fk + 1 < total && rp.need_recv(fk, true) && k != nrem - 1) rp_next = rp.recv_before(fk, true);
    if (bk + 1 < total && rp.need_recv(bk, false)) rn_next = rp.recv_before(bk, false);
    const auto sp = rp.send_prev(b), sn = rp.send_next(f);
    prog.comm({ptr(sp), ptr(rp_next), ptr(sn), ptr(rn_next)});
  }
}

void cooldown(Program& prog, bool combined, const RankProgram& rp, int r, int pp, int nrem) {
  const int total = rp.total();
  for (int k = nrem; k < total; ++k) {
    const Entry b = rp.bwd(k);
    run(prog, combined, nullptr, &b);
    const bool recv_b = rp.need_recv(k, false) && k != total - 1;
    std::optional<P2p> rn_next;
    if (k + 1 < total && recv_b) {
      rn_next = rp.recv_before(k, false);
    } else if (k + 1 < total && nrem == 0 && r == pp - 1) {
      rn_next = rp.recv_next(rp.bwd(k + 1));
    }
    const auto sp = rp.send_prev(b);
    prog.comm({ptr(sp), ptr(rn_next)});
  }
}

}  // namespace

std::vector<Program> interleaved_one_f_one_b(int pp, int vp, int mbc, int group, bool combined) {
  std::vector<Entry> table;  // Megatron's order: groups of `group` micro-batches, chunk by chunk
  for (int mn = 0; mn < mbc; mn += group) {
    for (int c = 0; c < vp; ++c) {
      for (int mb = mn; mb < std::min(mbc, mn + group); ++mb) table.push_back({mb, c});
    }
  }
  const int total = static_cast<int>(table.size());
  std::vector<Program> programs(pp);
  for (int r = 0; r < pp; ++r) {
    Program& prog = programs[r];
    const RankProgram rp(r, pp, vp, table);
    // Combined, one more warm-up forward, so that no pair's backward waits on its own forward (Megatron's
    // get_pp_rank_microbatches with overlap_moe_expert_parallel_comm).
    const int nw = std::min((pp - r - 1) * 2 + (vp - 1) * group + (combined ? 1 : 0), total);
    const int nrem = total - nw;
    if (r != 0) {
      const auto first = rp.recv_prev(rp.fwd(0));
      prog.comm({ptr(first)});
    }
    warmup(prog, combined, rp, r, pp, nw, nrem);
    if (nrem == 0 && r != pp - 1) {
      const auto rn = rp.recv_next(rp.bwd(0));
      prog.comm({ptr(rn)});
    }
    steady(prog, combined, rp, nw, nrem);
    cooldown(prog, combined, rp, r, pp, nrem);
  }
  return programs;
}

}  // namespace simumax::schedule
