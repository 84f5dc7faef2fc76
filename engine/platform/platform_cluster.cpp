// The <cluster> tag of a platform file: a zone of hosts SimGrid builds from a name pattern, flat (a star with
// a router) or FAT_TREE. Checked here exactly as far as SimGrid 3.32 would abort on it.
#include <algorithm>
#include <cctype>
#include <vector>

#include "engine/common/split_text.hpp"
#include "engine/platform/did_you_mean.hpp"
#include "engine/platform/platform_model.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/simgrid_units.hpp"

namespace simumax::platform::detail {

namespace {

// SimGrid reads these with std::stoi, which accepts "12abc" and throws uncaught on overflow: take digits only.
std::optional<int> strict_int(std::string_view s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return std::isdigit(c); })) {
    return std::nullopt;
  }
  return std::stoi(std::string(s));
}

class ClusterCheck {
 public:
  ClusterCheck(PlatformModel& m, int index) : m_(m), index_(index), e_(m.at(index)) {}

  void run() {
    if (e_.parent >= 0 && m_.at(e_.parent).name == "zone" && m_.attr(m_.at(e_.parent), "routing") == "Cluster") {
      fail("a <cluster> cannot sit in a zone with routing=\"Cluster\" (put it in a Full, Floyd or None zone)");
    }
    const std::string& id = attr("id");
    m_.add_netpoint(id, index_);
    radicals_ = radicals();
    check_values();
    const std::string topology = optional("topology", "FLAT");
    if (topology == "FAT_TREE") return fat_tree();
    if (topology != "FLAT") {
      fail("topology \"" + topology + "\" is not supported" + did_you_mean(topology, {"FLAT", "FAT_TREE"}) +
           " (use FLAT or FAT_TREE)");
    }
    flat();
  }

 private:
  [[noreturn]] void fail(const std::string& message) const { m_.fail(e_, message); }
  const std::string& attr(const char* key) const { return m_.attr(e_, key); }
  std::string optional(const char* key, const char* fallback) const {
    const std::string* v = e_.find(key);
    return v == nullptr ? fallback : *v;
  }

  double quantity(const char* key, Quantity q) const {
    std::string error;
    const std::optional<double> v = parse_quantity(q, attr(key), &error);
    if (!v) fail(std::string(key) + ": " + error);
    return *v;
  }
  // A bandwidth that must be > 0, or a time that must be >= 0, if the attribute is there and not empty.
  void check_optional(const char* key, Quantity q) const {
    const std::string* v = e_.find(key);
    if (v == nullptr || v->empty()) return;
    const double value = quantity(key, q);
    if (q == Quantity::kBandwidth && !(value > 0)) fail(std::string(key) + " \"" + *v + "\" must be > 0");
    if (q == Quantity::kTime && value < 0) fail(std::string(key) + " \"" + *v + "\" is < 0");
  }

  // "0-3,7" -> 0 1 2 3 7, as SimGrid explodes it; every host name prefix + radical + suffix.
  std::vector<int> radicals() const {
    std::vector<int> out;
    for (std::string_view group : common::split(attr("radical"), ',')) {
      const std::vector<std::string_view> ends = common::split(group, '-');
      const std::optional<int> first = strict_int(ends.front());
      const std::optional<int> last = ends.size() == 2 ? strict_int(ends.back()) : first;
      if (ends.size() > 2 || !first || !last) {
        fail("radical \"" + attr("radical") + "\": \"" + std::string(group) +
             "\" is not a number or a range such as 0-7");
      }
      if (*last < *first) fail("radical \"" + attr("radical") + "\": the range " + std::string(group) + " is empty");
      for (int i = *first; i <= *last; ++i) out.push_back(i);
    }
    return out;
  }

  void check_values() const {
    for (std::string_view speed : common::split(attr("speed"), ',')) {
      std::string error;
      while (!speed.empty() && std::isspace(static_cast<unsigned char>(speed.back()))) speed.remove_suffix(1);
      const std::optional<double> v = parse_quantity(Quantity::kSpeed, speed, &error);
      if (!v) fail("speed: " + error);
      if (!(*v > 0)) fail("speed \"" + attr("speed") + "\" must be > 0");
    }
    if (const std::string* core = e_.find("core"); core != nullptr && !(strict_int(*core) > 0)) {
      fail("core \"" + *core + "\" must be a whole number >= 1");
    }
    if (!(quantity("bw", Quantity::kBandwidth) > 0)) fail("bw \"" + attr("bw") + "\" must be > 0");
    if (quantity("lat", Quantity::kTime) < 0) fail("lat \"" + attr("lat") + "\" is < 0");
    for (const char* key : {"bb_bw", "limiter_link", "loopback_bw"}) check_optional(key, Quantity::kBandwidth);
    for (const char* key : {"bb_lat", "loopback_lat"}) check_optional(key, Quantity::kTime);
    const std::string policy = optional("sharing_policy", "SPLITDUPLEX");
    if (policy != "SHARED" && policy != "SPLITDUPLEX" && policy != "FULLDUPLEX" && policy != "FATPIPE") {
      fail("sharing_policy \"" + policy + "\" is not one of SHARED, SPLITDUPLEX, FATPIPE");
    }
    const std::string bb_policy = optional("bb_sharing_policy", "SHARED");
    if (bb_policy != "SHARED" && bb_policy != "FATPIPE") {
      fail("bb_sharing_policy \"" + bb_policy + "\" is not one of SHARED, FATPIPE");
    }
  }

  void add_hosts() {
    for (int r : radicals_) {
      const std::string host = attr("prefix") + std::to_string(r) + attr("suffix");
      m_.add_netpoint(host, index_);
      m_.cluster_hosts.insert(host);
    }
  }

  // The names of SimGrid's sg_platf_new_cluster_flat: a private link per host, a backbone, and a router.
  void flat() {
    add_hosts();
    const std::string& id = attr("id");
    const bool split = optional("sharing_policy", "SPLITDUPLEX") != "SHARED" &&
                       optional("sharing_policy", "SPLITDUPLEX") != "FATPIPE";
    const bool loopback = !optional("loopback_bw", "").empty() || !optional("loopback_lat", "").empty();
    for (int r : radicals_) {
      const std::string link = id + "_link_" + std::to_string(r);
      m_.add_link_name(link, index_);
      if (split) {
        m_.add_link_name(link + "_UP", index_);
        m_.add_link_name(link + "_DOWN", index_);
      }
      if (loopback) m_.add_link_name(link + "_loopback", index_);
      if (!optional("limiter_link", "").empty()) m_.add_link_name(link + "_limiter", index_);
    }
    if (!optional("bb_bw", "").empty() || !optional("bb_lat", "").empty()) m_.add_link_name(id + "_backbone", index_);
    std::string router = optional("router_id", "");
    if (router.empty()) router = attr("prefix") + id + "_router" + attr("suffix");
    m_.add_netpoint(router, index_);
    m_.cluster_router[id] = router;
  }

  // topo_parameters "levels;down,..;up,..;count,.." as FatTreeZone::parse_topo_parameters and check_topology
  // read it; SimGrid needs exactly prod(down) hosts.
  void fat_tree() {
    if (!optional("limiter_link", "").empty()) fail("limiter_link is not supported with topology FAT_TREE");
    const std::string text = optional("topo_parameters", "");
    const std::vector<std::string_view> parts = common::split(text, ';');
    const std::string what = "topo_parameters \"" + text + "\"";
    const std::optional<int> levels = parts.size() == 4 ? strict_int(parts[0]) : std::nullopt;
    if (!levels || *levels < 1) {
      fail(what + ": a fat tree is \"levels;children per level;parents per level;links per level\", e.g. "
                  "\"2;4,4;1,2;1,2\"");
    }
    int64_t hosts = 1;
    for (size_t v = 1; v < 4; ++v) {
      const std::vector<std::string_view> values = common::split(parts[v], ',');
      if (values.size() != static_cast<size_t>(*levels)) {
        fail(what + ": " + std::to_string(*levels) + " levels but " + std::to_string(values.size()) +
             " values in part " + std::to_string(v + 1));
      }
      for (std::string_view value : values) {
        const std::optional<int> n = strict_int(value);
        if (!n || *n < 1) fail(what + ": \"" + std::string(value) + "\" must be a whole number >= 1");
        if (v == 1) hosts *= *n;
        if (hosts > kMaxPlatformGpus) fail(what + ": too many hosts");
      }
    }
    if (hosts != static_cast<int64_t>(radicals_.size())) {
      fail(what + " has " + std::to_string(hosts) + " hosts (the product of the children counts) but radical \"" +
           attr("radical") + "\" names " + std::to_string(radicals_.size()));
    }
    for (const auto& [name, element] : m_.link_names) {
      if (name.rfind("link_from_", 0) == 0) {
        fail("a FAT_TREE <cluster> names its links link_from_*; " + xml::describe(m_.at(element)) + " already does");
      }
    }
    if (m_.fat_tree >= 0) fail("only one FAT_TREE <cluster> per platform (SimGrid gives their links the same names)");
    m_.fat_tree = index_;
    add_hosts();
  }

  PlatformModel& m_;
  int index_;
  const xml::Element& e_;
  std::vector<int> radicals_;
};

}  // namespace

void check_cluster(PlatformModel& m, int index) { ClusterCheck(m, index).run(); }

}  // namespace simumax::platform::detail
