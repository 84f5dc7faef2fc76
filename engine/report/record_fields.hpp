// Flat records (one line of search.csv, sweep.csv, validate --csv; one object of search.json, sweep.json, validate
// --json): each record is a typed struct with one function that hands its fields, in the order written, to a
// FieldSink. The JSON and CSV writers here and the Python module's dicts are sinks, so the list of a record's keys
// is written once (engine/report/records.hpp has the records).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace simumax::report {

class TextFile;

// A record's fields one by one, typed.
class FieldSink {
 public:
  virtual ~FieldSink() = default;
  virtual void null(const std::string& key) = 0;
  virtual void boolean(const std::string& key, bool v) = 0;
  virtual void integer(const std::string& key, int64_t v) = 0;
  virtual void number(const std::string& key, double v) = 0;  // JSON writes a number that is not finite as null
  virtual void text(const std::string& key, const std::string& v) = 0;

  // nullopt -> null.
  void maybe_boolean(const std::string& key, const std::optional<bool>& v) { v ? boolean(key, *v) : null(key); }
  void maybe_integer(const std::string& key, const std::optional<int64_t>& v) { v ? integer(key, *v) : null(key); }
  void maybe_number(const std::string& key, const std::optional<double>& v) { v ? number(key, *v) : null(key); }
  void maybe_text(const std::string& key, const std::optional<std::string>& v) { v ? text(key, *v) : null(key); }
  // The value of JSON text `json` (a sweep axis value from the sweep file) as the scalar it is; an array or object
  // is written as its text. REQUIRES: `json` is JSON (the sweep file was read).
  void json_value(const std::string& key, const std::string& json);
};

// A record: its fields handed to a sink, in the order written.
using Fields = std::function<void(FieldSink&)>;
using RecordList = std::pair<std::string, std::vector<Fields>>;  // a key and its list of records

// {meta fields..., "<key>": [{record fields...}, ...], ...}, indented by one space (nlohmann's dump(1)); same input
// -> same text.
// `schema` (e.g. "simumax_sim_search_v1") and common::version() come first, as "schema" and "version".
std::string records_json(const char* schema, const Fields& meta, const std::vector<RecordList>& lists);

// The text of records_json(schema, meta, lists + {streamed_key: [the records add()ed, in order]}) written to `path`
// (atomically, TextFile, on close()) one record at a time: memory stays bounded whatever the number of records (a
// search of 323k candidates ran out of memory building it whole). Throws common::UsageError when `path` cannot be
// written.
class RecordsJsonFile {
 public:
  RecordsJsonFile(const std::string& path, const char* schema, const Fields& meta, const std::vector<RecordList>& lists,
                  const std::string& streamed_key);
  ~RecordsJsonFile();
  void add(const Fields& record);
  void close();

 private:
  std::unique_ptr<TextFile> out_;
  size_t count_ = 0;
};

// A record as one line of JSON (no newline; nlohmann's compact dump). replay_record_line hands the line's fields,
// values and types back to `sink` in the order written, so a record that went through a file is written out exactly
// as one that did not. Throws common::ConfigError(label, "", ...) when `line` is not a JSON object whose values are
// scalars.
std::string record_line(const Fields& record);
void replay_record_line(const std::string& line, const std::string& label, FieldSink& sink);

// A sink that keeps each field by its type, for a reader of record lines: a field is found only under the type
// the line holds (an integer is not a number here, as nlohmann tells them apart).
class RecordValues final : public FieldSink {
 public:
  void null(const std::string& key) override { keys_.push_back(key); }
  void boolean(const std::string& key, bool v) override { keys_.push_back(key), booleans_.emplace_back(key, v); }
  void integer(const std::string& key, int64_t v) override { keys_.push_back(key), integers_.emplace_back(key, v); }
  void number(const std::string& key, double v) override { keys_.push_back(key), numbers_.emplace_back(key, v); }
  void text(const std::string& key, const std::string& v) override {
    keys_.push_back(key), texts_.emplace_back(key, v);
  }
  bool has(const std::string& key) const;  // of any type, null included
  const bool* find_boolean(const std::string& key) const { return find(booleans_, key); }
  const int64_t* find_integer(const std::string& key) const { return find(integers_, key); }
  const double* find_number(const std::string& key) const { return find(numbers_, key); }
  const std::string* find_text(const std::string& key) const { return find(texts_, key); }

 private:
  template <typename T>
  static const T* find(const std::vector<std::pair<std::string, T>>& list, const std::string& key) {
    for (const auto& [k, v] : list) {
      if (k == key) return &v;
    }
    return nullptr;
  }
  std::vector<std::string> keys_;
  std::vector<std::pair<std::string, bool>> booleans_;
  std::vector<std::pair<std::string, int64_t>> integers_;
  std::vector<std::pair<std::string, double>> numbers_;
  std::vector<std::pair<std::string, std::string>> texts_;
};

// A text cell of a CSV file: quoted when it holds a comma, a quote or a newline; and one that a spreadsheet would
// run as a formula (it begins with =, +, -, @, a tab or a carriage return: "=HYPERLINK(...)" in a case name) is
// kept as text by a leading apostrophe (OWASP's "CSV injection").
std::string csv_text(const std::string& s);

// CSV: the header line of a record's keys, and a record's line (null -> empty cell, a double in its shortest text
// that reads back the same, a text as csv_text writes it).
std::string csv_header(const Fields& record);
std::string csv_line(const Fields& record);
// The header of the first record, then every record's line; "" when there is none.
std::string records_csv(const std::vector<Fields>& records);

}  // namespace simumax::report
