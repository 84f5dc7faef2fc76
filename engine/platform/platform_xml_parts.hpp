// Pieces of platform_xml shared by its two files: the intra-node part and the header (platform_xml.cpp), the
// inter-node fabric (fabric_xml.cpp). Not a public interface.
#pragma once

#include <string>

#include "engine/platform/fabric.hpp"
#include "engine/platform/platform_spec.hpp"

namespace simumax::platform::detail {

// The shortest fixed-point spelling of v that reads back bit-exactly ("900", "11.641532182693481").
std::string shortest(double v);

// One host, its link and the host_link tying them, on three lines, indented by `indent` spaces.
void append_endpoint(std::string& out, int indent, const std::string& host, const std::string& link,
                     const std::string& bandwidth);

// "<!-- node 3: job ranks 24..31 -->" (or "... job rank 29 (GPU 5)" for a rail leaf), indented.
std::string node_comment(int indent, int64_t node, int64_t gpus_per_node, int64_t rail = -1);

// The zone "inter_node" of `spec` (single switch, or leaves and spine), indented by 4.
void append_inter_node(std::string& out, const PlatformSpec& spec, const FabricLayout& layout);

// The STRUCTURE paragraphs of the header that describe the inter-node fabric.
std::string fabric_description(const PlatformSpec& spec, const FabricLayout& layout);

}  // namespace simumax::platform::detail
