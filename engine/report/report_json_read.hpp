// Type-checked reads of the JSON files the HTML report draws from and of summary.json (internal to engine/report):
// every failure is a ConfigError naming the file and the JSON pointer, never the file's contents.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace simumax::report::html {

using Json = nlohmann::json;

// A parsed file and its path, for error messages.
struct JsonDoc {
  std::string path;
  Json root;
};

// Throws ConfigError(path, "", ...) when it cannot be read or is not JSON (the message gives the byte offset
// only). Members named `drop_key` (anywhere) are left out while parsing: memory_snapshot.json's allocation lists
// are most of its size and the report does not draw them.
JsonDoc read_json_doc(const std::string& path, const char* drop_key = nullptr);

// The member `key` of the object at `pointer` (`obj`), checked to be of the kind: "object", "array", "number"
// (finite), "integer", "string", "boolean". Throws ConfigError(path, pointer + "/" + key, ...) when missing or
// of another kind; the optional_* forms return nullopt / nullptr when missing (still type-checked when present).
const Json& need(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key, const char* kind);
const Json* maybe(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key, const char* kind);
double need_number(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key);
int64_t need_int(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key);
std::optional<double> maybe_number(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key);
std::string need_string(const JsonDoc& d, const Json& obj, const std::string& pointer, const char* key);

// Throws ConfigError(path, pointer, "expected <kind>") unless `obj` is of `kind`.
void expect_kind(const JsonDoc& d, const Json& v, const std::string& pointer, const char* kind);

}  // namespace simumax::report::html
