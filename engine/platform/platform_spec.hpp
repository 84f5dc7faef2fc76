// The cluster a step runs on, as plain numbers: nodes, GPUs per node, the two link tiers of SimuMax's system
// config (intra-node NVLink/PCIe, inter-node NIC) and the shape of the inter-node fabric. The platform XML and
// the sim executor start here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "engine/config/system_config.hpp"

namespace simumax::platform {

// How the NICs of the nodes are switched (see fabric.hpp for the leaves each one has).
enum class Topology : uint8_t {
  kSingleSwitch,  // every NIC on one non-blocking switch
  kFatTree,       // leaf switches of whole nodes, joined by a spine tier
  kRail,          // rail-optimised: NIC g of every node of a pod on rail switch g, rails joined by a spine tier
};
const char* to_string(Topology t);                              // "single-switch", "fat-tree", "rail"
std::optional<Topology> parse_topology(std::string_view name);  // the inverse; nullopt for anything else

struct PlatformSpec {
  int64_t nodes = 1;
  int64_t gpus_per_node = 8;
  double nvlink_bytes_per_s = 0;  // each GPU's link to its node's switch, per direction
  double nvlink_latency_s = 0;    // the config's intra-node latency; documented, never put on a link
  double nic_bytes_per_s = 0;     // each GPU's share of its node's NIC bandwidth, per direction; 0: no
                                  // inter-node fabric (one node)
  double nic_latency_s = 0;       // the config's inter-node latency; documented, never put on a link
  std::string source;             // where the numbers came from, written into the XML header

  // The inter-node fabric. The defaults are a single non-blocking switch with one NIC per GPU: what the cost
  // model assumes, and what `run --executor sim` generates.
  Topology topology = Topology::kSingleSwitch;
  double oversubscription = 1;  // fat-tree / rail: a leaf's NIC bandwidth / its uplink bandwidth (> 0)
  int64_t nodes_per_leaf = 0;   // fat-tree: nodes under one leaf; rail: nodes (a pod) under one rail switch;
                                // 0: default_nodes_per_leaf (fabric.hpp)
  bool nic_per_node = false;    // true: one NIC per node of gpus_per_node x nic_bytes_per_s, shared by its GPUs
  int64_t leaves_per_zone = 0;  // fat-tree / rail: leaf switches per SimGrid zone, 1 (a zone per leaf) or more (a
                                // block, fabric.hpp); 0: fabric.hpp's zone_leaves picks by size

  int64_t gpus() const { return nodes * gpus_per_node; }
};

// The most GPUs (hosts) a platform holds: 2^24, the most ranks a job may have.
inline constexpr int64_t kMaxPlatformGpus = int64_t{1} << 24;

// The platform of a job of `world_size` ranks on `system`: nodes = ceil(world_size / num_per_node);
// NVLink per GPU = the intra tier (high_intra_node, or intra_node_pcie_8x when intra_with_pcie) in bytes/s;
// one NIC per GPU with inter_node.gbps / num_per_node (SimuMax's inter-node tier is per node); single switch.
// REQUIRES: world_size >= 1 and system.num_per_node >= 1 (checked by config; InternalError otherwise).
// Throws common::ConfigError if a tier the job needs is missing or has a non-positive bandwidth.
PlatformSpec platform_from_system(const config::SystemConfig& system, int64_t world_size);

// Host names of the naming convention shared by platform_xml, check_platform_xml and the sim executor.
// Job rank r is GPU r % gpus_per_node of node r / gpus_per_node.
std::string gpu_host_name(int64_t rank, int64_t gpus_per_node);  // "node{n}.gpu{g}": NVLink endpoint
std::string nic_host_name(int64_t rank);                         // "nic{r}": the same GPU's IB endpoint

}  // namespace simumax::platform
