#include "engine/report/search_io.hpp"

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
  return t;
}

}  // namespace simumax::report
