#include "engine/platform/platform_schema.hpp"

#include <algorithm>
#include <sstream>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/platform/did_you_mean.hpp"

namespace simumax::platform {

namespace {

struct Rule {
  const char* name;
  std::vector<const char*> required;
  std::vector<const char*> optional;
  std::vector<const char*> parents;  // empty: the document root
};

// The subset of SimGrid's v4.1 DTD that simumax-sim supports. Files and traces (bandwidth_file, ...) are left
// out: SimGrid aborts when they are missing, and a training step has no use for them.
const std::vector<Rule>& rules() {
  static const std::vector<Rule> kRules = {
      {"platform", {"version"}, {}, {}},
      {"zone", {"id", "routing"}, {}, {"platform", "zone"}},
      {"host", {"id", "speed"}, {"core", "coordinates", "pstate"}, {"zone"}},
      {"router", {"id"}, {"coordinates"}, {"zone"}},
      {"link", {"id", "bandwidth", "latency"}, {"sharing_policy"}, {"zone"}},  // 3.32 reads a missing latency as ""
      {"backbone", {"id", "bandwidth", "latency"}, {}, {"zone"}},
      {"host_link", {"id", "up", "down"}, {}, {"zone"}},
      {"route", {"src", "dst"}, {"symmetrical"}, {"zone"}},
      {"zoneRoute", {"src", "dst", "gw_src", "gw_dst"}, {"symmetrical"}, {"zone"}},
      {"link_ctn", {"id"}, {"direction"}, {"route", "zoneRoute"}},
      {"cluster",
       {"id", "prefix", "suffix", "radical", "speed", "bw", "lat"},
       {"core", "sharing_policy", "topology", "topo_parameters", "bb_bw", "bb_lat", "bb_sharing_policy", "router_id",
        "limiter_link", "loopback_bw", "loopback_lat"},
       {"platform", "zone"}},
      {"prop", {"id", "value"}, {}, {"zone", "host", "link", "cluster"}},
  };
  return kRules;
}

std::string join(const std::vector<const char*>& names) {
  std::string out;
  for (const char* n : names) out += (out.empty() ? "" : ", ") + std::string(n);
  return out;
}

[[noreturn]] void fail(const xml::Element& e, const std::string& path, const std::string& message) {
  throw common::ConfigError(path, xml::where(e), message);
}

const Rule& rule_of(const xml::Element& e, const std::string& path) {
  for (const Rule& r : rules()) {
    if (e.name == r.name) return r;
  }
  std::vector<std::string> names;
  std::string supported;
  for (const Rule& r : rules()) {
    names.emplace_back(r.name);
    supported += (supported.empty() ? "" : ", ") + names.back();
  }
  fail(e, path,
       "element <" + e.name + "> is not supported in simumax-sim platform files" + did_you_mean(e.name, names) +
           " (supported: " + supported + ")");
}

bool listed(const std::vector<const char*>& names, const std::string& name) {
  return std::any_of(names.begin(), names.end(), [&](const char* n) { return name == n; });
}

}  // namespace

void check_schema(const xml::Document& doc, int index, const std::string& path) {
  const xml::Element& e = doc.elements[static_cast<size_t>(index)];
  const Rule& r = rule_of(e, path);
  if (e.parent < 0 ? !r.parents.empty() : !listed(r.parents, doc.elements[static_cast<size_t>(e.parent)].name)) {
    fail(e, path,
         e.parent < 0
             ? "the root element must be <platform>"
             : "<" + e.name + "> cannot appear inside <" + doc.elements[static_cast<size_t>(e.parent)].name +
                   "> (allowed in: " + (r.parents.empty() ? std::string("the document root") : join(r.parents)) + ")");
  }
  for (const auto& [key, value] : e.attributes) {
    if (listed(r.required, key) || listed(r.optional, key)) continue;
    std::vector<std::string> all(r.required.begin(), r.required.end());
    all.insert(all.end(), r.optional.begin(), r.optional.end());
    fail(e, path,
         "unknown attribute " + key + did_you_mean(key, all) + " (allowed: " + join(r.required) +
             (r.optional.empty() ? "" : ", " + join(r.optional)) + ")");
  }
  for (const char* key : r.required) {
    if (e.find(key) == nullptr) fail(e, path, std::string("missing attribute ") + key);
    const std::string k = key;  // a <prop> may be empty, and so may a <cluster>'s prefix and suffix
    if (e.find(key)->empty() && k != "value" && k != "prefix" && k != "suffix")
      fail(e, path, std::string("attribute ") + key + " is empty");
  }
}

// SimGrid's parser requires the DOCTYPE and knows its DTD only under these two addresses.
void check_doctype(const xml::Document& doc, const std::string& path) {
  std::istringstream words(doc.doctype);
  std::string root, system, url, rest;
  words >> root >> system >> url;
  const bool known_url = url == "\"https://simgrid.org/simgrid.dtd\"" || url == "'https://simgrid.org/simgrid.dtd'" ||
                         url == "\"http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd\"" ||
                         url == "'http://simgrid.gforge.inria.fr/simgrid/simgrid.dtd'";
  if (root != "platform" || system != "SYSTEM" || !known_url || (words >> rest)) {
    fail(doc.elements[0], path,
         "the file must start with <!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\"> "
         "(SimGrid's parser requires it)");
  }
}

}  // namespace simumax::platform
