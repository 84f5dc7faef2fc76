// Writes a PlatformSpec as a readable, commented SimGrid v4.1 platform XML that a person can edit and pass
// back to the simulator. The header comment of the file explains the structure and the naming convention.
#pragma once

#include <string>

#include "engine/platform/platform_spec.hpp"

namespace simumax::platform {

// The platform XML of `spec`: one host per GPU ("node{n}.gpu{g}", its intra-node endpoint) in zone
// "intra_node", one host per GPU NIC ("nic{r}", r = n * gpus_per_node + g) under zone "inter_node", each GPU
// with its own split-duplex link of latency 0 (see the file's header for why); with nic_per_node the NIC
// hosts of a node share one link "inter.node{n}". The inter-node fabric follows spec.topology:
//  * single-switch: "inter_node" is one Cluster zone (a star: every NIC link meets one non-blocking switch);
//  * fat-tree / rail: "inter_node" is a Floyd zone over one Cluster zone per leaf (fabric_layout's leaves,
//    router "<leaf>.switch") and a zone "spine" (router "spine.switch"); each leaf reaches the spine through
//    its trunk link "<leaf>.uplink" (a <zoneRoute>).
// The inter_node zone is omitted when spec.nic_bytes_per_s == 0 (then spec.nodes must be 1).
// REQUIRES: spec.nodes >= 1, spec.gpus_per_node >= 1, spec.nvlink_bytes_per_s > 0, and what fabric_layout
// requires (InternalError otherwise). Deterministic: the same spec gives the same bytes.
std::string platform_xml(const PlatformSpec& spec);

// A bandwidth in the shortest SimGrid spelling that reads back to exactly the same double
// ("900GiBps", "12.5GiBps", "1000000Bps").
std::string format_bandwidth(double bytes_per_s);

}  // namespace simumax::platform
