#include "engine/report/record_fields.hpp"

#include <charconv>
#include <cmath>
#include <string_view>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"
#include "engine/common/version.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::ordered_json;

class JsonSink final : public FieldSink {
 public:
  void null(const std::string& key) override { j_[key] = nullptr; }
  void boolean(const std::string& key, bool v) override { j_[key] = v; }
  void integer(const std::string& key, int64_t v) override { j_[key] = v; }
  void number(const std::string& key, double v) override { j_[key] = std::isfinite(v) ? Json(v) : Json(nullptr); }
  void text(const std::string& key, const std::string& v) override { j_[key] = v; }
  Json take() { return std::move(j_); }

 private:
  Json j_ = Json::object();
};

Json object_of(const Fields& fields) {
  JsonSink sink;
  if (fields) fields(sink);
  return sink.take();
}

// GCC 12 misreports chained std::string + as overlapping copies, so each piece is appended on its own.
class CsvSink final : public FieldSink {
 public:
  explicit CsvSink(bool header) : header_(header) {}
  void null(const std::string& key) override { cell(key, ""); }
  void boolean(const std::string& key, bool v) override { cell(key, v ? "true" : "false"); }
  void integer(const std::string& key, int64_t v) override { cell(key, std::to_string(v)); }
  void number(const std::string& key, double v) override {
    char buf[32];
    const auto res = std::to_chars(buf, buf + sizeof buf, v);  // shortest text that reads back the same
    cell(key, std::string(buf, res.ptr));
  }
  void text(const std::string& key, const std::string& s) override { cell(key, csv_text(s)); }
  std::string take() { return std::move(line_) + "\n"; }

 private:
  void cell(const std::string& key, const std::string& value) {
    if (!first_) line_ += ',';
    first_ = false;
    line_ += header_ ? key : value;
  }
  bool header_;
  bool first_ = true;
  std::string line_;
};

}  // namespace

void FieldSink::json_value(const std::string& key, const std::string& json) {
  const Json v = Json::parse(json);
  if (v.is_null()) null(key);
  else if (v.is_boolean()) boolean(key, v.get<bool>());
  else if (v.is_number_integer()) integer(key, v.get<int64_t>());
  else if (v.is_number()) number(key, v.get<double>());
  else if (v.is_string()) text(key, v.get<std::string>());
  else text(key, v.dump());
}

std::string records_json(const char* schema, const Fields& meta, const std::vector<RecordList>& lists) {
  Json j = object_of([&](FieldSink& f) {
    f.text("schema", schema);
    f.text("version", common::version());
    meta(f);
  });
  for (const auto& [key, records] : lists) {
    Json list = Json::array();
    for (const auto& record : records) list.push_back(object_of(record));
    j[key] = std::move(list);
  }
  return j.dump(1) + "\n";
}

RecordsJsonFile::RecordsJsonFile(const std::string& path, const char* schema, const Fields& meta,
                                 const std::vector<RecordList>& lists,
                                 const std::string& streamed_key)
    : out_(std::make_unique<TextFile>(path)) {
  // records_json's layout (nlohmann's dump with indent 1): the document without the streamed list, then the list
  // at depth 1 and each record at depth 2, indented as dump would.
  std::string head = records_json(schema, meta, lists);
  const size_t close = head.rfind('}');
  head.erase(close);
  while (!head.empty() && (head.back() == '\n' || head.back() == ' ')) head.pop_back();
  out_->append(head);
  out_->append(head.size() > 1 ? ",\n " : "\n ");
  out_->append(Json(streamed_key).dump());
  out_->append(": ");
}

RecordsJsonFile::~RecordsJsonFile() = default;

void RecordsJsonFile::add(const Fields& record) {
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

std::string record_line(const Fields& record) { return object_of(record).dump(); }

void replay_record_line(const std::string& line, const std::string& label, FieldSink& sink) {
  common::require_json_depth(line, label);
  Json j;
  try {
    j = Json::parse(line);
  } catch (const Json::parse_error& e) {
    throw common::ConfigError(label, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw common::ConfigError(label, "", "expected a JSON object (one record)");
  for (const auto& [key, v] : j.items()) {
    if (!v.is_primitive()) {
      throw common::ConfigError(label, "/" + key, "expected a scalar (a record's values are scalars)");
    }
  }
  for (const auto& [key, v] : j.items()) {
    if (v.is_null()) sink.null(key);
    else if (v.is_boolean()) sink.boolean(key, v.get<bool>());
    else if (v.is_number_integer()) sink.integer(key, v.get<int64_t>());
    else if (v.is_number()) sink.number(key, v.get<double>());
    else sink.text(key, v.get<std::string>());
  }
}

bool RecordValues::has(const std::string& key) const {
  for (const std::string& k : keys_) {
    if (k == key) return true;
  }
  return false;
}

std::string csv_text(const std::string& s) {
  const bool formula = !s.empty() && std::string_view("=+-@\t\r").find(s.front()) != std::string_view::npos;
  const std::string text = formula ? "'" + s : s;
  if (text.find_first_of(",\"\n") == std::string::npos) return text;
  std::string quoted = "\"";
  for (char ch : text) quoted += ch == '"' ? std::string("\"\"") : std::string(1, ch);
  return quoted + "\"";
}

std::string csv_header(const Fields& record) {
  CsvSink sink(true);
  record(sink);
  return sink.take();
}

std::string csv_line(const Fields& record) {
  CsvSink sink(false);
  record(sink);
  return sink.take();
}

std::string records_csv(const std::vector<Fields>& records) {
  if (records.empty()) return "";
  std::string out = csv_header(records[0]);
  for (const auto& rec : records) out += csv_line(rec);
  return out;
}

}  // namespace simumax::report
