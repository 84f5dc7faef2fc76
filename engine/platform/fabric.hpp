// The inter-node fabric of a generated platform: which NIC hangs off which leaf switch, and how fast each
// leaf's uplinks to the spine tier are. platform_xml writes it; tests and the docs reason with it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/platform/platform_spec.hpp"

namespace simumax::platform {

// NIC ports under one leaf switch when --nodes-per-leaf is not given: half of a 64-port switch, the other
// half going up to the spines (full bisection at oversubscription 1).
inline constexpr int64_t kDefaultLeafPorts = 32;

struct Leaf {
  std::string name;               // its zone id: "leaf3" (fat-tree) or "pod1.rail5" (rail)
  std::vector<int64_t> nodes;     // the nodes whose NICs it holds
  int64_t rail = -1;              // rail: only NIC `rail` of each node; -1: every NIC of its nodes
  double uplink_bytes_per_s = 0;  // all its uplinks to the spine tier, as one trunk
};

struct FabricLayout {
  int64_t nodes_per_leaf = 0;   // fat-tree: nodes per leaf; rail: nodes per pod
  int64_t ports_per_leaf = 0;   // NIC ports under a leaf (a partly filled last leaf keeps the same uplinks)
  double port_bytes_per_s = 0;  // one NIC port: nic_bytes_per_s, or x gpus_per_node with nic_per_node
  std::vector<Leaf> leaves;     // empty for a single switch
};

// fat-tree: kDefaultLeafPorts / NICs per node nodes (at least 1); rail: kDefaultLeafPorts nodes per pod.
int64_t default_nodes_per_leaf(const PlatformSpec& spec);

// The leaves platform_xml puts in one SimGrid zone. One zone per leaf is what SimGrid 3.32 runs fastest, but it
// loads and seals a platform in O(zones x hosts) (docs/simgrid.md): past kMaxLeafZones leaves the leaves go in
// blocks of kLeavesPerBlock, each one zone. Fat-tree blocks: consecutive leaves, "block{j}"; rail blocks: one
// rail of consecutive pods, "rail{g}.block{j}", so that rail-aligned traffic stays apart in SimGrid's solver.
inline constexpr size_t kMaxLeafZones = 1024;
inline constexpr int64_t kLeavesPerBlock = 8;
struct LeafBlock {
  std::string name;
  std::vector<size_t> leaves;  // indices into FabricLayout::leaves
};
// spec.leaves_per_zone, or with 0: 1 up to kMaxLeafZones leaves, kLeavesPerBlock past them.
int64_t zone_leaves(const PlatformSpec& spec, const FabricLayout& layout);
// The blocks of zone_leaves(spec, layout) > 1 leaves (empty when it is 1).
std::vector<LeafBlock> leaf_blocks(const PlatformSpec& spec, const FabricLayout& layout);

// The leaves of `spec`, in node order (fat-tree) or pod-major, rail-minor order (rail). A leaf's uplink
// bandwidth is ports_per_leaf x port_bytes_per_s / oversubscription.
// REQUIRES: spec.nodes >= 1, gpus_per_node >= 1, oversubscription > 0, nodes_per_leaf >= 0, and not rail with
// nic_per_node (InternalError otherwise).
FabricLayout fabric_layout(const PlatformSpec& spec);

}  // namespace simumax::platform
