#include "engine/config/sweep_file.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/common/split_text.hpp"
#include "engine/config/config_parsers.hpp"

namespace simumax::config {

namespace fs = std::filesystem;
using common::ConfigError;
using detail::Json;
using detail::ObjectReader;

struct detail::SweepBase {
  ScenarioDocument doc;
  std::vector<int> part;                        // per axis: 0 model, 1 strategy, 2 system
  std::vector<std::vector<std::string>> steps;  // per axis: the keys below the part
  std::vector<std::vector<Json>> values;        // per axis
};

namespace {

constexpr const char* kParts[] = {"model", "strategy", "system"};

Json& part_json(detail::ScenarioDocument& d, int part) {
  return part == 0 ? d.model : part == 1 ? d.strategy : d.system;
}

std::string read_text(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) throw ConfigError(path, "", "not found, or not a regular file (a sweep file)");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// FNV-1a over the bytes, in hex: enough to tell two versions of one file apart.
std::string fingerprint(const std::string& text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : text) h = (h ^ c) * 1099511628211ull;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> out;
  for (std::string_view part : common::split(key, '.')) out.emplace_back(part);
  return out;
}

std::string value_text(const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); }

std::vector<std::string> keys_of(const Json& object) {
  std::vector<std::string> out;
  for (const auto& item : object.items()) out.push_back(item.key());
  return out;
}

// Does the part's reader know `leaf` when it is absent from the base? Only the model and strategy readers reject
// unknown keys; the system reader ignores unknown top-level, accelerator and network keys as SimuMax does, so a key
// absent from a base system is refused (it would be swept without effect).
bool reader_knows(const detail::ScenarioDocument& d, int part, const std::vector<std::string>& steps,
                  const Json& value) {
  if (part == 2) return false;
  Json copy = part == 0 ? d.model : d.strategy;
  Json* at = &copy;
  for (size_t i = 0; i + 1 < steps.size(); ++i) at = &(*at)[steps[i]];
  (*at)[steps.back()] = value;
  try {
    if (part == 0) detail::parse_model(copy, d.scenario.model_origin);
    else detail::parse_strategy(copy, d.scenario.strategy_origin);
  } catch (const ConfigError& e) {
    return e.message().rfind("unknown field", 0) != 0;
  }
  return true;
}

struct AxisCheck {
  const std::string& sweep_path;
  const std::string& key;
  const std::string& first_case;  // name and label of case 0
};

[[noreturn]] void unknown_key(const AxisCheck& a, const std::string& why) {
  throw ConfigError(a.sweep_path, json_pointer_append("/overrides", a.key),
                    "unknown override key '" + a.key + "' in case " + a.first_case + ", as in every case: " + why);
}

// The part and the steps of `key`, checked against the base document.
void check_axis(const AxisCheck& a, const detail::ScenarioDocument& d, int& part, std::vector<std::string>& steps,
                const Json& first_value) {
  std::vector<std::string> parts = split_key(a.key);
  part = -1;
  for (int p = 0; p < 3; ++p) {
    if (parts[0] == kParts[p]) part = p;
  }
  if (part < 0 || parts.size() < 2) {
    unknown_key(a, "a key names a field of the base's model, strategy or system config, e.g. strategy.tp_size or "
                   "system.networks.inter_node.bandwidth.gbps;" +
                       detail::name_suggestion(parts[0], {"model", "strategy", "system"}));
  }
  steps.assign(parts.begin() + 1, parts.end());
  const Json* at = part == 0 ? &d.model : part == 1 ? &d.strategy : &d.system;
  std::string walked = parts[0];
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!at->is_object()) unknown_key(a, walked + " is not an object in the base scenario");
    const auto it = at->find(steps[i]);
    const bool last = i + 1 == steps.size();
    if (it == at->end()) {
      if (last && reader_knows(d, part, steps, first_value)) return;
      unknown_key(a, walked + " has no field '" + steps[i] + "' in the base scenario;" +
                         detail::name_suggestion(steps[i], keys_of(*at)));
    }
    at = &*it;
    walked += "." + steps[i];
  }
}

std::string case_name(size_t index, size_t count) {
  std::string digits = std::to_string(index);
  const size_t width = std::max<size_t>(4, std::to_string(count > 0 ? count - 1 : 0).size());
  std::string out = "c";
  out.append(width > digits.size() ? width - digits.size() : 0, '0');
  out += digits;
  return out;
}

detail::ScenarioDocument read_base(ObjectReader& r, const Json& doc, const std::string& path) {
  if (!r.present("base")) r.fail("base", "required field is missing: the base scenario, a path or inline");
  const Json& base = doc.at("base");
  if (base.is_object()) return detail::read_scenario_document(base, path);
  if (!base.is_string()) r.fail("base", "expected a scenario file path (string) or an inline scenario object");
  fs::path p(base.get<std::string>());
  if (p.is_relative()) p = fs::path(path).parent_path() / p;
  const std::string file = p.lexically_normal().string();
  return detail::read_scenario_document(detail::parse_json_file(file), file);
}

SweepPlatform read_platform(const Json& v, const std::string& path, size_t i) {
  const std::string at = "/platforms/" + std::to_string(i);
  SweepPlatform p;
  auto resolve = [&](const std::string& raw) {
    fs::path f(raw);
    if (f.is_relative()) f = fs::path(path).parent_path() / f;
    std::error_code ec;
    if (!fs::is_regular_file(f, ec)) throw ConfigError(path, at, "platform file not found: " + f.string());
    return f.lexically_normal().string();
  };
  if (v.is_string()) {
    p.xml = resolve(v.get<std::string>());
    p.name = fs::path(*p.xml).stem().string();
    return p;
  }
  ObjectReader r(v, ConfigOrigin::of(path, at));
  const std::optional<std::string> name = r.optional_string("name");
  if (const auto xml = r.optional_string("xml")) p.xml = resolve(*xml);
  p.topology = r.optional_choice("topology", {"single-switch", "fat-tree", "rail"}).value_or("");
  p.oversubscription = r.number_or("oversubscription", 1, detail::Sign::kPositive);
  p.nodes_per_leaf = r.int_or("nodes_per_leaf", 0, detail::Sign::kNonNegative);
  p.nic_per_node = r.choice_or("nic_per", "gpu", {"gpu", "node"}) == "node";
  r.finish(detail::UnknownKeys::kError);
  if (p.xml && !p.topology.empty()) r.fail("topology", "give either \"xml\" (a platform file) or \"topology\"");
  if ((p.topology.empty() || p.topology == "single-switch") && (p.oversubscription != 1 || p.nodes_per_leaf != 0)) {
    r.fail("topology", "oversubscription and nodes_per_leaf need \"topology\": \"fat-tree\" or \"rail\"");
  }
  if (p.topology == "rail" && p.nic_per_node) r.fail("nic_per", "a rail topology needs one NIC per GPU");
  std::string fallback = p.xml ? fs::path(*p.xml).stem().string() : p.topology.empty() ? "generated" : p.topology;
  if (p.oversubscription != 1) {
    fallback += '-';
    char buf[32];
    fallback.append(buf, std::to_chars(buf, buf + sizeof buf, p.oversubscription).ptr);
    fallback += "to1";
  }
  p.name = name.value_or(fallback);
  return p;
}

SweepRun read_run(ObjectReader& r) {
  SweepRun run;
  auto o = r.optional_object("run");
  if (!o) return run;
  run.executor = o->choice_or("executor", run.executor, {"fast", "sim"});
  run.ranks = o->choice_or("ranks", run.ranks, {"stages", "all"});
  run.granularity = o->choice_or("granularity", run.granularity, {"chunk", "layer", "op"});
  run.memory_margin_gib = o->number_or("memory_margin_gib", 0, detail::Sign::kNonNegative);
  o->finish(detail::UnknownKeys::kError);
  return run;
}

// The axes in the order the file gives them (nlohmann's json sorts keys; its ordered_json keeps them).
std::vector<std::string> override_keys_in_order(const std::string& text) {
  const auto ordered = nlohmann::ordered_json::parse(text);
  std::vector<std::string> keys;
  const auto it = ordered.find("overrides");
  if (it == ordered.end() || !it->is_object()) return keys;
  for (const auto& item : it->items()) {
    if (item.key().empty() || item.key()[0] != '_') keys.push_back(item.key());
  }
  return keys;
}

void read_axes(Sweep& s, detail::SweepBase& b, const Json& doc, const std::string& text, ObjectReader& r) {
  if (!r.given("overrides")) return;
  const Json& overrides = doc.at("overrides");
  if (!overrides.is_object()) r.fail("overrides", "expected an object: {\"<part>.<key>\": [values...], ...}");
  for (const std::string& key : override_keys_in_order(text)) {
    const Json& list = overrides.at(key);
    const std::string at = json_pointer_append("/overrides", key);
    if (!list.is_array()) throw ConfigError(s.path, at, "expected a list of values, got " + detail::json_repr(list));
    if (list.empty()) throw ConfigError(s.path, at, "empty list: the product of the sweep has no case");
    SweepAxis axis{key, {}, split_key(key).back()};
    b.values.emplace_back(list.begin(), list.end());
    for (const Json& v : list) axis.values.push_back(v.dump());
    s.axes.push_back(std::move(axis));
  }
  std::map<std::string, int> uses;
  for (const auto& a : s.axes) ++uses[a.column];
  for (auto& a : s.axes) {
    if (uses[a.column] > 1) a.column = a.key;
  }
}

void read_platforms(Sweep& s, const Json& doc, ObjectReader& r) {
  if (!r.given("platforms")) return;
  const Json& list = doc.at("platforms");
  if (!list.is_array()) r.fail("platforms", "expected a list of platforms (file paths or objects)");
  if (list.empty()) r.fail("platforms", "empty list: the product of the sweep has no case");
  std::set<std::string> names;
  for (size_t i = 0; i < list.size(); ++i) {
    s.platforms.push_back(read_platform(list[i], s.path, i));
    if (!names.insert(s.platforms.back().name).second) {
      throw ConfigError(s.path, "/platforms/" + std::to_string(i),
                        "platform name '" + s.platforms.back().name + "' is given twice; name each with \"name\"");
    }
  }
}

size_t product(const Sweep& s, size_t max_cases) {
  size_t n = 1;
  bool over = false;
  auto times = [&](size_t k) {
    if (n > std::numeric_limits<size_t>::max() / k) over = true;
    else n *= k;
  };
  for (const auto& a : s.axes) times(a.values.size());
  if (!s.platforms.empty()) times(s.platforms.size());
  if (over || n > max_cases) {
    throw ConfigError(s.path, "", "the sweep has " + (over ? std::string("more than 2^64") : std::to_string(n)) +
                                      " cases, more than --max-cases " + std::to_string(max_cases) +
                                      "; raise --max-cases to run them all");
  }
  return n;
}

}  // namespace

Sweep load_sweep(const std::string& given_path, size_t max_cases) {
  Sweep s;
  s.path = fs::absolute(given_path).lexically_normal().string();
  const std::string text = read_text(s.path);
  s.fingerprint = fingerprint(text);
  const Json doc = detail::parse_json_text(text, s.path);
  ObjectReader r(doc, ConfigOrigin::of(s.path));
  s.name = r.optional_string("name").value_or(fs::path(s.path).stem().string());
  const bool component = !s.name.empty() && s.name != "." && s.name != ".." &&
                         s.name.find_first_of("/\\") == std::string::npos &&
                         std::none_of(s.name.begin(), s.name.end(), [](unsigned char ch) { return ch < 0x20; });
  if (!component) r.fail("name", "must be one path component (it names the output folder out/<name>)");
  s.description = r.optional_string("description").value_or("");
  r.present("base");
  r.given("overrides");
  r.given("platforms");
  r.present("run");
  r.finish(detail::UnknownKeys::kError);
  auto base = std::make_shared<detail::SweepBase>();
  base->doc = read_base(r, doc, s.path);
  s.base_name = base->doc.scenario.name;
  read_axes(s, *base, doc, text, r);
  read_platforms(s, doc, r);
  s.run = read_run(r);
  if (!s.platforms.empty() && s.run.executor != "sim") {
    r.fail("platforms", "a platform is simulated only by the sim executor: add \"run\": {\"executor\": \"sim\"}");
  }
  s.cases = product(s, max_cases);
  s.base = base;
  const SweepCase first = s.case_at(0);
  const std::string first_case = first.name + (first.label.empty() ? "" : " (" + first.label + ")");
  for (size_t i = 0; i < s.axes.size(); ++i) {
    int part = 0;
    std::vector<std::string> steps;
    check_axis({s.path, s.axes[i].key, first_case}, base->doc, part, steps, base->values[i][0]);
    base->part.push_back(part);
    base->steps.push_back(std::move(steps));
  }
  return s;
}

SweepCase Sweep::case_at(size_t index) const {
  SweepCase c;
  c.index = index;
  c.name = case_name(index, cases);
  size_t rest = index;
  if (!platforms.empty()) {
    c.platform = rest % platforms.size();
    rest /= platforms.size();
  }
  c.values.resize(axes.size());
  std::vector<size_t> pick(axes.size());
  for (size_t i = axes.size(); i-- > 0;) {
    pick[i] = rest % axes[i].values.size();
    rest /= axes[i].values.size();
    c.values[i] = axes[i].values[pick[i]];
  }
  for (size_t i = 0; i < axes.size(); ++i) {
    if (!c.label.empty()) c.label += ' ';
    c.label += axes[i].column;
    c.label += '=';
    c.label += value_text(base->values[i][pick[i]]);
  }
  if (!platforms.empty()) {
    if (!c.label.empty()) c.label += ' ';
    c.label += "platform=";
    c.label += platforms[c.platform].name;
  }
  return c;
}

Scenario Sweep::scenario(const SweepCase& c) const {
  detail::ScenarioDocument d = base->doc;
  for (size_t i = 0; i < axes.size(); ++i) {
    Json* at = &part_json(d, base->part[i]);
    for (const std::string& step : base->steps[i]) at = &(*at)[step];
    *at = Json::parse(c.values[i]);
  }
  d.scenario.name = name + "_" + c.name;
  if (!platforms.empty() && platforms[c.platform].xml) d.scenario.platform_path = platforms[c.platform].xml;
  try {
    return detail::parse_scenario_document(d);
  } catch (const ConfigError& e) {
    throw ConfigError(e.file(), e.pointer(),
                      "case " + c.name + (c.label.empty() ? "" : " (" + c.label + ")") + ": " + e.message());
  }
}

}  // namespace simumax::config
