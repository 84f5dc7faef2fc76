#include "engine/model/op.hpp"

namespace simumax::model {

const char* to_string(Coll c) {
  switch (c) {
    case Coll::kAllReduce: return "all_reduce";
    case Coll::kAllGather: return "all_gather";
    case Coll::kReduceScatter: return "reduce_scatter";
    case Coll::kAllToAll: return "all2all";
    case Coll::kP2p: return "p2p";
  }
  return "?";
}

const char* to_string(CommGroup g) {
  switch (g) {
    case CommGroup::kTp: return "tp";
    case CommGroup::kCp: return "cp";
    case CommGroup::kEp: return "ep";
    case CommGroup::kEtp: return "etp";
  }
  return "?";
}

const char* to_string(OpType t) {
  switch (t) {
    case OpType::kEmbedding: return "embedding";
    case OpType::kNorm: return "rmsnorm";
    case OpType::kLinearCol: return "linear_col";
    case OpType::kLinearRow: return "linear_row";
    case OpType::kCoreAttention: return "core_attention";
    case OpType::kSwiglu: return "swiglu";
    case OpType::kGelu: return "gelu";
    case OpType::kCrossEntropy: return "cross_entropy";
    case OpType::kQuantizer: return "quantizer";
    case OpType::kRouter: return "router";
    case OpType::kPermutation: return "permutation";
    case OpType::kUnpermutation: return "unpermutation";
    case OpType::kGroupLinearCol: return "group_linear_col";
    case OpType::kGroupLinearRow: return "group_linear_row";
  }
  return "?";
}

}  // namespace simumax::model
