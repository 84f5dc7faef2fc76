// The JSON the strategy search and the sweep read and write (JSON stays in config/ and report/): records of flat
// fields (as JSON, one-line JSON and CSV), a scenario file with an inline strategy, and the totals of a summary.json
// written by `simumax-sim run`.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace simumax::report {

class TextFile;

using JsonScalar = std::variant<std::nullptr_t, bool, int64_t, double, std::string>;
using JsonFields = std::vector<std::pair<std::string, JsonScalar>>;  // in the order written

using JsonRecordList = std::pair<std::string, std::vector<JsonFields>>;  // a key and its list of records

// {meta fields..., "<key>": [{record fields...}, ...], ...}, indented; same input -> same text. A double that is
// not finite is written as null.
std::string records_json(const JsonFields& meta, const std::vector<JsonRecordList>& lists);

// The text of records_json(meta, lists + {streamed_key: [the records add()ed, in order]}) written to `path`
// (atomically, TextFile, on close()) one record at a time: memory stays bounded whatever the number of records (a
// search of 323k candidates ran out of memory building it whole). Throws common::UsageError when `path` cannot be
// written.
class RecordsJsonFile {
 public:
  RecordsJsonFile(const std::string& path, const JsonFields& meta, const std::vector<JsonRecordList>& lists,
                  const std::string& streamed_key);
  ~RecordsJsonFile();
  void add(const JsonFields& record);
  void close();

 private:
  std::unique_ptr<TextFile> out_;
  size_t count_ = 0;
};

// A record as one line of JSON (no newline; nlohmann's compact dump): parse_record_line gives the same fields, values
// and types back, so a record that went through a file is written out exactly as one that did not.
std::string record_line(const JsonFields& record);
// Throws common::ConfigError(label, "", ...) when `line` is not a JSON object whose values are scalars.
JsonFields parse_record_line(const std::string& line, const std::string& label);

// The value of JSON text as a scalar; an array or object stays its text (a string). Throws ConfigError(label, ...)
// when `json_text` is not JSON.
JsonScalar json_text_scalar(const std::string& json_text, const std::string& label);

// CSV: the header line of a record's keys, and a record's line (null -> empty cell, a double in its shortest text
// that reads back the same, quotes around a cell holding a comma, a quote or a newline).
std::string csv_header(const JsonFields& record);
std::string csv_line(const JsonFields& record);

// A scenario file (config::load_scenario's format) whose strategy is inline.
struct ScenarioFile {
  std::string name;
  std::string description;
  std::string model;  // path as written: relative to the scenario file's folder, or absolute
  std::string system;
  std::string base_strategy_file;  // the inline strategy starts as this SimuMax strategy file's object; "" = {}
  JsonFields strategy_fields;      // then these top-level keys are set (added or replaced)
};

// REQUIRES: base_strategy_file, when given, is a readable JSON object (it was loaded before).
// Throws common::ConfigError when it is not.
std::string scenario_file_json(const ScenarioFile& f);

// The headline figures of a summary.json (report::summary_json's format).
struct SummaryTotals {
  std::string executor;
  double step_time_ms = 0;
  double peak_reserved_bytes_max = 0;
  int64_t peak_alloc_bytes_max = 0;
  double mfu = 0;
  double tokens_per_s = 0;
  bool fits = true;         // the fit verdict ("fit": {"fits", "headroom_gib"})
  double headroom_gib = 0;  // GPU memory left on the tightest stage; negative: over by that much
};

// Throws common::ConfigError naming the file and the field when it is missing or of the wrong type.
SummaryTotals read_summary_totals(const std::string& path);

}  // namespace simumax::report
