// Pipeline schedules as per-stage programs: forward/backward of (micro-batch, virtual chunk), and batches of
// point-to-point transfers between them (Megatron's batched isend/irecv).
#pragma once

#include <cstdint>
#include <vector>

namespace simumax::graph {

// One transfer of a micro-batch's activation (forward) or gradient (backward) to the virtual stage `target`.
// Both sides of a transfer name it identically, which is how the send meets its receive.
struct P2p {
  bool forward = true;
  int32_t target = 0;  // virtual pipeline stage (chunk * pp + rank) that receives it
  int32_t microbatch = 0;
  int32_t sender = 0;  // pipeline rank
  int32_t receiver = 0;
  bool operator<(const P2p& o) const;
  bool operator==(const P2p& o) const;
};

enum class StepKind : uint8_t { kForward, kBackward, kComm };

struct ScheduleStep {
  StepKind kind = StepKind::kForward;
  int32_t microbatch = 0;   // compute steps
  int32_t chunk = 0;        // compute steps: virtual chunk on this rank
  uint32_t first_comm = 0;  // comm steps: [first_comm, first_comm + num_comms) in Program::comms
  uint32_t num_comms = 0;
};

// A comm step completes when all of its transfers have met their peers; each transfer starts when both
// sides have reached the step that holds it.
struct Program {
  std::vector<ScheduleStep> steps;
  std::vector<P2p> comms;
  void compute(StepKind kind, int mb, int chunk) { steps.push_back({kind, mb, chunk, 0, 0}); }
  void comm(std::initializer_list<const P2p*> batch);
};

// Megatron's non-interleaved 1F1B (warm-up, steady 1F1B, cool-down) with blocking send/recv, each transfer its
// own step: in the steady state odd stages send before they receive and even stages receive first.
// REQUIRES: pp >= 1, mbc >= 1.
std::vector<Program> one_f_one_b(int pp, int mbc);

// Megatron's interleaved 1F1B (virtual pipeline, `vp` chunks per rank) with batched p2p, micro-batches taken in
// groups of `group` per chunk (microbatch_group_size_per_vp_stage). REQUIRES: pp >= 2, vp >= 2, group >= pp.
std::vector<Program> interleaved_one_f_one_b(int pp, int vp, int mbc, int group);

}  // namespace simumax::graph
