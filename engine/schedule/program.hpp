// Pipeline schedules as per-rank programs: passes of (micro-batch, virtual chunk) and batches of point-to-point
// transfers between them (Megatron's batched isend/irecv). A schedule is data: the lowering (engine/graph) runs
// any program without knowing which schedule wrote it (docs/schedules.md).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "engine/schedule/pass.hpp"

namespace simumax::schedule {

// One transfer of a micro-batch's activation (forward) or gradient (backward) to the virtual stage `target`.
// Both sides of a transfer name it identically, which is how the send meets its receive.
struct P2p {
  bool forward = true;
  int32_t target = 0;  // the receiving (chunk, rank), as chunk * pp + rank: a name both sides agree on
  int32_t microbatch = 0;
  int32_t sender = 0;  // pipeline rank
  int32_t receiver = 0;
  bool operator<(const P2p& o) const;
  bool operator==(const P2p& o) const;
};

// A compute step runs one pass of a (micro-batch, chunk): F; the whole backward B+W (each op's input and weight
// gradients back to back, what 1F1B runs); or the backward split as zero-bubble schedules run it: B, the input
// gradients (with the recompute and the collectives they need), whose result the previous stage waits for, and
// W, the weight gradients, which nothing in the pipeline waits for. A program runs either B+W or B then W.
struct ScheduleStep {
  std::optional<Pass> kind;  // the compute step's pass; none: a comm step
  int32_t microbatch = 0;   // compute steps
  int32_t chunk = 0;        // compute steps: virtual chunk on this rank
  uint32_t first_comm = 0;  // comm steps: [first_comm, first_comm + num_comms) in Program::comms
  uint32_t num_comms = 0;
  // An overlapped F&B pair (kind empty, paired; docs/overlap.md): the forward of (microbatch, chunk) and the whole
  // backward of (b_microbatch, b_chunk) merged layer by layer, each one's EP all-to-alls beside the other's compute
  // (Megatron's combined 1F1B); either side may be absent (micro-batch -1), the other then runs alone the same way.
  bool paired = false;
  int32_t b_microbatch = -1;
  int32_t b_chunk = 0;
  bool is_comm() const { return !kind && !paired; }
};

// A comm step completes when all of its transfers have met their peers; each transfer starts when both
// sides have reached the step that holds it.
struct Program {
  std::vector<ScheduleStep> steps;
  std::vector<P2p> comms;
  // Instead: each receive is posted at its step and waited for by the compute that needs it, and each send
  // leaves once its data exists without holding its rank up (the zero-bubble runtime's isend/irecv; Megatron's
  // overlap_p2p_comm does the same for every schedule).
  bool async_p2p = false;
  void compute(Pass kind, int mb, int chunk) { steps.push_back({kind, mb, chunk, 0, 0, false, -1, 0}); }
  // An overlapped F&B pair; f_mb or b_mb -1: that side is absent.
  void pair(int f_mb, int f_chunk, int b_mb, int b_chunk) {
    steps.push_back({std::nullopt, f_mb, f_chunk, 0, 0, true, b_mb, b_chunk});
  }
  void comm(std::initializer_list<const P2p*> batch);
};

// The programs of the built-in schedules that other code and tests name directly; a new schedule needs no
// declaration here (its programs are reached through its registry entry, registry.hpp).

// Megatron's non-interleaved 1F1B (warm-up, steady 1F1B, cool-down) with blocking send/recv, each transfer its
// own step: in the steady state odd stages send before they receive and even stages receive first.
// REQUIRES: pp >= 1, mbc >= 1.
std::vector<Program> one_f_one_b(int pp, int mbc);

// Megatron's interleaved 1F1B (virtual pipeline, `vp` chunks per rank) with batched p2p, micro-batches taken in
// groups of `group` per chunk (microbatch_group_size_per_vp_stage). `combined`: Megatron's combined 1F1B on it
// (--overlap-moe-expert-parallel-comm): one more warm-up forward and every step an overlapped pair step, the
// steady state's F and B merged in one. REQUIRES: pp >= 2, vp >= 2, group >= pp.
std::vector<Program> interleaved_one_f_one_b(int pp, int vp, int mbc, int group, bool combined = false);

// ZB-H1 (Qi et al., "Zero Bubble Pipeline Parallelism", ICLR 2024, section 3.1): 1F1B's order and transfers with
// each backward split into B and W; stage r runs the W of its j-th backward right after it only from j = r on,
// deferring its first r W's to the end of the step, so B reaches the previous stage one W sooner while no
// stage holds more micro-batches in flight than under 1F1B. Its transfers are asynchronous, as in the authors'
// runtime (blocking ones would hold each B's send until the previous stage is done with its W).
// REQUIRES: pp >= 1, mbc >= 1.
std::vector<Program> zb_h1(int pp, int mbc);

// DualPipe (DeepSeek-V3 technical report, section 3.2.1, and DeepSeek's DualPipe.step): rank r holds stage r
// (chunk 0) and its mirror, stage pp - 1 - r (chunk 1); micro-batches 0 .. mbc/2 - 1 enter at rank 0 and run
// the stages forward, mbc/2 .. mbc - 1 enter at rank pp - 1 and run them from the other end. Its eight parts
// (warm-up forwards, F0F1, B1W1F1, the main F0B1F1B0, B1F1B0, B1B0, WB0, W) and batched blocking transfers
// follow DualPipe's code; the backwards it runs zero-bubble are split into B and a W queued in order.
// Each F&B pair runs its forward then its backward (not overlapped). REQUIRES: pp even, mbc even, mbc >= 2 pp.
std::vector<Program> dualpipe(int pp, int mbc);

}  // namespace simumax::schedule
