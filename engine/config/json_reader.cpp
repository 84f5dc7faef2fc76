#include "engine/config/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "engine/common/edit_distance.hpp"
#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"
#include "engine/common/logging.hpp"

namespace simumax::config::detail {

using common::ConfigError;

namespace {

using common::line_column;

// nlohmann reports the byte offset of the last character it read; users need line and column.
std::string parse_error_message(const std::string& text, const Json::parse_error& e) {
  const size_t end = std::min<size_t>(e.byte == 0 ? 0 : e.byte - 1, text.size());
  // Keep nlohmann's explanation ("syntax error while parsing ...") but drop its own position prefix.
  std::string what = e.what();
  const size_t col_at = what.find("column ");
  const size_t colon = col_at == std::string::npos ? what.find(": ") : what.find(": ", col_at);
  std::string detail = colon == std::string::npos ? what : what.substr(colon + 2);
  // nlohmann quotes what it last read: text of the user's file (a secret, when the file was not JSON at all).
  // Say where and what was expected, never what the file holds.
  if (const size_t last = detail.find("; last read:"); last != std::string::npos) detail.erase(last);
  return "invalid JSON at " + line_column(text, end) + ": " + detail;
}

std::string quoted_list(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "\"" : ", \"") + n + "\"";
  return out;
}

std::string sign_word(Sign sign, const char* any_article) {
  switch (sign) {
    case Sign::kPositive:
      return "a positive ";
    case Sign::kNonNegative:
      return "a non-negative ";
    case Sign::kAny:
      break;
  }
  return any_article;
}

std::string expect_int(Sign sign) { return "expected " + sign_word(sign, "an ") + "integer"; }
std::string expect_number(Sign sign) { return "expected " + sign_word(sign, "a ") + "number"; }

bool sign_ok(double v, Sign sign) {
  return sign == Sign::kAny || (sign == Sign::kPositive && v > 0) || (sign == Sign::kNonNegative && v >= 0);
}

// 2^63 as a double: the first value that no longer fits an int64.
constexpr double kInt64Limit = 9223372036854775808.0;

[[noreturn]] void fail_at(const FieldLocation& at, const std::string& message) {
  throw ConfigError(at.file, at.pointer, message);
}

// One of `valid`, or any string when `valid` is empty.
std::string checked_choice(const FieldLocation& at, const Json& v, const std::vector<std::string>& valid) {
  if (valid.empty()) {
    if (!v.is_string()) fail_at(at, "expected a string, got " + json_repr(v));
    return v.get<std::string>();
  }
  if (!v.is_string()) fail_at(at, "expected one of " + quoted_list(valid) + ", got " + json_repr(v));
  const std::string s = v.get<std::string>();
  if (std::find(valid.begin(), valid.end(), s) != valid.end()) return s;
  fail_at(at, "expected one of " + quoted_list(valid) + ", got " + json_repr(v) + ";" + name_suggestion(s, valid));
}


// nlohmann (like Python's json.load, which SimuMax uses) keeps the last of two equal keys of an object, silently:
// {"layer_num": 80, "layer_num": 12} runs 12 layers. Such a file is ambiguous, so it is refused, naming both
// places. REQUIRES: `text` is valid JSON (a light scan of strings and brackets, run after the parser).
void check_duplicate_keys(const std::string& text, const std::string& label) {
  struct Level {
    bool object = false;
    bool expect_key = false;
    std::string current;                 // the key (object) or index (array) being read
    std::map<std::string, size_t> keys;  // key -> offset of its first occurrence
  };
  std::vector<Level> stack;
  auto pointer = [&] {
    std::string p;
    for (const auto& l : stack) p += "/" + l.current;
    return p;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '{' || c == '[') {
      Level l;
      l.object = c == '{';
      l.expect_key = l.object;
      l.current = l.object ? "" : "0";
      stack.push_back(std::move(l));
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',' && !stack.empty()) {
      Level& l = stack.back();
      if (l.object) {
        l.expect_key = true;
      } else {
        l.current = std::to_string(std::stoll(l.current) + 1);
      }
    } else if (c == '"') {
      const size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
      if (stack.empty() || !stack.back().object || !stack.back().expect_key) continue;
      Level& l = stack.back();
      const std::string key = text.substr(start + 1, i - start - 1);
      l.expect_key = false;
      if (const auto it = l.keys.find(key); it != l.keys.end()) {
        l.current = key;
        throw ConfigError(label, pointer(), "the key appears twice in one object (" + line_column(text, it->second) +
                                                 " and " + line_column(text, start) + "); keep one");
      }
      l.keys.emplace(key, start);
      l.current = key;
    }
  }
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& label) {
  common::require_json_depth(text, label);
  try {
    Json doc = Json::parse(text);
    check_duplicate_keys(text, label);
    return doc;
  } catch (const Json::parse_error& e) {
    throw ConfigError(label, "", parse_error_message(text, e));
  } catch (const Json::out_of_range& e) {
    // A number beyond a double (1e400): nlohmann gives no position, but its message names the number.
    std::string what = e.what();
    if (const size_t end = what.find("] "); end != std::string::npos) what.erase(0, end + 2);  // "[json.exception...]"
    throw ConfigError(label, "", "invalid JSON: " + what + " (beyond the range of a double)");
  }
}

Json parse_json_file(const std::string& path) {
  // A config is a small regular file: /dev/zero would be read without end, a FIFO would block forever.
  constexpr uintmax_t kMaxConfigBytes = 256u << 20;
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status)) {
    if (!std::filesystem::is_regular_file(status)) {
      throw ConfigError(path, "", "is not a regular file (a config must be a JSON file)");
    }
    if (std::filesystem::file_size(path, ec) > kMaxConfigBytes) {
      throw ConfigError(path, "", "is larger than 256 MiB: no config is that large");
    }
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ConfigError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return parse_json_text(buffer.str(), path);
}

std::string json_repr(const Json& value) {
  // What the value is, not what the file holds: containers by their size, long strings cut short.
  if (value.is_array()) return "an array of " + std::to_string(value.size()) + " element(s)";
  if (value.is_object()) return "an object of " + std::to_string(value.size()) + " key(s)";
  std::string s = value.dump();
  if (s.size() > 40) s = s.substr(0, 37) + "...";
  return s;
}

std::string name_suggestion(const std::string& name, const std::vector<std::string>& candidates) {
  // A typo is a few edits away; anything farther is a different name, so list the valid ones instead.
  const size_t limit = std::max<size_t>(2, name.size() / 3);
  const std::string* best = nullptr;
  size_t best_distance = limit + 1;
  for (const auto& c : candidates) {
    const size_t d = common::edit_distance(name, c, /*ignore_case=*/true);
    if (d < best_distance) {
      best_distance = d;
      best = &c;
    }
  }
  // A shortened name ("full" for "full_block") is far in edits but obviously meant.
  for (const auto& c : candidates) {
    if (best != nullptr) break;
    const bool prefix = name.size() >= 3 && (c.compare(0, name.size(), name) == 0 || name.compare(0, c.size(), c) == 0);
    if (prefix) best = &c;
  }
  if (best != nullptr) return " did you mean '" + *best + "'?";
  std::string out = " valid names:";
  for (size_t i = 0; i < candidates.size(); ++i) out += (i == 0 ? " " : ", ") + candidates[i];
  return out;
}

ObjectReader::ObjectReader(const Json& value, ConfigOrigin origin) : value_(&value), origin_(std::move(origin)) {
  if (!value.is_object()) {
    throw ConfigError(origin_.file, origin_.pointer, "expected a JSON object {...}, got " + json_repr(value));
  }
}

void ObjectReader::fail(const std::string& key, const std::string& message) const { fail_at(where(key), message); }

namespace {
thread_local SchemaRecording* g_recording = nullptr;
}  // namespace

SchemaRecording::SchemaRecording() : outer_(g_recording) { g_recording = this; }
SchemaRecording::~SchemaRecording() { g_recording = outer_; }

void ObjectReader::note(const std::string& key, const char* kind, Sign sign, bool required,
                        const std::vector<std::string>* choices, std::string fallback) const {
  if (g_recording == nullptr) return;
  SchemaField f{kind, sign, choices ? *choices : std::vector<std::string>{}, required, std::move(fallback)};
  g_recording->note(json_pointer_append(origin_.pointer, key), std::move(f));
}

const Json* ObjectReader::find(const std::string& key) {
  asked_.insert(key);
  const auto it = value_->find(key);
  return it == value_->end() ? nullptr : &*it;
}

bool ObjectReader::given(const std::string& key) {
  const Json* v = find(key);
  return v != nullptr && !v->is_null();
}

constexpr int64_t kMaxConfigInt = 2147483647;

std::optional<int64_t> ObjectReader::optional_int(const std::string& key, Sign sign) {
  note(key, "integer", sign);
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  const std::string expected = expect_int(sign);
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
    fail(key, expected + ", got " + json_repr(*v) + ", which is too large");
  }
  std::optional<int64_t> i;
  if (v->is_number_integer()) {
    i = v->get<int64_t>();
    if (!sign_ok(static_cast<double>(*i), sign)) fail(key, expected + ", got " + json_repr(*v));
  } else if (v->is_number_float()) {
    const double d = v->get<double>();
    // An integral float (4.0) is the same number to Python; a fractional one (2.5) is a mistake.
    if (std::isfinite(d) && d == std::floor(d) && std::fabs(d) < kInt64Limit && sign_ok(d, sign)) {
      i = static_cast<int64_t>(d);
    }
  }
  if (!i) fail(key, expected + ", got " + json_repr(*v));
  // No count, size or index of a training job comes near 2^31; beyond it, products of them overflow.
  if (*i > kMaxConfigInt || *i < -kMaxConfigInt) {
    fail(key, expected + " of magnitude at most 2147483647 (2^31 - 1), got " + json_repr(*v));
  }
  return i;
}

int64_t ObjectReader::required_int(const std::string& key, Sign sign) {
  note(key, "integer", sign, true);
  const Json* v = find(key);
  if (v == nullptr) fail(key, "required field is missing");
  const auto i = optional_int(key, sign);
  if (!i) fail(key, expect_int(sign) + ", got null");
  return *i;
}

int64_t ObjectReader::int_or(const std::string& key, int64_t fallback, Sign sign) {
  note(key, "integer", sign, false, nullptr, std::to_string(fallback));
  const Json* v = find(key);
  if (v != nullptr && v->is_null()) {
    fail(key, expect_int(sign) + ", got null");
  }
  return optional_int(key, sign).value_or(fallback);
}

std::optional<double> ObjectReader::optional_number(const std::string& key, Sign sign) {
  note(key, "number", sign);
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  // JSON booleans are not numbers here, although nlohmann (and Python) would convert them.
  if (v->is_number() && sign_ok(v->get<double>(), sign)) return v->get<double>();
  fail(key, expect_number(sign) + ", got " + json_repr(*v));
}

double ObjectReader::required_number(const std::string& key, Sign sign) {
  note(key, "number", sign, true);
  const Json* v = find(key);
  if (v == nullptr) fail(key, "required field is missing");
  const auto d = optional_number(key, sign);
  if (!d) fail(key, expect_number(sign) + ", got null");
  return *d;
}

double ObjectReader::number_or(const std::string& key, double fallback, Sign sign) {
  note(key, "number", sign, false, nullptr, Json(fallback).dump());
  const Json* v = find(key);
  if (v != nullptr && v->is_null()) {
    fail(key, expect_number(sign) + ", got null");
  }
  return optional_number(key, sign).value_or(fallback);
}

bool ObjectReader::bool_or(const std::string& key, bool fallback) {
  note(key, "boolean", Sign::kAny, false, nullptr, fallback ? "true" : "false");
  const Json* v = find(key);
  if (v == nullptr) return fallback;
  if (!v->is_boolean()) fail(key, "expected true or false, got " + json_repr(*v));
  return v->get<bool>();
}

bool ObjectReader::bool_or_null(const std::string& key, bool fallback) {
  note(key, "boolean", Sign::kAny, false, nullptr, fallback ? "true" : "false");
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return fallback;
  return bool_or(key, fallback);
}

std::optional<std::string> ObjectReader::optional_string(const std::string& key) {
  note(key, "string");
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  if (!v->is_string()) fail(key, "expected a string, got " + json_repr(*v));
  return v->get<std::string>();
}

std::string ObjectReader::required_string(const std::string& key) {
  note(key, "string", Sign::kAny, true);
  if (find(key) == nullptr) fail(key, "required field is missing");
  const auto s = optional_string(key);
  if (!s) fail(key, "expected a string, got null");
  return *s;
}

std::string ObjectReader::choice_or(const std::string& key, const std::string& fallback,
                                    const std::vector<std::string>& valid) {
  note(key, "choice", Sign::kAny, false, &valid, Json(fallback).dump());
  const Json* v = find(key);
  if (v == nullptr) return fallback;
  return checked_choice(where(key), *v, valid);
}

std::optional<std::string> ObjectReader::optional_choice(const std::string& key,
                                                         const std::vector<std::string>& valid) {
  note(key, "choice", Sign::kAny, false, &valid);
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return checked_choice(where(key), *v, valid);
}

std::vector<std::string> ObjectReader::string_list(const std::string& key, const std::vector<std::string>& valid) {
  note(key, "strings", Sign::kAny, false, &valid);
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return {};
  if (!v->is_array()) {
    fail(key, "expected a list of strings" + (valid.empty() ? "" : " from " + quoted_list(valid)) + ", got " +
                  json_repr(*v));
  }
  const FieldLocation at = where(key);
  std::vector<std::string> out;
  for (size_t i = 0; i < v->size(); ++i) {
    out.push_back(checked_choice({at.file, at.pointer + "/" + std::to_string(i)}, (*v)[i], valid));
  }
  return out;
}

ObjectReader ObjectReader::object(const std::string& key) {
  note(key, "object", Sign::kAny, true);
  const Json* v = find(key);
  if (v == nullptr) fail(key, "required field is missing");
  const FieldLocation at = where(key);
  return ObjectReader(*v, ConfigOrigin::of(at.file, at.pointer));
}

std::optional<ObjectReader> ObjectReader::optional_object(const std::string& key) {
  note(key, "object");
  const Json* v = find(key);
  if (v == nullptr || v->is_null()) return std::nullopt;
  return object(key);
}

std::vector<std::string> ObjectReader::keys() {
  std::vector<std::string> out;
  for (const auto& item : value_->items()) {
    if (!item.key().empty() && item.key()[0] == '_') continue;
    asked_.insert(item.key());
    out.push_back(item.key());
  }
  return out;
}

void ObjectReader::finish(UnknownKeys policy) const {
  const std::vector<std::string> known(asked_.begin(), asked_.end());
  for (const auto& item : value_->items()) {
    const std::string& key = item.key();
    if ((!key.empty() && key[0] == '_') || asked_.count(key) != 0) continue;
    if (policy == UnknownKeys::kError) fail(key, "unknown field;" + name_suggestion(key, known));
    const FieldLocation at = where(key);
    common::logger("config")->warn("{}: {}: unknown field, ignored (SimuMax ignores it too)", at.file, at.pointer);
  }
}

}  // namespace simumax::config::detail
