// One leaf op of the transformer for one micro-batch on one rank: work, communication, memory facts.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/schedule/pass.hpp"

namespace simumax::model {

// The pass vocabulary is the schedule stage's (engine/schedule/pass.hpp); the model's ops and memory steps say
// their pass with it.
using schedule::kNumOpPasses;
using schedule::op_pass_index;
using schedule::Pass;

enum class Coll : uint8_t { kAllReduce, kAllGather, kReduceScatter, kAllToAll, kP2p };
enum class CommGroup : uint8_t { kTp, kCp, kEp, kEtp };

const char* to_string(Coll c);
const char* to_string(CommGroup g);

// A collective an op needs in one pass (SimuMax charges it serially, never overlapped).
struct Comm {
  Coll coll = Coll::kAllReduce;
  CommGroup group = CommGroup::kTp;
  double bytes = 0;          // message size as SimuMax passes it to its cost formula
  std::string stage;         // SimuMax's comm_stage label ("LinearCol_FWD_SP", "Attention_FWD_CP2", ...)
  bool before_compute = false;  // runs before the kernel (gathers) or after (reductions)
};

// The work of one pass: a kernel with FLOPs (looked up in `compute_op`'s efficiency table with `shape_key`)
// and one or more memory-access calls (each pays the bandwidth entry's kernel latency once).
struct PassWork {
  std::string compute_op;       // "matmul", "sdp_fwd", "default", "permute_fwd", "ce", ...
  double flops = 0;
  std::string shape_key;        // exact key into accurate_efficient_factor; empty for memory-bound ops
  std::vector<double> mem_bytes;  // bytes of each memory call (usually one)
};

enum class OpType : uint8_t {
  kEmbedding, kNorm, kLinearCol, kLinearRow, kCoreAttention, kSwiglu, kGelu, kCrossEntropy, kQuantizer,
  kRouter, kPermutation, kUnpermutation, kGroupLinearCol, kGroupLinearRow,
};
const char* to_string(OpType t);

struct Op {
  std::string name;             // block-relative, e.g. "attn.linear_qkv"
  OpType type = OpType::kNorm;
  std::array<PassWork, kNumOpPasses> work;
  std::array<std::vector<Comm>, kNumOpPasses> comm;
  // Megatron fidelity: kernels Megatron-LM + TE launch beside this op that SimuMax's op list leaves out, one
  // entry per launch (the bytes it moves), per pass; timed as memory-bound kernels with a per-kernel floor.
  std::array<std::vector<double>, kNumOpPasses> extra_kernel_bytes;
  // Megatron fidelity: the pass ends with the host waiting for the GPU (a device-to-host copy it reads: token
  // counts, `nonzero`, a NaN check): the host issues nothing more until the GPU has run the pass.
  std::array<bool, kNumOpPasses> host_sync{};
  bool recompute = false;       // the forward is replayed in the backward
  bool variance = false;        // a recompute "tail": replay costs nothing (SimuMax's variance node)
  bool recompute_comm = false;  // the replay repeats the forward communication (TP/EP, never CP)
  bool break_point = false;     // a recompute segment ends after this op (SimuMax's set_breakpoints)
  bool cached_inputs = false;   // its input is saved by another op (SimuMax's has_cached_inputs)
  bool offload_inputs = false;  // its input is offloaded to the host: a segment starting here holds nothing
  // SimuMax runs zero-memory leaves right before this op, recomputed exactly when it is (MLA's Split/Concat):
  // a segment opening here opens at them, so they hold `act_in_bytes` and the replay re-creates this op's cache.
  bool recompute_lead_in = false;

  // Activation memory facts for one micro-batch (SimuMax's ActivationInfo), bytes.
  int64_t act_cache = 0;     // saved for backward
  int64_t act_fwd_peak = 0;  // transient during forward, above what is live before it
  int64_t act_bwd_peak = 0;  // transient during backward
  int64_t act_in_bytes = 0;  // its inputs (held instead of `act_cache` when it starts a recompute segment)
  // What its weight gradient keeps from B to W when a schedule defers it (zero-bubble): the input as the wgrad
  // GEMM reads it (gathered under sequence parallelism) and the output gradient. Set for linear layers, the ops
  // whose wgrad the zero-bubble implementation defers; zero elsewhere.
  int64_t wgrad_keep_bytes = 0;

  // Parameters held by this rank.
  int64_t dense_numel = 0;
  int64_t moe_numel = 0;
  int64_t bias_numel = 0;  // of dense_numel, the bias elements (their gradient takes the DDP hook's add)
  int weight_elem_bytes = 2;
  // TE dummy-wgrad shape (rows, cols, elem bytes) when TE records one; rows == 0 when none.
  std::array<int64_t, 3> te_dummy_wgrad = {0, 0, 0};

  double fwd_flops() const { return work[0].flops; }
};

}  // namespace simumax::model
