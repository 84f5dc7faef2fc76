// The flat records' CSV and JSON-lines forms: cells a spreadsheet would run are kept as text, and a line nested
// beyond the readers' limit is refused (issue 32).
#include "engine/report/record_fields.hpp"

#include <gtest/gtest.h>

#include <string>

#include "engine/common/error.hpp"

namespace simumax::report {
namespace {

TEST(RecordFields, CsvTextKeepsFormulasAsText) {
  EXPECT_EQ(csv_text("llama3_tp2"), "llama3_tp2");
  EXPECT_EQ(csv_text("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_text("say \"hi\""), "\"say \"\"hi\"\"\"");
  EXPECT_EQ(csv_text("=HYPERLINK(\"http://evil\")"), "\"'=HYPERLINK(\"\"http://evil\"\")\"");
  for (const char* formula : {"=1+1", "+1", "-1", "@SUM(A1)", "\t=1", "\r=1"}) {
    EXPECT_EQ(csv_text(formula), std::string("'") + formula) << formula;
  }
  EXPECT_EQ(csv_text(""), "");
  // A number is written by the record's number(), never as text: -5 stays -5.
  const std::string line = csv_line([](FieldSink& f) {
    f.number("x", -5);
    f.text("name", "=cmd");
  });
  EXPECT_EQ(line, "-5,'=cmd\n");
}

TEST(RecordFields, DeeplyNestedLineIsRefused) {
  struct Sink : FieldSink {
    void null(const std::string&) override {}
    void boolean(const std::string&, bool) override {}
    void integer(const std::string&, int64_t) override {}
    void number(const std::string&, double) override {}
    void text(const std::string&, const std::string&) override {}
  } sink;
  const std::string deep = "{\"a\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  try {
    replay_record_line(deep, "shard-0.jsonl", sink);
    FAIL() << "accepted";
  } catch (const common::ConfigError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("shard-0.jsonl: nested deeper than 100 levels (line 1, column ", 0), 0u)
        << e.what();
  }
}

}  // namespace
}  // namespace simumax::report
