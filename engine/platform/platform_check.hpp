// Validation of a platform XML before SimGrid reads it: SimGrid 3.32 aborts (SIGABRT, no catch helps) on
// duplicate names, unknown references and some unroutable hosts, so every such mistake must be found here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simumax::platform {

// Checks the platform file at `path` for a job of `world_size` ranks with `gpus_per_node` GPUs per node:
//  * well-formed XML with SimGrid's DOCTYPE, root <platform version="4.1">, one top-level <zone>; only the
//    elements and attributes simumax-sim supports (platform, zone, host, link, backbone, host_link, router,
//    route, link_ctn, prop), in the order SimGrid's parser accepts;
//  * no duplicate host/router/zone names, no duplicate link names (a SPLITDUPLEX link "x" also takes the
//    names x_UP and x_DOWN), no second route between the same two ends;
//  * link bandwidths parse with a SimGrid unit and are > 0; latencies parse with a unit and are >= 0;
//  * host_link / route / link_ctn name hosts and links that exist where SimGrid will look for them;
//  * the naming convention of platform_xml: hosts node{r/gpn}.gpu{r%gpn} for every rank r < world_size,
//    and nic{r} as well when the job spans more than one node. The GPUs of one node share a zone, and so do
//    all NICs; in a Cluster zone each has a host_link; in a Full zone each pair has a route, in a Floyd or
//    Dijkstra zone a chain of routes.
// Throws common::ConfigError(path, "line N: <element id=...>", message) for the first problem found.
// Everything it accepts loads in SimGrid 3.32 without aborting (a test mutates platforms to check this).
// REQUIRES: world_size >= 1, gpus_per_node >= 1.
void check_platform_xml(const std::string& path, int64_t world_size, int64_t gpus_per_node);

// The same check on text already in memory; `path` only names the file in errors.
void check_platform_text(std::string_view text, const std::string& path, int64_t world_size, int64_t gpus_per_node);

}  // namespace simumax::platform
