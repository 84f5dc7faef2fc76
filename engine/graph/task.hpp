// One task of the lowered step: what it runs, for how long, on which lane and stream, with what memory.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <tuple>

#include "engine/schedule/pass.hpp"

namespace simumax::graph {

inline constexpr uint32_t kNoGroup = std::numeric_limits<uint32_t>::max();
inline constexpr uint32_t kNoOpRef = std::numeric_limits<uint32_t>::max();

// Which lane of a GPU a task runs on (the trace's threads).
enum class TaskKind : uint8_t {
  kCompute,      // forward / backward kernels
  kRecompute,    // forward work replayed in the backward
  kTpComm,       // TP / SP collectives
  kCpComm,       // context-parallel all-to-all
  kEpComm,       // expert-parallel all-to-all / ETP collectives
  kPpComm,       // pipeline send/recv
  kDpComm,       // data-parallel gradient reduce / parameter gather
  kOptimizer,
  kBarrier,      // zero-time synchronisation
  kHost,         // the host thread issuing the rank's kernels (megatron fidelity, docs/host.md)
};
inline constexpr int kNumTaskKinds = static_cast<int>(TaskKind::kHost) + 1;
const char* to_string(TaskKind kind);

// How a communication task moves its bytes between the members of its group (for the sim executor).
enum class CommPattern : uint8_t {
  kNone,      // not a communication task
  kRing,      // all-reduce / all-gather / reduce-scatter: one flow per ring edge
  kAllToAll,  // pairwise exchange
  kPeer,      // point to point: members[0] -> members[1]
};

// A GPU's streams: tasks on one stream run one after another; different streams overlap unless an edge
// orders them. Without Megatron's overlap options everything is on the compute stream (SimuMax's model).
enum Stream : uint8_t {
  kComputeStream = 0,
  kDpStream = 1,
  kPpStream = 2,
  kTpStream = 3,
  kEpStream = 4,  // expert-parallel all-to-alls beside the shared experts (moe-shared-expert-overlap)
  kHostStream = 5,  // the host lane: the CPU time that issues the GPU streams' work, in program order
  kNumStreams = 6
};

// What a task computes in model terms, as indices into model::StepModel (for traces: FLOPs, bytes, shape key).
struct OpRef {
  int32_t chunk = -1;  // StepModel::chunks
  int32_t block = -1;  // the chunk's blocks; -1: the whole chunk
  int32_t op = -1;     // the block's ops; -1: the whole block
  int8_t work = -1;    // schedule::op_pass_index of the pass whose work or collective it is; -1: a block or chunk
  int16_t comm = -1;   // index into the op's comm[work]: the task is that collective; -1: the kernel
  auto key() const { return std::tuple(chunk, block, op, work, comm); }
};

// 64 bytes (a static_assert below), every field as narrow as its range allows (micro-batches, layers and chunks
// fit in 16 bits; the config readers check the counts). A graph stores each distinct one once (TaskTable), and
// reads return it by value, so that executors that read every task stay cheap.
struct Task {
  double seconds = 0;          // duration on an idle machine (analytical)
  double latency_seconds = 0;  // communication: the part of `seconds` that is latency, not bandwidth
  int64_t mem_peak_bytes = 0;  // transient memory above the rank's live memory while it runs (>= 0)
  int64_t mem_delta_bytes = 0; // change of the rank's live memory when it ends (+ saved, - freed)
  uint32_t rank = 0;           // compute: the rank running it; communication: the group's first member
  uint32_t group = kNoGroup;   // communication / barrier: index into TaskGraph::groups
  uint32_t name = 0;           // index into TaskGraph::names
  uint32_t op_ref = kNoOpRef;  // index into TaskGraph::op_refs; kNoOpRef: pipeline, DP, optimizer, barrier
  int16_t microbatch = -1;
  int16_t layer = -1;          // global layer index, -1 outside layers
  int16_t chunk = -1;          // virtual pipeline chunk
  TaskKind kind = TaskKind::kCompute;
  CommPattern pattern = CommPattern::kNone;
  // F, B+W or recompute: a B or W task carries kBackward (traces and summaries show the whole backward; its
  // name says which half). None: the step's end (DP collectives, optimizer, barrier), outside every pass.
  std::optional<schedule::Pass> pass;
  bool network = false;        // true: the sim executor sends it as flows that can contend on shared links
  uint8_t stream = 0;          // the rank's stream it is ordered on (Stream); streams run concurrently
};
static_assert(sizeof(Task) == 64, "every read of a task copies one: keep it at 64 bytes");
inline constexpr int32_t kMaxTaskIndex16 = std::numeric_limits<int16_t>::max();  // micro-batches, layers, chunks

}  // namespace simumax::graph
