#include "engine/compare/kernel_classes.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>
#include <re2/re2.h>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"
#include "engine/common/text_case.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::compare {

namespace {

using Json = nlohmann::json;

std::string lower(std::string_view s) { return common::lower_ascii(std::string(s)); }

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

bool is_comment(const std::string& key) { return !key.empty() && key[0] == '_'; }

}  // namespace

const char* to_string(ClassKind kind) {
  switch (kind) {
    case ClassKind::kCompute: return "compute";
    case ClassKind::kComm: return "comm";
    case ClassKind::kMemory: return "memory";
  }
  return "?";
}

// Reads the table's JSON into a KernelClassTable, failing at the JSON pointer of the first bad field.
struct TableParser {
  const std::string& label;
  KernelClassTable& t;

  [[noreturn]] void fail(const std::string& pointer, const std::string& message) const {
    throw common::ConfigError(label, pointer, message);
  }

  void check_keys(const Json& obj, const std::string& pointer, const std::vector<std::string>& valid) const {
    for (const auto& [k, v] : obj.items()) {
      if (!is_comment(k) && std::find(valid.begin(), valid.end(), k) == valid.end()) {
        fail(pointer + "/" + k, "unknown field; valid fields: " + joined(valid));
      }
    }
  }

  const Json& field(const Json& obj, const std::string& pointer, const std::string& key, Json::value_t type,
                    const char* type_name) const {
    if (!obj.contains(key)) fail(pointer + "/" + key, std::string("missing; expected ") + type_name);
    const Json& v = obj.at(key);
    if (v.type() != type) fail(pointer + "/" + key, std::string("expected ") + type_name + ", got " + v.dump());
    return v;
  }

  std::string text(const Json& obj, const std::string& pointer, const std::string& key) const {
    return field(obj, pointer, key, Json::value_t::string, "a string").get<std::string>();
  }

  void classes(const Json& root) {
    const Json& arr = field(root, "", "classes", Json::value_t::array, "an array of {name, kind}");
    for (size_t i = 0; i < arr.size(); ++i) {
      const std::string p = "/classes/" + std::to_string(i);
      if (!arr[i].is_object()) fail(p, "expected an object {name, kind}");
      check_keys(arr[i], p, {"name", "kind"});
      KernelClass c;
      c.name = text(arr[i], p, "name");
      if (t.class_index(c.name) >= 0) fail(p + "/name", "class \"" + c.name + "\" is declared twice");
      const std::string kind = text(arr[i], p, "kind");
      if (kind == "compute") c.kind = ClassKind::kCompute;
      else if (kind == "comm") c.kind = ClassKind::kComm;
      else if (kind == "memory") c.kind = ClassKind::kMemory;
      else fail(p + "/kind", "\"" + kind + "\" is not a kind; valid kinds: compute, comm, memory");
      t.classes_.push_back(c);
    }
    if (t.classes_.empty()) fail("/classes", "declares no class");
  }

  uint16_t class_ref(const Json& obj, const std::string& pointer, const std::string& key) const {
    const std::string name = text(obj, pointer, key);
    const int i = t.class_index(name);
    if (i < 0) {
      std::vector<std::string> names;
      for (const auto& c : t.classes_) names.push_back(c.name);
      fail(pointer + "/" + key, "\"" + name + "\" is not a declared class; declared: " + joined(names));
    }
    return static_cast<uint16_t>(i);
  }

  void contains(const Json& rule, const std::string& p, KernelClassTable::Rule& r) const {
    const Json& arr = field(rule, p, "contains", Json::value_t::array, "an array of strings");
    if (arr.empty()) fail(p + "/contains", "is empty; give at least one substring");
    for (size_t j = 0; j < arr.size(); ++j) {
      if (!arr[j].is_string() || arr[j].get<std::string>().empty()) {
        fail(p + "/contains/" + std::to_string(j), "expected a non-empty string, got " + arr[j].dump());
      }
      r.contains.push_back(lower(arr[j].get<std::string>()));
    }
  }

  void regex(const Json& rule, const std::string& p, KernelClassTable::Rule& r) const {
    const std::string re = text(rule, p, "regex");
    // std::regex recursed once per character (a 50,000-character kernel name overflowed the stack) and
    // backtracks exponentially on patterns like (a+)+$; RE2 does neither.
    RE2::Options o;
    o.set_case_sensitive(false);
    o.set_log_errors(false);
    auto compiled = std::make_shared<const RE2>(re, o);
    if (!compiled->ok()) fail(p + "/regex", "invalid regular expression \"" + re + "\": " + compiled->error());
    r.regex = std::move(compiled);
    r.has_regex = true;
  }

  void rule(const Json& rule, const std::string& p) {
    if (!rule.is_object()) fail(p, "expected an object {class, subclass, cat, contains, regex}");
    // An object of comments only is a section heading in the file, not a rule.
    const bool all_comments =
        std::all_of(rule.items().begin(), rule.items().end(), [](const auto& kv) { return is_comment(kv.key()); });
    if (all_comments) return;
    check_keys(rule, p, {"class", "subclass", "cat", "contains", "regex"});
    KernelClassTable::Rule r;
    r.cls = class_ref(rule, p, "class");
    r.sub = t.subclass_id(rule.contains("subclass") ? text(rule, p, "subclass") : t.classes_[r.cls].name);
    if (rule.contains("cat")) r.cat = text(rule, p, "cat");
    if (rule.contains("contains")) contains(rule, p, r);
    if (rule.contains("regex")) regex(rule, p, r);
    if (r.cat.empty() && r.contains.empty() && !r.has_regex) {
      fail(p, "has no condition; give at least one of cat, contains, regex");
    }
    t.rules_.push_back(std::move(r));
  }

  void parse(const std::string& body) {
    common::require_json_depth(body, label);
    Json root;
    try {
      root = Json::parse(body);
    } catch (const Json::parse_error& e) {
      fail("", "invalid JSON at byte " + std::to_string(e.byte));  // e.what() quotes the file: never echo it
    } catch (const Json::exception&) {
      fail("", "invalid JSON: a number out of range");  // nlohmann's out_of_range.406 (e.g. 1e999)
    }
    if (!root.is_object()) fail("", "expected an object {classes, default_class, rules}");
    check_keys(root, "", {"classes", "default_class", "rules"});
    classes(root);
    t.default_class_ = class_ref(root, "", "default_class");
    for (const auto& c : t.classes_) t.subclass_id(c.name);
    t.subclass_id("other");
    const Json& rules = field(root, "", "rules", Json::value_t::array, "an array of rules");
    for (size_t i = 0; i < rules.size(); ++i) rule(rules[i], "/rules/" + std::to_string(i));
  }
};

KernelClassTable KernelClassTable::load(const std::string& path) {
  return parse(report::read_maybe_gzip(path), path);
}

KernelClassTable KernelClassTable::parse(const std::string& text, const std::string& label) {
  KernelClassTable t;
  t.source_ = label;
  TableParser{label, t}.parse(text);
  return t;
}

Classification KernelClassTable::classify(std::string_view cat, std::string_view name) const {
  const std::string low = lower(name);
  for (const auto& r : rules_) {
    if (!r.cat.empty() && r.cat != cat) continue;
    if (!r.contains.empty() && std::none_of(r.contains.begin(), r.contains.end(), [&](const std::string& s) {
          return low.find(s) != std::string::npos;
        })) {
      continue;
    }
    if (r.has_regex && !RE2::PartialMatch(re2::StringPiece(name.data(), name.size()), *r.regex)) continue;
    return {r.cls, r.sub};
  }
  return {default_class_, static_cast<uint16_t>(default_class_)};
}

int KernelClassTable::class_index(const std::string& name) const {
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (classes_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

Classification KernelClassTable::fallback(ClassKind kind) const {
  if (classes_[default_class_].kind == kind) return {default_class_, default_class_};
  const auto other = std::find(subclasses_.begin(), subclasses_.end(), "other");
  for (size_t i = 0; i < classes_.size(); ++i) {
    if (classes_[i].kind == kind) return {static_cast<uint16_t>(i), static_cast<uint16_t>(other - subclasses_.begin())};
  }
  return {default_class_, default_class_};
}

uint16_t KernelClassTable::subclass_id(const std::string& name) {
  const auto it = std::find(subclasses_.begin(), subclasses_.end(), name);
  if (it != subclasses_.end()) return static_cast<uint16_t>(it - subclasses_.begin());
  subclasses_.push_back(name);
  return static_cast<uint16_t>(subclasses_.size() - 1);
}

}  // namespace simumax::compare
