// Private to engine/config: type-checked reading of JSON objects, reporting ConfigError with the file and
// JSON pointer of the field at fault. Only config .cpp files include this header (nlohmann stays here).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/config/config_origin.hpp"

namespace simumax::config::detail {

using Json = nlohmann::json;

// Reads and parses a JSON file. Throws ConfigError(path, "", ...) if it cannot be read, or with
// "invalid JSON at line L, column C: ..." if it does not parse.
Json parse_json_file(const std::string& path);
// Parses `text` that came from `label` (a file name, or "file:line" for one line of a .jsonl). Throws ConfigError
// for invalid JSON (line and column, never the text itself) and for a key given twice in one object (both places).
Json parse_json_text(const std::string& text, const std::string& label);

// A JSON value as messages show it: what it is, not what the file holds (arrays and objects by their size,
// strings quoted and cut short).
std::string json_repr(const Json& value);

// " did you mean 'x'?" when one candidate is a likely typo of `name`, else " valid names: a, b, c".
std::string name_suggestion(const std::string& name, const std::vector<std::string>& candidates);

enum class Sign { kAny, kNonNegative, kPositive };

// A field as the readers ask for it, for forms built from the schema (serve's editor).
struct SchemaField {
  std::string kind;  // integer, number, boolean, string, choice, strings (a list), object
  Sign sign = Sign::kAny;
  std::vector<std::string> choices;  // choice / strings: the valid values (empty: any string)
  bool required = false;
  std::string fallback;  // JSON text of the value used when the field is absent; "" when none is
};

// While one lives, every ObjectReader on this thread records the fields it is asked for, by JSON pointer (the
// first accessor that asks for a field describes it). Nested recordings: the innermost records.
class SchemaRecording {
 public:
  SchemaRecording();
  ~SchemaRecording();
  SchemaRecording(const SchemaRecording&) = delete;
  SchemaRecording& operator=(const SchemaRecording&) = delete;
  const std::map<std::string, SchemaField>& fields() const { return fields_; }
  void note(const std::string& pointer, SchemaField field) { fields_.emplace(pointer, std::move(field)); }

 private:
  std::map<std::string, SchemaField> fields_;
  SchemaRecording* outer_;
};
enum class UnknownKeys { kError, kWarn };

// Reads one JSON object. Every accessor records the key as known; finish() then reports the keys present
// in the file that nothing asked for. Keys starting with '_' are comments and never reported. "Absent" and
// null mean the same ("not given") except where an accessor says otherwise.
class ObjectReader {
 public:
  // Throws ConfigError at the origin's pointer if `value` is not an object.
  ObjectReader(const Json& value, ConfigOrigin origin);

  const ConfigOrigin& origin() const { return origin_; }
  const Json& json() const { return *value_; }
  FieldLocation where(const std::string& key) const { return origin_.locate(key); }
  [[noreturn]] void fail(const std::string& key, const std::string& message) const;
  // True when the key is present with a non-null value.
  bool given(const std::string& key);
  // True when the key is present, null included.
  bool present(const std::string& key) { return find(key) != nullptr; }
  // A key SimuMax accepts and never reads: any value is allowed.
  void ignore(const std::string& key) { asked_.insert(key); }

  // Integers must be JSON integers or floats with an integral value (4.0); never booleans or strings.
  int64_t required_int(const std::string& key, Sign sign);
  int64_t int_or(const std::string& key, int64_t fallback, Sign sign);
  std::optional<int64_t> optional_int(const std::string& key, Sign sign);
  double required_number(const std::string& key, Sign sign);
  double number_or(const std::string& key, double fallback, Sign sign);
  std::optional<double> optional_number(const std::string& key, Sign sign);
  // Null is an error: SimuMax would carry None into arithmetic or comparisons.
  bool bool_or(const std::string& key, bool fallback);
  // Null allowed and means `fallback`, for the fields SimuMax tests only for truthiness.
  bool bool_or_null(const std::string& key, bool fallback);
  std::string required_string(const std::string& key);
  std::optional<std::string> optional_string(const std::string& key);
  // The value must be one of `valid`.
  std::string choice_or(const std::string& key, const std::string& fallback, const std::vector<std::string>& valid);
  std::optional<std::string> optional_choice(const std::string& key, const std::vector<std::string>& valid);
  // A list of strings from `valid` (any strings when `valid` is empty); null or absent gives an empty list.
  std::vector<std::string> string_list(const std::string& key, const std::vector<std::string>& valid);
  ObjectReader object(const std::string& key);
  std::optional<ObjectReader> optional_object(const std::string& key);

  // The keys present, comments excluded; each is recorded as known.
  std::vector<std::string> keys();
  // Unknown keys: ConfigError with a suggestion (kError), or one warning each on the "config" logger (kWarn).
  void finish(UnknownKeys policy) const;

 private:
  const Json* find(const std::string& key);
  // Records the field in the thread's SchemaRecording, if any.
  void note(const std::string& key, const char* kind, Sign sign = Sign::kAny, bool required = false,
            const std::vector<std::string>* choices = nullptr, std::string fallback = "") const;

  const Json* value_;
  ConfigOrigin origin_;
  std::set<std::string> asked_;
};

}  // namespace simumax::config::detail
