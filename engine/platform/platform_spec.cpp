#include "engine/platform/platform_spec.hpp"

#include <cmath>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"

namespace simumax::platform {

namespace {

const config::NetworkConfig& tier(const config::SystemConfig& system, const std::string& name) {
  auto it = system.networks.find(name);
  const std::string file = system.sys_name.empty() ? "system config" : system.sys_name;
  if (it == system.networks.end()) {
    throw common::ConfigError(file, "/networks/" + name, "missing: the platform needs this network tier");
  }
  const double gbps = it->second.bandwidth.gbps;
  if (!(gbps > 0) || !std::isfinite(gbps)) {
    throw common::ConfigError(file, "/networks/" + name + "/bandwidth/gbps",
                              "must be > 0 to build the platform, got " + std::to_string(gbps));
  }
  return it->second;
}

}  // namespace

PlatformSpec platform_from_system(const config::SystemConfig& system, int64_t world_size) {
  if (world_size < 1 || system.num_per_node < 1) {
    throw common::InternalError("platform_from_system: world_size " + std::to_string(world_size) +
                                " and num_per_node " + std::to_string(system.num_per_node) + " must be >= 1");
  }
  PlatformSpec spec;
  spec.gpus_per_node = system.num_per_node;
  spec.nodes = (world_size + system.num_per_node - 1) / system.num_per_node;
  const std::string intra_name = system.intra_with_pcie ? "intra_node_pcie_8x" : "high_intra_node";
  const config::NetworkConfig& intra = tier(system, intra_name);
  spec.nvlink_bytes_per_s = intra.bandwidth.gbps * common::kGiB;
  spec.nvlink_latency_s = intra.bandwidth.latency_us * 1e-6;
  spec.source = "system \"" + system.sys_name + "\": intra tier " + intra_name;
  // A single-node job never leaves the node, so its system config may omit the inter-node tier.
  if (spec.nodes > 1 || system.networks.count("inter_node") != 0) {
    const config::NetworkConfig& inter = tier(system, "inter_node");
    // SimuMax's inter_node gbps is the bandwidth of a whole node: its p2p formula divides it by
    // num_per_node. Each GPU gets its own NIC with that share, so a lone inter-node p2p runs at the
    // rate SimuMax charges for it.
    spec.nic_bytes_per_s = inter.bandwidth.gbps * common::kGiB / static_cast<double>(system.num_per_node);
    spec.nic_latency_s = inter.bandwidth.latency_us * 1e-6;
    spec.source += ", inter tier inter_node";
  }
  return spec;
}

const char* to_string(Topology t) {
  switch (t) {
    case Topology::kSingleSwitch: return "single-switch";
    case Topology::kFatTree: return "fat-tree";
    case Topology::kRail: return "rail";
  }
  return "?";
}

std::optional<Topology> parse_topology(std::string_view name) {
  for (Topology t : {Topology::kSingleSwitch, Topology::kFatTree, Topology::kRail}) {
    if (name == to_string(t)) return t;
  }
  return std::nullopt;
}

std::string gpu_host_name(int64_t rank, int64_t gpus_per_node) {
  return "node" + std::to_string(rank / gpus_per_node) + ".gpu" + std::to_string(rank % gpus_per_node);
}

std::string nic_host_name(int64_t rank) { return "nic" + std::to_string(rank); }

}  // namespace simumax::platform
