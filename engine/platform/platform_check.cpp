#include "engine/platform/platform_check.hpp"

#include <cctype>
#include <fstream>
#include <sstream>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/platform/did_you_mean.hpp"
#include "engine/platform/platform_model.hpp"
#include "engine/platform/platform_schema.hpp"
#include "engine/platform/simgrid_units.hpp"

namespace simumax::platform {

namespace detail {

bool is_routed(const std::string& routing) {
  return routing == "Full" || routing == "Floyd" || routing == "Dijkstra" || routing == "DijkstraCache";
}

const std::string& PlatformModel::routing_of(int zone) const {
  static const std::string kCluster = "Cluster";
  return at(zone).name == "cluster" ? kCluster : attr(at(zone), "routing");
}

void PlatformModel::fail(const xml::Element& e, const std::string& message) const {
  throw common::ConfigError(path, xml::where(e), message);
}

void PlatformModel::add_netpoint(const std::string& id, int index) {
  auto [it, inserted] = netpoints.try_emplace(id, index);
  if (!inserted) {
    fail(at(index), "duplicate name \"" + id + "\": already used by " + xml::describe(at(it->second)) + " at line " +
                        std::to_string(at(it->second).line));
  }
}

void PlatformModel::add_link_name(const std::string& name, int index) {
  if (fat_tree >= 0 && name.rfind("link_from_", 0) == 0) {
    fail(at(index), "link name \"" + name + "\": the FAT_TREE " + xml::describe(at(fat_tree)) +
                        " names its links link_from_*");
  }
  auto [it, inserted] = link_names.try_emplace(name, index);
  if (!inserted) {
    fail(at(index), "duplicate link name \"" + name + "\": already used by " + xml::describe(at(it->second)) +
                        " at line " + std::to_string(at(it->second).line));
  }
}

}  // namespace detail

namespace {

using detail::is_routed;

// Elements, names, values and references. The naming convention and the routes between zones come after
// (detail::check_convention), once every element is known.
class Checker {
 public:
  explicit Checker(detail::PlatformModel& m) : m_(m) {}

  void run() {
    check_doctype(m_.doc, m_.path);
    for (size_t i = 0; i < m_.doc.elements.size(); ++i) check_element(static_cast<int>(i));
    for (size_t i = 0; i < m_.doc.elements.size(); ++i) check_references(static_cast<int>(i));
  }

 private:
  const xml::Element& at(int index) const { return m_.at(index); }
  const std::string& attr(const xml::Element& e, const char* key) const { return m_.attr(e, key); }
  [[noreturn]] void fail(const xml::Element& e, const std::string& message) const { m_.fail(e, message); }

  double quantity(const xml::Element& e, const char* key, Quantity q) const {
    std::string error;
    std::optional<double> parsed = parse_quantity(q, attr(e, key), &error);
    if (!parsed) fail(e, std::string(key) + ": " + error);
    return *parsed;
  }

  void check_bandwidth_latency(const xml::Element& e) const {
    // Below 1 kBps no flow of a training step ends within SimGrid's precision (a 1e-300Bps link left thousands
    // of tasks unfinished); above 1 EBps no link exists.
    const double bw = quantity(e, "bandwidth", Quantity::kBandwidth);
    if (!(bw >= 1e3 && bw <= 1e18)) {
      fail(e, "bandwidth \"" + attr(e, "bandwidth") + "\" is outside [1kBps, 1EBps]");
    }
    if (quantity(e, "latency", Quantity::kTime) < 0) fail(e, "latency \"" + attr(e, "latency") + "\" is < 0");
  }

  void check_link_values(int index) {
    const xml::Element& e = at(index);
    check_bandwidth_latency(e);
    const std::string* policy = e.find("sharing_policy");
    const std::string& id = attr(e, "id");
    if (policy != nullptr && *policy == "SPLITDUPLEX") {
      m_.add_link_name(id, index);  // reserved: a link_ctn may name it with a direction
      m_.split_links.emplace(id, index);
      for (const char* suffix : {"_UP", "_DOWN"}) {
        m_.add_link_name(id + suffix, index);
        m_.plain_links.emplace(id + suffix, index);
      }
      return;
    }
    if (policy != nullptr && *policy != "SHARED" && *policy != "FATPIPE") {
      fail(e, "sharing_policy \"" + *policy + "\" is not supported (use SHARED, SPLITDUPLEX or FATPIPE)");
    }
    m_.add_link_name(id, index);
    m_.plain_links.emplace(id, index);
  }

  void check_host(int index) {
    const xml::Element& e = at(index);
    m_.add_netpoint(attr(e, "id"), index);
    m_.zone_of[attr(e, "id")] = e.parent;
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
  }

  void check_element(int index) {
    check_schema(m_.doc, index, m_.path);
    const xml::Element& e = at(index);
    if (e.name == "platform" && attr(e, "version") != "4.1") {
      fail(e, "version \"" + attr(e, "version") + "\" is not supported (write version=\"4.1\")");
    } else if (e.name == "zone" || e.name == "cluster") {
      check_top_level(index);
      if (e.name == "zone") check_zone(index);
      if (e.name == "cluster") detail::check_cluster(m_, index);
    } else if (e.name == "host") {
      check_host(index);
    } else if (e.name == "router") {
      m_.add_netpoint(attr(e, "id"), index);
      m_.zone_of[attr(e, "id")] = e.parent;
    } else if (e.name == "link") {
      check_link_values(index);
    } else if (e.name == "backbone") {
      check_backbone(index);
    } else if (e.name == "zoneRoute" || e.name == "route") {
      const std::string& routing = m_.routing_of(e.parent);
      if (!is_routed(routing)) {
        fail(e, "<" + e.name + "> is not allowed in a zone with routing=\"" + routing + "\"" +
                    (routing == "Cluster" ? " (a Cluster zone connects each host with <host_link>)" : ""));
      }
    }
  }

  void check_top_level(int index) {
    const xml::Element& e = at(index);
    if (e.parent < 0 || at(e.parent).name != "platform") return;
    if (m_.top_zone >= 0) {
      fail(e, "a second top-level zone (the platform already has " + xml::describe(at(m_.top_zone)) + ")");
    }
    m_.top_zone = index;
  }

  // SimGrid's DTD: a zone holds either zones (and clusters, links, then zoneRoutes) or hosts (and routers,
  // links, host_links, then routes); properties come first.
  void check_zone(int index) {
    const xml::Element& e = at(index);
    const std::string& routing = attr(e, "routing");
    if (routing != "Cluster" && routing != "None" && !is_routed(routing)) {
      fail(e, "routing \"" + routing + "\" is not supported" +
                  did_you_mean(routing, {"Cluster", "Full", "Floyd", "Dijkstra", "None"}) +
                  " (use Cluster, Full, Floyd, Dijkstra, DijkstraCache or None)");
    }
    m_.add_netpoint(attr(e, "id"), index);
    bool has_zones = false, has_hosts = false;
    for (int child : e.children) {
      const std::string& name = at(child).name;
      has_zones |= name == "zone" || name == "cluster" || name == "zoneRoute";
      has_hosts |= name == "host" || name == "router" || name == "host_link" || name == "route";
    }
    if (has_zones && has_hosts) {
      fail(e, "a zone holds either zones (with <zoneRoute>s) or hosts and routers (with their routes), not both");
    }
    bool seen_other = false, seen_route = false;
    for (int child : e.children) {
      const std::string& name = at(child).name;
      const bool is_route = name == "route" || name == "zoneRoute";
      if (name == "prop" && seen_other) fail(at(child), "<prop> must come before the other elements of its zone");
      if (!is_route && name != "prop" && seen_route) {
        fail(at(child), "<" + name + "> after a <" + (has_zones ? "zoneRoute" : "route") +
                            ">: SimGrid needs all routes at the end of their zone");
      }
      seen_route |= is_route;
      seen_other |= name != "prop";
    }
  }

  void check_backbone(int index) {
    const xml::Element& e = at(index);
    if (m_.routing_of(e.parent) != "Cluster") {
      fail(e, "<backbone> is only allowed in a zone with routing=\"Cluster\"");
    }
    if (!m_.backbone_of.emplace(e.parent, index).second) fail(e, "a zone can have only one <backbone>");
    check_bandwidth_latency(e);
    m_.add_link_name(attr(e, "id"), index);
    m_.plain_links.emplace(attr(e, "id"), index);
  }

  // A link that SimGrid can resolve from `user`: a plain or _UP/_DOWN name, created before `user` is resolved.
  void check_link_reference(const xml::Element& user, const std::string& name, bool same_zone_ok) const {
    auto it = m_.plain_links.find(name);
    if (it == m_.plain_links.end()) {
      if (m_.split_links.count(name) != 0) {
        fail(user,
             "link \"" + name + "\" is SPLITDUPLEX: name one direction, \"" + name + "_UP\" or \"" + name + "_DOWN\"");
      }
      std::vector<std::string> names;
      for (const auto& [n, _] : m_.plain_links) names.push_back(n);
      fail(user, "unknown link \"" + name + "\"" + did_you_mean(name, names));
    }
    const int link = it->second;
    if (link > m_.index_of(user) && !(same_zone_ok && at(link).parent == user.parent)) {
      fail(user, "link \"" + name + "\" is declared later (line " + std::to_string(at(link).line) +
                     "); SimGrid needs it declared first");
    }
  }

  void check_host_link(const xml::Element& e) {
    if (m_.routing_of(e.parent) != "Cluster") fail(e, "<host_link> is only allowed in a zone with routing=\"Cluster\"");
    const std::string& host = attr(e, "id");
    auto zone = m_.zone_of.find(host);
    if (zone == m_.zone_of.end() || at(m_.netpoints.at(host)).name != "host") {
      std::vector<std::string> names;
      for (int child : at(e.parent).children) {
        if (at(child).name == "host") names.push_back(attr(at(child), "id"));
      }
      fail(e, "unknown host \"" + host + "\"" + did_you_mean(host, names));
    }
    if (zone->second != e.parent) fail(e, "host \"" + host + "\" belongs to another zone");
    auto [it, inserted] = m_.host_link_of.try_emplace(host, m_.index_of(e));
    if (!inserted) {
      fail(e, "host \"" + host + "\" already has a <host_link> at line " + std::to_string(at(it->second).line));
    }
    check_link_reference(e, attr(e, "up"), true);
    check_link_reference(e, attr(e, "down"), true);
  }

  // SimGrid asserts (aborts) on a second route between the same ends, symmetrical copies included.
  void add_route_edge(const xml::Element& e, const std::string& src, const std::string& dst) {
    auto [it, inserted] = m_.route_edges.try_emplace(src + '\n' + dst, m_.index_of(e));
    if (!inserted) {
      fail(e, "a route from " + src + " to " + dst + " already exists (line " + std::to_string(at(it->second).line) +
                  "; routes are symmetrical unless symmetrical=\"NO\")");
    }
  }

  bool symmetrical(const xml::Element& e) const {
    const std::string* s = e.find("symmetrical");
    if (s != nullptr && *s != "YES" && *s != "NO" && *s != "yes" && *s != "no") {
      fail(e, "symmetrical must be YES or NO, not \"" + *s + "\"");
    }
    return s == nullptr || *s == "YES" || *s == "yes";
  }

  void check_route(const xml::Element& e) {
    for (const char* end : {"src", "dst"}) {
      const std::string& name = attr(e, end);
      auto it = m_.netpoints.find(name);
      if (it == m_.netpoints.end() || at(it->second).name == "zone" || at(it->second).parent != e.parent) {
        std::vector<std::string> names;
        for (int child : at(e.parent).children) {
          if (at(child).name == "host" || at(child).name == "router") names.push_back(attr(at(child), "id"));
        }
        fail(e,
             std::string(end) + " \"" + name + "\" is not a host or router of this zone" + did_you_mean(name, names));
      }
      m_.routed.emplace(name);
    }
    const std::string& src = attr(e, "src");
    const std::string& dst = attr(e, "dst");
    const bool both_ways = symmetrical(e) && src != dst;
    add_route_edge(e, src, dst);
    m_.next_hops[src].push_back(dst);
    if (both_ways) {
      add_route_edge(e, dst, src);
      m_.next_hops[dst].push_back(src);
    }
    // SimGrid aborts on a route without links and of zero latency ("no connecting path").
    if (e.children.empty()) fail(e, "a route needs at least one <link_ctn>");
  }

  // src/dst: zones directly inside this one; gw_src/gw_dst: the router through which traffic leaves or enters
  // them. simumax-sim asks for a router directly inside a Cluster zone (or a flat <cluster>'s router), where
  // every host reaches it over its own host_link, or inside a routed zone, whose hosts must have routes to it
  // (checked with the ranks); deeper gateways are not supported.
  int check_zone_end(const xml::Element& e, const char* end, const char* gateway) const {
    const std::string& name = attr(e, end);
    auto it = m_.netpoints.find(name);
    if (it == m_.netpoints.end() || (at(it->second).name != "zone" && at(it->second).name != "cluster") ||
        attr(at(it->second), "id") != name || at(it->second).parent != e.parent) {
      std::vector<std::string> names;
      for (int child : at(e.parent).children) {
        if (at(child).name == "zone" || at(child).name == "cluster") names.push_back(attr(at(child), "id"));
      }
      fail(e, std::string(end) + " \"" + name + "\" is not a zone inside this zone" + did_you_mean(name, names));
    }
    const int zone = it->second;
    const xml::Element& z = at(zone);
    const std::string& gw = attr(e, gateway);
    if (z.name == "cluster") {
      const auto router = m_.cluster_router.find(name);
      if (router == m_.cluster_router.end()) fail(e, "a FAT_TREE <cluster> cannot be joined by <zoneRoute>");
      if (gw != router->second) fail(e, std::string(gateway) + " must be \"" + router->second + "\", the router of " +
                                            xml::describe(z));
      return zone;
    }
    if (m_.routing_of(zone) != "Cluster" && !is_routed(m_.routing_of(zone))) {
      fail(e, std::string(end) + " " + xml::describe(z) +
                  ": a zone joined by <zoneRoute> must have routing=\"Cluster\" (hosts reach its router over their "
                  "own links) or be routed (Full, Floyd, Dijkstra, DijkstraCache: hosts reach it by <route>s)");
    }
    auto g = m_.netpoints.find(gw);
    if (g == m_.netpoints.end() || at(g->second).name != "router" || at(g->second).parent != zone) {
      std::vector<std::string> routers;
      for (int child : z.children) {
        if (at(child).name == "router") routers.push_back(attr(at(child), "id"));
      }
      fail(e, std::string(gateway) + " \"" + gw + "\" must be a <router> directly inside " + xml::describe(z) +
                  (routers.empty() ? " (it has none)" : did_you_mean(gw, routers)));
    }
    return zone;
  }

  void check_zone_route(const xml::Element& e) {
    const int src = check_zone_end(e, "src", "gw_src");
    const int dst = check_zone_end(e, "dst", "gw_dst");
    for (auto [zone, gateway] : {std::pair{src, "gw_src"}, std::pair{dst, "gw_dst"}}) {
      if (is_routed(m_.routing_of(zone))) m_.gateways[zone].push_back(attr(e, gateway));
    }
    if (src == dst) fail(e, "a zoneRoute from a zone to itself");
    add_route_edge(e, attr(e, "src"), attr(e, "dst"));
    m_.zone_hops[src].push_back(dst);
    if (symmetrical(e)) {
      add_route_edge(e, attr(e, "dst"), attr(e, "src"));
      m_.zone_hops[dst].push_back(src);
    }
    if (e.children.empty()) fail(e, "a zoneRoute needs at least one <link_ctn>");
  }

  void check_link_ctn(const xml::Element& e) {
    const std::string& id = attr(e, "id");
    const std::string* direction = e.find("direction");
    if (direction == nullptr || *direction == "NONE") return check_link_reference(e, id, false);
    if (*direction != "UP" && *direction != "DOWN") fail(e, "direction must be UP, DOWN or NONE");
    auto it = m_.split_links.find(id);
    if (it == m_.split_links.end()) {
      if (m_.plain_links.count(id) == 0) {
        std::vector<std::string> names;
        for (const auto& [n, _] : m_.split_links) names.push_back(n);
        fail(e, "unknown SPLITDUPLEX link \"" + id + "\"" + did_you_mean(id, names));
      }
      fail(e, "direction " + *direction + " needs a SPLITDUPLEX link; \"" + id + "\" is not one");
    }
    if (it->second > m_.index_of(e)) fail(e, "link \"" + id + "\" is declared later");
  }

  void check_references(int index) {
    const xml::Element& e = at(index);
    if (e.name == "host_link") check_host_link(e);
    if (e.name == "route") check_route(e);
    if (e.name == "zoneRoute") check_zone_route(e);
    if (e.name == "link_ctn") check_link_ctn(e);
  }

  detail::PlatformModel& m_;
};

}  // namespace

void check_platform_text(std::string_view text, const std::string& path, int64_t world_size, int64_t gpus_per_node) {
  if (world_size < 1 || gpus_per_node < 1) {
    throw common::InternalError("check_platform_xml: world_size and gpus_per_node must be >= 1");
  }
  const xml::Document doc = xml::parse(text, path);
  detail::PlatformModel model(doc, path);
  Checker(model).run();
  detail::check_convention(model, world_size, gpus_per_node);
}

void check_platform_xml(const std::string& path, int64_t world_size, int64_t gpus_per_node) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::ConfigError(path, "", "cannot open the platform file");
  std::ostringstream text;
  text << in.rdbuf();
  check_platform_text(text.str(), path, world_size, gpus_per_node);
}

}  // namespace simumax::platform
