#include "engine/report/search_io.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

using common::ConfigError;
using Json = nlohmann::ordered_json;

namespace {

Json to_json(const JsonScalar& v) {
  return std::visit(
      [](const auto& x) -> Json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::nullptr_t>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, double>) {
          return std::isfinite(x) ? Json(x) : Json(nullptr);
        } else {
          return x;
        }
      },
      v);
}

Json object_of(const JsonFields& fields) {
  Json j = Json::object();
  for (const auto& [key, value] : fields) j[key] = to_json(value);
  return j;
}

Json read_json_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ConfigError(path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw ConfigError(path, "", std::string("invalid JSON: ") + e.what());
  }
}

const Json& field(const Json& doc, const std::string& path, const char* key, bool (Json::*is_type)() const noexcept,
                  const char* type) {
  const auto it = doc.find(key);
  if (it == doc.end()) throw ConfigError(path, std::string("/") + key, "required field is missing");
  if (!((*it).*is_type)()) throw ConfigError(path, std::string("/") + key, std::string("expected ") + type);
  return *it;
}

}  // namespace

std::string records_json(const JsonFields& meta, const std::vector<JsonRecordList>& lists) {
  Json j = object_of(meta);
  for (const auto& [key, records] : lists) {
    Json list = Json::array();
    for (const auto& record : records) list.push_back(object_of(record));
    j[key] = std::move(list);
  }
  return j.dump(1) + "\n";
}

RecordsJsonFile::RecordsJsonFile(const std::string& path, const JsonFields& meta,
                                 const std::vector<JsonRecordList>& lists, const std::string& streamed_key)
    : out_(std::make_unique<TextFile>(path)) {
  // records_json's layout (nlohmann's dump with indent 1): the document without the streamed list, then the list
  // at depth 1 and each record at depth 2, indented as dump would.
  std::string head = records_json(meta, lists);
  const size_t close = head.rfind('}');
  head.erase(close);
  while (!head.empty() && (head.back() == '\n' || head.back() == ' ')) head.pop_back();
  out_->append(head);
  out_->append(head.size() > 1 ? ",\n " : "\n ");
  out_->append(Json(streamed_key).dump());
  out_->append(": ");
}

RecordsJsonFile::~RecordsJsonFile() = default;

void RecordsJsonFile::add(const JsonFields& record) {
  std::string text = object_of(record).dump(1);
  std::string indented = count_++ == 0 ? "[\n  " : ",\n  ";
  for (char c : text) {
    indented += c;
    if (c == '\n') indented += "  ";
  }
  out_->append(indented);
}

void RecordsJsonFile::close() {
  out_->append(count_ == 0 ? "[]\n}\n" : "\n ]\n}\n");
  out_->close();
}

std::string record_line(const JsonFields& record) { return object_of(record).dump(); }

JsonFields parse_record_line(const std::string& line, const std::string& label) {
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error& e) {
    throw ConfigError(label, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw ConfigError(label, "", "expected a JSON object (one record)");
  JsonFields out;
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) out.emplace_back(key, nullptr);
    else if (v.is_boolean()) out.emplace_back(key, v.get<bool>());
    else if (v.is_number_integer()) out.emplace_back(key, v.get<int64_t>());
    else if (v.is_number()) out.emplace_back(key, v.get<double>());
    else if (v.is_string()) out.emplace_back(key, v.get<std::string>());
    else throw ConfigError(label, "/" + key, "expected a scalar (a record's values are scalars)");
  }
  return out;
}

JsonScalar json_text_scalar(const std::string& json_text, const std::string& label) {
  Json v;
  try {
    v = Json::parse(json_text);
  } catch (const Json::parse_error& e) {
    throw ConfigError(label, "", std::string("invalid JSON: ") + e.what());
  }
  if (v.is_null()) return nullptr;
  if (v.is_boolean()) return v.get<bool>();
  if (v.is_number_integer()) return v.get<int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

namespace {

std::string csv_cell(const JsonScalar& v) {
  if (std::holds_alternative<std::nullptr_t>(v)) return "";
  if (const bool* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&v)) {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, *d);  // shortest text that reads back the same
    return std::string(buf, res.ptr);
  }
  const std::string& s = std::get<std::string>(v);
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string quoted = "\"";
  for (char ch : s) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

}  // namespace

// GCC 12 misreports chained std::string + as overlapping copies, so each piece is appended on its own.
std::string csv_header(const JsonFields& record) {
  std::string out;
  for (size_t k = 0; k < record.size(); ++k) {
    if (k > 0) out += ',';
    out += record[k].first;
  }
  out += '\n';
  return out;
}

std::string csv_line(const JsonFields& record) {
  std::string out;
  for (size_t k = 0; k < record.size(); ++k) {
    if (k > 0) out += ',';
    out += csv_cell(record[k].second);
  }
  out += '\n';
  return out;
}

std::string scenario_file_json(const ScenarioFile& f) {
  Json strategy = f.base_strategy_file.empty() ? Json::object() : read_json_file(f.base_strategy_file);
  if (!strategy.is_object()) throw ConfigError(f.base_strategy_file, "", "expected a JSON object");
  for (const auto& [key, value] : f.strategy_fields) strategy[key] = to_json(value);
  Json j;
  j["name"] = f.name;
  if (!f.description.empty()) j["description"] = f.description;
  j["model"] = f.model;
  j["strategy"] = std::move(strategy);
  j["system"] = f.system;
  return j.dump(2) + "\n";
}

SummaryTotals read_summary_totals(const std::string& path) {
  const Json doc = read_json_file(path);
  if (!doc.is_object()) throw ConfigError(path, "", "expected a JSON object (a summary.json)");
  SummaryTotals t;
  t.executor = field(doc, path, "executor", &Json::is_string, "a string").get<std::string>();
  t.step_time_ms = field(doc, path, "step_time_ms", &Json::is_number, "a number").get<double>();
  t.peak_reserved_bytes_max = field(doc, path, "peak_reserved_bytes_max", &Json::is_number, "a number").get<double>();
  t.peak_alloc_bytes_max =
      field(doc, path, "peak_alloc_bytes_max", &Json::is_number_integer, "an integer").get<int64_t>();
  t.mfu = field(doc, path, "mfu", &Json::is_number, "a number").get<double>();
  t.tokens_per_s = field(doc, path, "tokens_per_s", &Json::is_number, "a number").get<double>();
  const Json& fit = field(doc, path, "fit", &Json::is_object, "an object");
  t.fits = field(fit, path + " /fit", "fits", &Json::is_boolean, "a boolean").get<bool>();
  t.headroom_gib = field(fit, path + " /fit", "headroom_gib", &Json::is_number, "a number").get<double>();
  return t;
}

}  // namespace simumax::report
