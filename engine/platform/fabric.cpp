#include "engine/platform/fabric.hpp"

#include <algorithm>
#include <cmath>

#include "engine/common/error.hpp"

namespace simumax::platform {

int64_t default_nodes_per_leaf(const PlatformSpec& spec) {
  if (spec.topology == Topology::kRail) return kDefaultLeafPorts;
  const int64_t nics_per_node = spec.nic_per_node ? 1 : spec.gpus_per_node;
  return std::max<int64_t>(1, kDefaultLeafPorts / nics_per_node);
}

int64_t zone_leaves(const PlatformSpec& spec, const FabricLayout& layout) {
  if (spec.leaves_per_zone > 0) return spec.leaves_per_zone;
  return layout.leaves.size() > kMaxLeafZones ? kLeavesPerBlock : 1;
}

std::vector<LeafBlock> leaf_blocks(const PlatformSpec& spec, const FabricLayout& layout) {
  std::vector<LeafBlock> blocks;
  const size_t n = layout.leaves.size(), per_block = static_cast<size_t>(zone_leaves(spec, layout));
  if (per_block == 1) return blocks;
  if (spec.topology != Topology::kRail) {
    for (size_t i = 0; i < n; ++i) {
      if (i % per_block == 0) blocks.push_back({"block" + std::to_string(i / per_block), {}});
      blocks.back().leaves.push_back(i);
    }
    return blocks;
  }
  const size_t rails = static_cast<size_t>(spec.gpus_per_node), pods = n / rails;  // leaves are pod-major
  for (size_t g = 0; g < rails; ++g) {
    for (size_t p = 0; p < pods; ++p) {
      if (p % per_block == 0) {
        blocks.push_back({"rail" + std::to_string(g) + ".block" + std::to_string(p / per_block), {}});
      }
      blocks.back().leaves.push_back(p * rails + g);
    }
  }
  return blocks;
}

FabricLayout fabric_layout(const PlatformSpec& spec) {
  if (spec.nodes < 1 || spec.gpus_per_node < 1 || !(spec.oversubscription > 0) ||
      !std::isfinite(spec.oversubscription) || spec.nodes_per_leaf < 0 ||
      (spec.topology == Topology::kRail && spec.nic_per_node)) {
    throw common::InternalError("fabric_layout: invalid PlatformSpec");
  }
  FabricLayout f;
  f.port_bytes_per_s = spec.nic_bytes_per_s * (spec.nic_per_node ? static_cast<double>(spec.gpus_per_node) : 1.0);
  if (spec.topology == Topology::kSingleSwitch) return f;
  f.nodes_per_leaf = spec.nodes_per_leaf > 0 ? spec.nodes_per_leaf : default_nodes_per_leaf(spec);
  const bool rail = spec.topology == Topology::kRail;
  f.ports_per_leaf = f.nodes_per_leaf * (rail || spec.nic_per_node ? 1 : spec.gpus_per_node);
  const double uplink = static_cast<double>(f.ports_per_leaf) * f.port_bytes_per_s / spec.oversubscription;
  const int64_t groups = (spec.nodes + f.nodes_per_leaf - 1) / f.nodes_per_leaf;
  for (int64_t p = 0; p < groups; ++p) {
    std::vector<int64_t> nodes;
    for (int64_t n = p * f.nodes_per_leaf; n < std::min(spec.nodes, (p + 1) * f.nodes_per_leaf); ++n) {
      nodes.push_back(n);
    }
    if (!rail) {
      f.leaves.push_back({"leaf" + std::to_string(p), std::move(nodes), -1, uplink});
      continue;
    }
    for (int64_t g = 0; g < spec.gpus_per_node; ++g) {
      f.leaves.push_back({"pod" + std::to_string(p) + ".rail" + std::to_string(g), nodes, g, uplink});
    }
  }
  return f;
}

}  // namespace simumax::platform
