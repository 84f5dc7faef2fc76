// The cluster a step runs on, as plain numbers: nodes, GPUs per node, and the two link tiers of SimuMax's
// system config (intra-node NVLink/PCIe, inter-node NIC). The platform XML and the sim executor start here.
#pragma once

#include <cstdint>
#include <string>

#include "engine/config/system_config.hpp"

namespace simumax::platform {

struct PlatformSpec {
  int64_t nodes = 1;
  int64_t gpus_per_node = 8;
  double nvlink_bytes_per_s = 0;  // each GPU's link to its node's switch, per direction
  double nvlink_latency_s = 0;    // the config's intra-node latency; documented, never put on a link
  double nic_bytes_per_s = 0;     // each GPU's own NIC, per direction; 0: no inter-node fabric (one node)
  double nic_latency_s = 0;       // the config's inter-node latency; documented, never put on a link
  std::string source;             // where the numbers came from, written into the XML header

  int64_t gpus() const { return nodes * gpus_per_node; }
};

// The platform of a job of `world_size` ranks on `system`: nodes = ceil(world_size / num_per_node);
// NVLink per GPU = the intra tier (high_intra_node, or intra_node_pcie_8x when intra_with_pcie) in bytes/s;
// one NIC per GPU with inter_node.gbps / num_per_node (SimuMax's inter-node tier is per node).
// REQUIRES: world_size >= 1 and system.num_per_node >= 1 (checked by config; InternalError otherwise).
// Throws common::ConfigError if a tier the job needs is missing or has a non-positive bandwidth.
PlatformSpec platform_from_system(const config::SystemConfig& system, int64_t world_size);

// Host names of the naming convention shared by platform_xml, check_platform_xml and the sim executor.
// Job rank r is GPU r % gpus_per_node of node r / gpus_per_node.
std::string gpu_host_name(int64_t rank, int64_t gpus_per_node);  // "node{n}.gpu{g}": NVLink endpoint
std::string nic_host_name(int64_t rank);                         // "nic{r}": the same GPU's IB endpoint

}  // namespace simumax::platform
