// A pipeline stage's model chunk: blocks (embedding, layers, head) of ops, with parameter totals.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"
#include "engine/model/memory_walk.hpp"
#include "engine/model/op.hpp"

namespace simumax::model {

enum class BlockKind : uint8_t { kEmbedding, kLayer, kHead };

using OpList = std::vector<Op>;

// `repeat` identical copies of the same ops (consecutive layers that share structure and recompute flags).
struct Block {
  BlockKind kind = BlockKind::kLayer;
  int first_layer = -1;  // index of the first layer within the chunk, -1 for embedding/head
  int repeat = 1;
  // Shared, never changed once built: blocks built alike (in one step or, through an OpCache, in many) hold
  // the same list, and caches downstream key on its address.
  std::shared_ptr<const OpList> ops;
  std::shared_ptr<const BlockProgram> program;  // block_program(*ops): the memory walk of one copy
};

enum class StageKind : uint8_t { kFirst, kMiddle, kLast };
const char* to_string(StageKind k);

struct ChunkParams {
  int64_t dense_numel = 0;
  int64_t moe_numel = 0;
  int64_t weight_bytes = 0;
  int64_t grad_bytes = 0;         // after ZeRO-2 division if any
  int64_t dense_grad_bytes = 0;
  int64_t moe_grad_bytes = 0;
  double optimizer_state_bytes = 0;  // 12 bytes per parameter / ZeRO group
  double dense_state_bytes = 0;
  double moe_state_bytes = 0;
  int64_t te_dummy_wgrad_bytes = 0;
  int64_t model_bytes() const {
    return weight_bytes + grad_bytes + static_cast<int64_t>(optimizer_state_bytes) + te_dummy_wgrad_bytes;
  }
};

struct Chunk {
  StageKind stage = StageKind::kFirst;
  int virtual_index = 0;   // VPP chunk on its stage
  int num_layers = 0;
  bool has_embedding = false;
  bool has_head = false;
  std::vector<Block> blocks;
  ChunkParams params;
};

}  // namespace simumax::model
