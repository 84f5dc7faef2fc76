// Validation of a platform XML before SimGrid reads it: SimGrid 3.32 aborts (SIGABRT, no catch helps) on
// duplicate names, unknown references and some unroutable hosts, so every such mistake must be found here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace simumax::platform {

// Checks the platform file at `path` for a job of `world_size` ranks with `gpus_per_node` GPUs per node:
//  * well-formed XML with SimGrid's DOCTYPE (no "--" inside comments), root <platform version="4.1">, one
//    top-level <zone> or <cluster>; only the elements and attributes simumax-sim supports (platform, zone,
//    cluster, host, router, link, backbone, host_link, route, zoneRoute, link_ctn, prop), where and in the order
//    SimGrid's DTD accepts them (a zone holds either zones, clusters and links then zoneRoutes, or hosts,
//    routers, links and host_links then routes);
//  * no duplicate host/router/zone names, no duplicate link names (a SPLITDUPLEX link "x" also takes the
//    names x_UP and x_DOWN; a <cluster> takes the names SimGrid gives its hosts, router and links), no second
//    route or zoneRoute between the same two ends;
//  * bandwidths parse with a SimGrid unit and are > 0; latencies parse with a unit and are >= 0; a <cluster>'s
//    radicals, topology (FLAT or FAT_TREE) and FAT_TREE topo_parameters (their host count = the radicals');
//  * host_link / route / zoneRoute / link_ctn name hosts, routers, zones and links that exist where SimGrid
//    will look for them; a zoneRoute joins zones directly inside its zone, through routers directly inside
//    them (Cluster zones or flat <cluster>s);
//  * the naming convention of platform_xml: hosts node{r/gpn}.gpu{r%gpn} for every rank r < world_size,
//    and nic{r} as well when the job spans more than one node; the GPUs of each node, and all NICs, reach each
//    other: in one zone by host_links (Cluster), routes (Full) or chains of routes (Floyd, Dijkstra); across
//    zones, those zones must sit directly inside a routed zone that joins them by zoneRoutes (a chain of them
//    in Floyd and Dijkstra zones).
// Throws common::ConfigError(path, "line N: <element id=...>", message) for the first problem found.
// Everything it accepts loads in SimGrid 3.32 without aborting (tests mutate platforms to check this).
// REQUIRES: world_size >= 1, gpus_per_node >= 1.
void check_platform_xml(const std::string& path, int64_t world_size, int64_t gpus_per_node);

// The same check on text already in memory; `path` only names the file in errors.
void check_platform_text(std::string_view text, const std::string& path, int64_t world_size, int64_t gpus_per_node);

}  // namespace simumax::platform
