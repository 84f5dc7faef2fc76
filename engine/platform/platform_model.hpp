// What check_platform_xml learns about a platform file while checking its elements, for the passes that follow
// (the <cluster> tag, the naming convention, routes between zones). Internal to engine/platform.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/platform/xml_lite.hpp"

namespace simumax::platform::detail {

struct PlatformModel {
  PlatformModel(const xml::Document& d, const std::string& p) : doc(d), path(p) {}

  const xml::Document& doc;
  const std::string& path;

  // host, router, zone and <cluster> ids -> element (a <cluster>'s hosts and router -> the <cluster>)
  std::unordered_map<std::string, int> netpoints;
  std::unordered_set<std::string> cluster_hosts;             // hosts a <cluster> creates (each has its own link)
  std::unordered_map<std::string, std::string> cluster_router;  // flat <cluster> id -> the router it creates
  std::unordered_map<std::string, int> link_names;           // every name a link takes -> element
  std::unordered_map<std::string, int> plain_links;          // names a host_link or link_ctn may use -> element
  std::unordered_map<std::string, int> split_links;          // SPLITDUPLEX base names -> element
  std::unordered_map<std::string, int> zone_of;              // host or router -> its zone (or <cluster>) element
  std::unordered_map<std::string, int> host_link_of;         // host -> its host_link element
  std::unordered_map<int, int> backbone_of;                  // zone -> backbone element
  std::unordered_set<std::string> routed;                    // hosts and routers named by some <route>
  std::unordered_map<std::string, int> route_edges;          // "src\ndst" of each route / zoneRoute (and copies)
  std::unordered_map<std::string, std::vector<std::string>> next_hops;  // <route> graph inside routed zones
  std::unordered_map<int, std::vector<int>> zone_hops;       // <zoneRoute> graph: zone element -> zone elements
  std::unordered_map<int, std::vector<std::string>> gateways;  // routed zone -> the gateways its <zoneRoute>s name
  int top_zone = -1;
  int fat_tree = -1;  // the FAT_TREE <cluster>, if any

  const xml::Element& at(int index) const { return doc.elements[static_cast<size_t>(index)]; }
  int index_of(const xml::Element& e) const { return static_cast<int>(&e - doc.elements.data()); }
  const std::string& attr(const xml::Element& e, const char* key) const { return *e.find(key); }
  // The routing of a zone element; a <cluster> counts as "Cluster".
  const std::string& routing_of(int zone) const;
  [[noreturn]] void fail(const xml::Element& e, const std::string& message) const;
  void add_netpoint(const std::string& id, int index);
  void add_link_name(const std::string& name, int index);
};

bool is_routed(const std::string& routing);

// Checks a <cluster> element (attributes, radicals, FAT_TREE parameters) and records the hosts, router and
// links SimGrid will create for it.
void check_cluster(PlatformModel& m, int index);

// The naming convention and the routes between the hosts that exchange data (platform_check.hpp's contract).
void check_convention(const PlatformModel& m, int64_t world_size, int64_t gpus_per_node);

}  // namespace simumax::platform::detail
