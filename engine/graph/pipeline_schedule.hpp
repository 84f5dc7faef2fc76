// Pipeline schedules as per-stage programs: forward/backward of micro-batches and the send/recv between them.
#pragma once

#include <cstdint>
#include <vector>

namespace simumax::graph {

enum class StepKind : uint8_t { kForward, kBackward, kSendNext, kRecvPrev, kSendPrev, kRecvNext };

struct ScheduleStep {
  StepKind kind;
  int32_t microbatch;
};

// Megatron's non-interleaved 1F1B (warm-up, steady 1F1B, cool-down), with its blocking send/recv pairing:
// in the steady state, odd stages send before they receive and even stages receive first.
// Returns one program per stage. REQUIRES: pp >= 1, mbc >= 1.
std::vector<std::vector<ScheduleStep>> one_f_one_b(int pp, int mbc);

}  // namespace simumax::graph
