// The naming convention of simumax-sim platform files, and whether the hosts that exchange data can reach each
// other: the GPUs of one node (NVLink endpoints) and all the NICs. SimGrid aborts on a missing route.
#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/platform/platform_model.hpp"
#include "engine/platform/platform_spec.hpp"

namespace simumax::platform::detail {

namespace {

class Convention {
 public:
  Convention(const PlatformModel& m, int64_t world, int64_t gpn) : m_(m), world_(world), gpn_(gpn) {}

  void run() {
    check_ranks(false);
    if (world_ > gpn_) check_ranks(true);
  }

 private:
  const xml::Element& at(int index) const { return m_.at(index); }
  [[noreturn]] void fail(const xml::Element& e, const std::string& message) const { m_.fail(e, message); }
  std::string host_name(int64_t rank, bool nic) const { return nic ? nic_host_name(rank) : gpu_host_name(rank, gpn_); }
  const xml::Element& element_of(const std::string& name) const { return at(m_.netpoints.at(name)); }

  // The host named `name` exists and can send/receive; returns its zone (or <cluster>) element.
  int check_endpoint(const std::string& name) const {
    const int element = m_.netpoints.at(name);
    if (m_.cluster_hosts.count(name) != 0) return element;
    if (at(element).name != "host") {
      fail(at(element), "\"" + name + "\" must be a <host> (naming convention of simumax-sim)");
    }
    const int zone = at(element).parent;
    const std::string& routing = m_.routing_of(zone);
    if (routing == "Cluster" && m_.host_link_of.count(name) == 0) {
      fail(at(element), "has no <host_link>: in a Cluster zone a host without one has no route (SimGrid aborts)");
    }
    if (is_routed(routing) && m_.routed.count(name) == 0) fail(at(element), "no <route> starts or ends at this host");
    if (routing == "None") fail(at(element), "is in a zone with routing=\"None\": it cannot reach any other host");
    return zone;
  }

  // In a routed zone every host of `group` needs a route to every other, and to each gateway a <zoneRoute> names
  // in the zone: a direct <route> in a Full zone, a chain of routes (through routers) in a Floyd or Dijkstra
  // zone. SimGrid aborts on a missing one.
  void check_routes_between(const std::vector<std::string>& group, int zone) const {
    std::vector<std::string> targets = group;
    if (auto gw = m_.gateways.find(zone); gw != m_.gateways.end()) {
      targets.insert(targets.end(), gw->second.begin(), gw->second.end());
    }
    const bool multi_hop = m_.routing_of(zone) != "Full";
    for (const std::string& from : group) {
      std::unordered_set<std::string> reached;
      std::vector<std::string> frontier = {from};
      while (!frontier.empty()) {
        const std::string at_host = std::move(frontier.back());
        frontier.pop_back();
        auto hops = m_.next_hops.find(at_host);
        if (hops == m_.next_hops.end()) continue;
        for (const std::string& next : hops->second) {
          if (reached.insert(next).second && multi_hop) frontier.push_back(next);
        }
      }
      for (const std::string& to : targets) {
        if (to != from && reached.count(to) == 0) {
          fail(element_of(from), "no route from " + from + " to " + to + " in " + xml::describe(at(zone)) +
                                     " (these hosts exchange data; SimGrid aborts on a missing route)");
        }
      }
    }
  }

  std::vector<int> ancestors(int zone) const {  // zone, its parent, ..., the top-level zone
    std::vector<int> chain;
    for (int z = zone; z >= 0 && (at(z).name == "zone" || at(z).name == "cluster"); z = at(z).parent) chain.push_back(z);
    return chain;
  }

  // Zones reachable from `from` over the <zoneRoute>s of its parent (one hop in a Full zone, chains in Floyd
  // and Dijkstra zones).
  const std::vector<bool>& reachable_from(int from) {
    auto it = reach_.find(from);
    if (it != reach_.end()) return it->second;
    std::vector<bool> seen(m_.doc.elements.size(), false);
    const bool multi_hop = m_.routing_of(at(from).parent) != "Full";
    std::vector<int> frontier = {from};
    while (!frontier.empty()) {
      const int z = frontier.back();
      frontier.pop_back();
      auto hops = m_.zone_hops.find(z);
      if (hops == m_.zone_hops.end()) continue;
      for (int next : hops->second) {
        if (seen[static_cast<size_t>(next)]) continue;
        seen[static_cast<size_t>(next)] = true;
        if (multi_hop) frontier.push_back(next);
      }
    }
    return reach_.emplace(from, std::move(seen)).first->second;
  }

  // Hosts `a` (in zone za) and `b` (in zone zb) talk through the zone where their zones' lines meet: SimGrid
  // routes there between the two zones just below it, which must be za and zb themselves (their routers are
  // the gateways) and joined by <zoneRoute>s.
  void check_zone_pair(const std::string& a, int za, const std::string& b, int zb) {
    const std::vector<int> up_a = ancestors(za), up_b = ancestors(zb);
    int common = -1;
    for (int z : up_a) {
      if (std::find(up_b.begin(), up_b.end(), z) != up_b.end()) {
        common = z;
        break;
      }
    }
    const std::string between = a + " (in " + xml::describe(at(za)) + ") and " + b + " (in " + xml::describe(at(zb)) + ")";
    if (common < 0 || !is_routed(m_.routing_of(common))) {
      fail(element_of(b), "no route between " + between + ": " +
                              (common < 0 ? std::string("they share no zone")
                                          : "the zone holding both, " + xml::describe(at(common)) +
                                                ", has routing=\"" + m_.routing_of(common) +
                                                "\" (use Floyd, Dijkstra or Full with <zoneRoute>s)"));
    }
    if (at(za).parent != common || at(zb).parent != common) {
      fail(element_of(b), "no supported route between " + between + ": simumax-sim needs the zones of hosts that talk "
                          "across zones directly inside the routed zone joining them (" +
                              xml::describe(at(common)) + ")");
    }
    if (!reachable_from(za)[static_cast<size_t>(zb)]) {
      fail(element_of(b), "no route between " + between + ": no <zoneRoute>" +
                              (m_.routing_of(common) == "Full" ? " " : " path ") + "from " + xml::describe(at(za)) +
                              " to " + xml::describe(at(zb)) + " in " + xml::describe(at(common)) +
                              " (SimGrid aborts on a missing route)");
    }
  }

  // Every member of `group` reaches every other: inside a zone by its routes, across zones by zoneRoutes.
  void check_group(const std::vector<std::string>& group, const std::vector<int>& zones) {
    std::map<int, std::vector<std::string>> by_zone;
    for (size_t i = 0; i < group.size(); ++i) by_zone[zones[i]].push_back(group[i]);
    for (const auto& [zone, members] : by_zone) {
      if (is_routed(m_.routing_of(zone)) && at(zone).name == "zone") check_routes_between(members, zone);
    }
    for (auto i = by_zone.begin(); i != by_zone.end(); ++i) {
      for (auto j = std::next(i); j != by_zone.end(); ++j) {
        check_zone_pair(i->second.front(), i->first, j->second.front(), j->first);
        check_zone_pair(j->second.front(), j->first, i->second.front(), i->first);
      }
    }
  }

  void check_ranks(bool nic) {
    int64_t missing = 0;
    std::string first_missing;
    for (int64_t r = 0; r < world_; ++r) {
      if (m_.netpoints.count(host_name(r, nic)) == 0 && missing++ == 0) first_missing = host_name(r, nic);
    }
    if (missing > 0) {
      fail(at(0), "too few " + std::string(nic ? "NIC" : "GPU") + " hosts: world size " + std::to_string(world_) +
                      " (" + std::to_string(gpn_) + " GPUs per node) needs " + host_name(0, nic) + " .. " +
                      host_name(world_ - 1, nic) + "; " + std::to_string(missing) + " missing, the first is " +
                      first_missing);
    }
    // GPUs of one node talk to each other over NVLink; every NIC to every other.
    std::vector<std::string> group;
    std::vector<int> zones;
    for (int64_t r = 0; r < world_; ++r) {
      group.push_back(host_name(r, nic));
      zones.push_back(check_endpoint(group.back()));
      if (r + 1 == world_ || (!nic && (r + 1) % gpn_ == 0)) {
        check_group(group, zones);
        group.clear();
        zones.clear();
      }
    }
  }

  const PlatformModel& m_;
  int64_t world_;
  int64_t gpn_;
  std::unordered_map<int, std::vector<bool>> reach_;
};

}  // namespace

void check_convention(const PlatformModel& m, int64_t world_size, int64_t gpus_per_node) {
  Convention(m, world_size, gpus_per_node).run();
}

}  // namespace simumax::platform::detail
