// The whole step's model: the distinct chunks of every pipeline stage, plus model-level totals.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/model/chunk.hpp"

namespace simumax::model {

struct StepModel {
  std::vector<Chunk> chunks;              // distinct physical chunks: first, [middle], [last]
  std::vector<int> chunk_of_stage;        // pipeline stage -> its physical chunk (parameters, DP, optimizer)
  std::vector<std::vector<int>> compute_chunks;  // [stage][virtual chunk] -> the chunk it computes
  std::vector<std::vector<int>> first_layer;     // [stage][virtual chunk] -> global index of its first layer
  // [stage] -> the physical chunks whose parameters, gradients and optimizer state the stage's ranks hold: its
  // own; under DualPipe its own and its mirror's (stage pp - 1 - r), under a V (ZB-V, DualPipeV) stages r and
  // 2pp - 1 - r of the 2pp-stage model: the two it computes.
  std::vector<std::vector<int>> held_chunks;
  // How many of a rank's held chunks each micro-batch runs through there: 1, or 2 under a V (DualPipe's two
  // directions share the micro-batches between its two stages).
  int microbatch_chunks = 1;
  int virtual_chunks() const { return static_cast<int>(compute_chunks.front().size()); }
  int64_t padded_vocab = 0;
  double p2p_bytes = 0;                   // one pipeline send/recv message
  double flops_per_token = 0;             // SimuMax's MFU numerator per token (see docs)
  int64_t seq_len_local = 0;              // S_l: rows of the residual stream on a rank
  int64_t workspace_bytes = 0;            // cuBLAS workspaces every rank holds (cublas_workspace_bytes)
};

class OpCache;

// Builds the per-stage chunks of the scenario (SimuMax's layer split, uneven stages, embedding and head placement).
// With `cache`, op lists built for an earlier scenario of the same model and system are shared (the search).
// REQUIRES: config::check_scenario(s) passed.
StepModel build_step_model(const config::Scenario& s, OpCache* cache = nullptr);

// Layers built on a physical stage (SimuMax's get_num_layers_to_build, without VPP).
// With `virtual_index` >= 0: the layers of that virtual chunk of the stage (interleaved pipeline).
int layers_on_stage(const config::StrategyConfig& st, const config::ModelConfig& m, StageKind stage,
                    int virtual_index = -1);

// The cuBLAS workspaces a rank holds for the whole run, through PyTorch's caching allocator (megatron fidelity,
// system key "workspaces"; 0 at simumax fidelity or without the key): PyTorch's workspace for each (cuBLAS
// handle, stream) it runs a GEMM on, sized by the run's CUBLAS_WORKSPACE_CONFIG or the GPU's default, twice
// (handles are per thread: the Python thread's forward and autograd's device thread's backward both run GEMMs
// on the compute stream), plus TransformerEngine's one workspace per device and, for MoE's grouped GEMM, one
// more per TE compute stream.
int64_t cublas_workspace_bytes(const config::Scenario& s);
inline constexpr int kTorchCublasThreads = 2;
inline constexpr int kTeComputeStreams = 4;  // TE common/util/multi_stream.cpp num_compute_streams

// SimuMax's flops_per_token (padded vocab; every layer counted as MoE when topk > 1).
double flops_per_token(const config::ModelConfig& m, int64_t padded_vocab, int64_t seq_len);

// SimuMax's element counts of one layer's attention projections, as its closed-form FLOPs and parameter
// counts use them: QKV (MLA: the q/kv down and up projections) and the output projection (H*H without MLA,
// not heads*head_size: kept for parity).
struct AttentionProjectionElements {
  double qkv = 0;
  double proj = 0;
};
AttentionProjectionElements attention_projection_elements(const config::ModelConfig& m);

}  // namespace simumax::model
