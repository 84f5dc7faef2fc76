#include "engine/platform/platform_check.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/platform/did_you_mean.hpp"
#include "engine/platform/platform_schema.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/simgrid_units.hpp"
#include "engine/platform/xml_lite.hpp"

namespace simumax::platform {

namespace {

bool is_routed(const std::string& routing) {
  return routing == "Full" || routing == "Floyd" || routing == "Dijkstra" || routing == "DijkstraCache";
}

class Checker {
 public:
  Checker(const xml::Document& doc, const std::string& path, int64_t world, int64_t gpn)
      : doc_(doc), path_(path), world_(world), gpn_(gpn) {}

  void run() {
    check_doctype(doc_, path_);
    for (size_t i = 0; i < doc_.elements.size(); ++i) check_element(static_cast<int>(i));
    for (size_t i = 0; i < doc_.elements.size(); ++i) check_references(static_cast<int>(i));
    check_convention();
  }

 private:
  [[noreturn]] void fail(const xml::Element& e, const std::string& message) const {
    throw common::ConfigError(path_, xml::where(e), message);
  }
  const xml::Element& at(int index) const { return doc_.elements[static_cast<size_t>(index)]; }
  const std::string& attr(const xml::Element& e, const char* key) const { return *e.find(key); }
  const std::string& routing_of(int zone) const { return attr(at(zone), "routing"); }

  double quantity(const xml::Element& e, const char* key, Quantity q) const {
    std::string error;
    std::optional<double> parsed = parse_quantity(q, attr(e, key), &error);
    if (!parsed) fail(e, std::string(key) + ": " + error);
    return *parsed;
  }

  void add_netpoint(int index) {
    const std::string& id = attr(at(index), "id");
    auto [it, inserted] = netpoints_.try_emplace(id, index);
    if (!inserted) {
      fail(at(index), "duplicate name \"" + id + "\": already used by " + xml::describe(at(it->second)) + " at line " +
                          std::to_string(at(it->second).line));
    }
  }

  void add_link_name(int index, const std::string& name) {
    auto [it, inserted] = link_names_.try_emplace(name, index);
    if (!inserted) {
      fail(at(index), "duplicate link name \"" + name + "\": already used by " + xml::describe(at(it->second)) +
                          " at line " + std::to_string(at(it->second).line));
    }
  }

  void check_link_values(int index) {
    const xml::Element& e = at(index);
    const double bandwidth = quantity(e, "bandwidth", Quantity::kBandwidth);
    if (!(bandwidth > 0)) fail(e, "bandwidth \"" + attr(e, "bandwidth") + "\" must be > 0");
    if (quantity(e, "latency", Quantity::kTime) < 0) fail(e, "latency \"" + attr(e, "latency") + "\" is < 0");
    const std::string* policy = e.find("sharing_policy");
    const std::string id = attr(e, "id");
    if (policy != nullptr && *policy == "SPLITDUPLEX") {
      add_link_name(index, id);  // reserved: a link_ctn may name it with a direction
      split_links_.emplace(id, index);
      add_link_name(index, id + "_UP");
      add_link_name(index, id + "_DOWN");
      plain_links_.emplace(id + "_UP", index);
      plain_links_.emplace(id + "_DOWN", index);
      return;
    }
    if (policy != nullptr && *policy != "SHARED" && *policy != "FATPIPE") {
      fail(e, "sharing_policy \"" + *policy + "\" is not supported (use SHARED, SPLITDUPLEX or FATPIPE)");
    }
    add_link_name(index, id);
    plain_links_.emplace(id, index);
  }

  void check_element(int index) {
    check_schema(doc_, index, path_);
    const xml::Element& e = at(index);
    if (e.name == "platform" && attr(e, "version") != "4.1") {
      fail(e, "version \"" + attr(e, "version") + "\" is not supported (write version=\"4.1\")");
    } else if (e.name == "zone") {
      check_zone(index);
    } else if (e.name == "host") {
      add_netpoint(index);
      zone_of_host_[attr(e, "id")] = e.parent;
      for (std::string_view rest = attr(e, "speed");;) {  // one speed per power state, comma separated
        const size_t comma = rest.find(',');
        std::string error;
        std::string_view one = rest.substr(0, comma);  // SimGrid trims each speed
        while (!one.empty() && std::isspace(static_cast<unsigned char>(one.back()))) one.remove_suffix(1);
        const std::optional<double> speed = parse_quantity(Quantity::kSpeed, one, &error);
        if (!speed) fail(e, "speed: " + error);
        if (!(*speed > 0)) fail(e, "speed \"" + attr(e, "speed") + "\" must be > 0");
        if (comma == std::string_view::npos) break;
        rest = rest.substr(comma + 1);
      }
    } else if (e.name == "router") {
      add_netpoint(index);
    } else if (e.name == "link") {
      check_link_values(index);
    } else if (e.name == "backbone") {
      check_backbone(index);
    }
  }

  void check_zone(int index) {
    const xml::Element& e = at(index);
    const std::string& routing = attr(e, "routing");
    if (routing != "Cluster" && routing != "None" && !is_routed(routing)) {
      fail(e, "routing \"" + routing + "\" is not supported" +
                  did_you_mean(routing, {"Cluster", "Full", "Floyd", "Dijkstra", "None"}) +
                  " (use Cluster, Full, Floyd, Dijkstra, DijkstraCache or None)");
    }
    if (e.parent >= 0 && at(e.parent).name == "platform" && top_zone_ >= 0) {
      fail(e, "a second top-level zone (the platform already has " + xml::describe(at(top_zone_)) + ")");
    }
    if (e.parent >= 0 && at(e.parent).name == "platform") top_zone_ = index;
    add_netpoint(index);
    bool has_zones = false, has_hosts = false;
    for (int child : e.children) {
      has_zones |= at(child).name == "zone";
      has_hosts |= at(child).name == "host" || at(child).name == "router" || at(child).name == "host_link" ||
                   at(child).name == "route";
    }
    if (has_zones && has_hosts) fail(e, "a zone holds either zones or hosts (with their routes), not both");
    // SimGrid's parser follows the DTD's order: properties first, routes last.
    bool seen_other = false, seen_route = false;
    for (int child : e.children) {
      const std::string& name = at(child).name;
      if (name == "prop" && seen_other) fail(at(child), "<prop> must come before the other elements of its zone");
      if (name != "route" && name != "prop" && seen_route) {
        fail(at(child), "<" + name + "> after a <route>: SimGrid needs all routes at the end of their zone");
      }
      seen_route |= name == "route";
      seen_other |= name != "prop";
    }
  }

  void check_backbone(int index) {
    const xml::Element& e = at(index);
    if (routing_of(e.parent) != "Cluster") fail(e, "<backbone> is only allowed in a zone with routing=\"Cluster\"");
    if (!has_backbone_.emplace(e.parent, index).second) fail(e, "a zone can have only one <backbone>");
    if (!(quantity(e, "bandwidth", Quantity::kBandwidth) > 0)) {
      fail(e, "bandwidth \"" + attr(e, "bandwidth") + "\" must be > 0");
    }
    if (quantity(e, "latency", Quantity::kTime) < 0) fail(e, "latency \"" + attr(e, "latency") + "\" is < 0");
    add_link_name(index, attr(e, "id"));
    plain_links_.emplace(attr(e, "id"), index);
  }

  // A link that SimGrid can resolve from `user`: a plain or _UP/_DOWN name, created before `user` is resolved.
  void check_link_reference(const xml::Element& user, const std::string& name, bool same_zone_ok) const {
    auto it = plain_links_.find(name);
    if (it == plain_links_.end()) {
      if (split_links_.count(name) != 0) {
        fail(user,
             "link \"" + name + "\" is SPLITDUPLEX: name one direction, \"" + name + "_UP\" or \"" + name + "_DOWN\"");
      }
      std::vector<std::string> names;
      for (const auto& [n, _] : plain_links_) names.push_back(n);
      fail(user, "unknown link \"" + name + "\"" + did_you_mean(name, names));
    }
    const int link = it->second;
    const int user_index = static_cast<int>(&user - doc_.elements.data());
    if (link > user_index && !(same_zone_ok && at(link).parent == user.parent)) {
      fail(user, "link \"" + name + "\" is declared later (line " + std::to_string(at(link).line) +
                     "); SimGrid needs it declared first");
    }
  }

  void check_host_link(const xml::Element& e) {
    if (routing_of(e.parent) != "Cluster") fail(e, "<host_link> is only allowed in a zone with routing=\"Cluster\"");
    const std::string& host = attr(e, "id");
    auto zone = zone_of_host_.find(host);
    if (zone == zone_of_host_.end()) {
      std::vector<std::string> names;
      for (const auto& [n, _] : zone_of_host_) names.push_back(n);
      fail(e, "unknown host \"" + host + "\"" + did_you_mean(host, names));
    }
    if (zone->second != e.parent) fail(e, "host \"" + host + "\" belongs to another zone");
    auto [it, inserted] = host_link_of_.try_emplace(host, static_cast<int>(&e - doc_.elements.data()));
    if (!inserted)
      fail(e, "host \"" + host + "\" already has a <host_link> at line " + std::to_string(at(it->second).line));
    check_link_reference(e, attr(e, "up"), true);
    check_link_reference(e, attr(e, "down"), true);
  }

  void check_route(const xml::Element& e) {
    const std::string& routing = routing_of(e.parent);
    if (!is_routed(routing)) {
      fail(e, "<route> is not allowed in a zone with routing=\"" + routing + "\"" +
                  (routing == "Cluster" ? " (a Cluster zone connects each host with <host_link>)" : ""));
    }
    for (const char* end : {"src", "dst"}) {
      const std::string& name = attr(e, end);
      auto it = netpoints_.find(name);
      if (it == netpoints_.end() || at(it->second).name == "zone" || at(it->second).parent != e.parent) {
        std::vector<std::string> names;
        for (int child : at(e.parent).children) {
          if (at(child).name == "host" || at(child).name == "router") names.push_back(attr(at(child), "id"));
        }
        fail(e,
             std::string(end) + " \"" + name + "\" is not a host or router of this zone" + did_you_mean(name, names));
      }
      routed_.emplace(name);
    }
    const std::string* symmetrical = e.find("symmetrical");
    if (symmetrical != nullptr && *symmetrical != "YES" && *symmetrical != "NO" && *symmetrical != "yes" &&
        *symmetrical != "no") {
      fail(e, "symmetrical must be YES or NO, not \"" + *symmetrical + "\"");
    }
    const std::string& src = attr(e, "src");
    const std::string& dst = attr(e, "dst");
    add_route_edge(e, src, dst);
    if ((symmetrical == nullptr || *symmetrical == "YES" || *symmetrical == "yes") && src != dst) {
      add_route_edge(e, dst, src);
    }
    // SimGrid aborts on a route without links and of zero latency ("no connecting path").
    if (e.children.empty()) fail(e, "a route needs at least one <link_ctn>");
  }

  // SimGrid asserts (aborts) on a second route between the same ends, symmetrical copies included.
  void add_route_edge(const xml::Element& e, const std::string& src, const std::string& dst) {
    auto [it, inserted] = route_edges_.try_emplace(src + '\n' + dst, static_cast<int>(&e - doc_.elements.data()));
    if (!inserted) {
      fail(e, "a route from " + src + " to " + dst + " already exists (line " + std::to_string(at(it->second).line) +
                  "; routes are symmetrical unless symmetrical=\"NO\")");
    }
    next_hops_[src].push_back(dst);
  }

  void check_link_ctn(const xml::Element& e) {
    const std::string& id = attr(e, "id");
    const std::string* direction = e.find("direction");
    if (direction == nullptr || *direction == "NONE") return check_link_reference(e, id, false);
    if (*direction != "UP" && *direction != "DOWN") fail(e, "direction must be UP, DOWN or NONE");
    auto it = split_links_.find(id);
    if (it == split_links_.end())
      fail(e, "direction " + *direction + " needs a SPLITDUPLEX link; \"" + id + "\" is not one");
    if (it->second > static_cast<int>(&e - doc_.elements.data())) fail(e, "link \"" + id + "\" is declared later");
  }

  void check_references(int index) {
    const xml::Element& e = at(index);
    if (e.name == "host_link") check_host_link(e);
    if (e.name == "route") check_route(e);
    if (e.name == "link_ctn") check_link_ctn(e);
  }

  // The host named `name` exists and can send/receive; returns its zone.
  int check_endpoint(const std::string& name) const {
    const int host = netpoints_.at(name);
    if (at(host).name != "host") fail(at(host), "\"" + name + "\" must be a <host> (naming convention of simumax-sim)");
    const int zone = at(host).parent;
    const std::string& routing = routing_of(zone);
    if (routing == "Cluster" && host_link_of_.count(name) == 0) {
      fail(at(host), "has no <host_link>: in a Cluster zone a host without one has no route (SimGrid aborts)");
    }
    if (is_routed(routing) && routed_.count(name) == 0) fail(at(host), "no <route> starts or ends at this host");
    if (routing == "None") fail(at(host), "is in a zone with routing=\"None\": it cannot reach any other host");
    return zone;
  }

  // In a routed zone every host of `group` needs a route to every other: a direct <route> in a Full zone,
  // a chain of routes (through routers) in a Floyd or Dijkstra zone. SimGrid aborts on a missing one.
  void check_routes_between(const std::vector<std::string>& group, int zone) const {
    const bool multi_hop = routing_of(zone) != "Full";
    for (const std::string& from : group) {
      std::unordered_set<std::string> reached;
      std::vector<std::string> frontier = {from};
      while (!frontier.empty()) {
        const std::string at_host = std::move(frontier.back());
        frontier.pop_back();
        auto hops = next_hops_.find(at_host);
        if (hops == next_hops_.end()) continue;
        for (const std::string& next : hops->second) {
          if (reached.insert(next).second && multi_hop) frontier.push_back(next);
        }
      }
      for (const std::string& to : group) {
        if (to != from && reached.count(to) == 0) {
          fail(at(netpoints_.at(from)), "no route from " + from + " to " + to + " in " + xml::describe(at(zone)) +
                                            " (these hosts exchange data; SimGrid aborts on a missing route)");
        }
      }
    }
  }

  void check_ranks(bool nic) {
    const int64_t count = world_;
    int64_t missing = 0;
    std::string first_missing;
    for (int64_t r = 0; r < count; ++r) {
      const std::string name = nic ? nic_host_name(r) : gpu_host_name(r, gpn_);
      if (netpoints_.count(name) == 0) {
        if (missing++ == 0) first_missing = name;
      }
    }
    if (missing > 0) {
      fail(at(0), "too few " + std::string(nic ? "NIC" : "GPU") + " hosts: world size " + std::to_string(world_) +
                      " (" + std::to_string(gpn_) + " GPUs per node) needs " +
                      (nic ? nic_host_name(0) + " .. " + nic_host_name(count - 1)
                           : gpu_host_name(0, gpn_) + " .. " + gpu_host_name(count - 1, gpn_)) +
                      "; " + std::to_string(missing) + " missing, the first is " + first_missing);
    }
    // GPUs of one node talk to each other, every NIC to every other: each group must share a zone, as
    // routes between sibling zones are not supported.
    std::vector<std::string> group;
    int shared_zone = -1;
    for (int64_t r = 0; r < count; ++r) {
      const std::string name = nic ? nic_host_name(r) : gpu_host_name(r, gpn_);
      const int zone = check_endpoint(name);
      if (nic ? r == 0 : r % gpn_ == 0) shared_zone = zone;
      if (zone != shared_zone) {
        fail(at(netpoints_.at(name)), "must be in the same zone as " +
                                          (nic ? nic_host_name(0) : gpu_host_name(r - r % gpn_, gpn_)) + " (" +
                                          xml::describe(at(shared_zone)) + ")");
      }
      group.push_back(name);
      const bool group_ends = r + 1 == count || (!nic && (r + 1) % gpn_ == 0);
      if (group_ends && is_routed(routing_of(shared_zone))) check_routes_between(group, shared_zone);
      if (group_ends) group.clear();
    }
  }

  void check_convention() {
    check_ranks(false);
    if (world_ > gpn_) check_ranks(true);
  }

  const xml::Document& doc_;
  const std::string& path_;
  int64_t world_;
  int64_t gpn_;
  int top_zone_ = -1;
  std::unordered_map<std::string, int> netpoints_;     // host, router and zone ids -> element
  std::unordered_map<std::string, int> link_names_;    // every name a link takes -> element
  std::unordered_map<std::string, int> plain_links_;   // names a host_link or link_ctn may use -> element
  std::unordered_map<std::string, int> split_links_;   // SPLITDUPLEX base names -> element
  std::unordered_map<std::string, int> zone_of_host_;  // host -> its zone element
  std::unordered_map<std::string, int> host_link_of_;  // host -> its host_link element
  std::unordered_map<int, int> has_backbone_;          // zone -> backbone element
  std::unordered_set<std::string> routed_;             // hosts named by some <route>
  std::unordered_map<std::string, int> route_edges_;   // "src\ndst" of each route (and symmetrical copy)
  std::unordered_map<std::string, std::vector<std::string>> next_hops_;  // route graph of routed zones
};

}  // namespace

void check_platform_text(std::string_view text, const std::string& path, int64_t world_size, int64_t gpus_per_node) {
  if (world_size < 1 || gpus_per_node < 1) {
    throw common::InternalError("check_platform_xml: world_size and gpus_per_node must be >= 1");
  }
  const xml::Document doc = xml::parse(text, path);
  Checker(doc, path, world_size, gpus_per_node).run();
}

void check_platform_xml(const std::string& path, int64_t world_size, int64_t gpus_per_node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::ConfigError(path, "", "cannot open the platform file");
  std::ostringstream text;
  text << in.rdbuf();
  check_platform_text(text.str(), path, world_size, gpus_per_node);
}

}  // namespace simumax::platform
