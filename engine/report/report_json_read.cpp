#include "engine/report/report_json_read.hpp"

#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"

namespace simumax::report::html {

using common::ConfigError;

namespace {

bool is_kind(const Json& v, const char* kind) {
  if (std::strcmp(kind, "object") == 0) return v.is_object();
  if (std::strcmp(kind, "array") == 0) return v.is_array();
  if (std::strcmp(kind, "number") == 0) return v.is_number() && std::isfinite(v.get<double>());
  if (std::strcmp(kind, "integer") == 0) return v.is_number_integer();
  if (std::strcmp(kind, "string") == 0) return v.is_string();
  if (std::strcmp(kind, "boolean") == 0) return v.is_boolean();
  return false;
}

std::string article(const char* kind) {
  return (kind[0] == 'a' || kind[0] == 'i' || kind[0] == 'o') ? std::string("an ") + kind : std::string("a ") + kind;
}

}  // namespace

JsonDoc read_json_doc(const std::string& path, const char* drop_key) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  if (in.bad()) throw ConfigError(path, "", "cannot read file");
  common::require_json_depth(text.str(), path);
  JsonDoc d{path, Json()};
  try {
    if (drop_key) {
      const std::string drop = drop_key;
      d.root = Json::parse(text.str(), [&drop](int, Json::parse_event_t event, Json& parsed) {
        return !(event == Json::parse_event_t::key && parsed.is_string() && parsed.get_ref<const std::string&>() == drop);
      });
    } else {
      d.root = Json::parse(text.str());
    }
  } catch (const Json::parse_error& e) {
    // e.what() quotes the text around the error: the position alone keeps file contents out of the message.
    throw ConfigError(path, "", "invalid JSON at byte " + std::to_string(e.byte));
  } catch (const Json::exception&) {
    throw ConfigError(path, "", "invalid JSON: a number out of range");
  }
  return d;
}

void expect_kind(const JsonDoc& d, const Json& v, const std::string& pointer, const char* kind) {
  if (!is_kind(v, kind)) throw ConfigError(d.path, pointer, "expected " + article(kind));
}

const Json* maybe(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key, const char* kind) {
  expect_kind(d, obj, pointer, "object");
  const auto it = obj.find(key);
  if (it == obj.end()) return nullptr;
  expect_kind(d, *it, pointer + "/" + key, kind);
  return &*it;
}

const Json& need(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key, const char* kind) {
  const Json* v = maybe(d, obj, pointer, key, kind);
  if (!v) throw ConfigError(d.path, pointer + "/" + key, "required field is missing (expected " + article(kind) + ")");
  return *v;
}

double need_number(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key) {
  return need(d, obj, pointer, key, "number").get<double>();
}

int64_t need_int(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key) {
  return need(d, obj, pointer, key, "integer").get<int64_t>();
}

std::optional<double> maybe_number(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key) {
  const Json* v = maybe(d, obj, pointer, key, "number");
  return v ? std::optional<double>(v->get<double>()) : std::nullopt;
}

std::string need_string(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key) {
  return need(d, obj, pointer, key, "string").get<std::string>();
}

}  // namespace simumax::report::html
