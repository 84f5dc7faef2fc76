#include "engine/config/json_reader.hpp"

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"

namespace simumax::config::detail {
namespace {

using testing::expect_config_error;

TEST(JsonReader, ParseErrorReportsLineAndColumn) {
  const auto e = expect_config_error([] { parse_json_text("{\n  \"a\": 1,\n  \"b\": ,\n}\n", "bad.json"); });
  EXPECT_EQ(e.file(), "bad.json");
  EXPECT_EQ(e.pointer(), "");
  EXPECT_EQ(std::string(e.what()),
            "bad.json: invalid JSON at line 3, column 8: syntax error while parsing value - unexpected ','; "
            "expected '[', '{', or a literal");
}

TEST(JsonReader, ParseErrorAtEndOfFileNamesLastLine) {
  const auto e = expect_config_error([] { parse_json_text("{\"a\": 1,\n \"b\": 2\n", "cut.json"); });
  EXPECT_EQ(std::string(e.what()),
            "cut.json: invalid JSON at line 3, column 1: syntax error while parsing object - unexpected end of "
            "input; expected '}'");
}

// A value copied or printed recurses once per level: 200,000 levels overflowed the stack (issue 32).
TEST(JsonReader, DeepNestingIsRefusedBeforeParsing) {
  const std::string deep = "{\"a\": \"[[[\",\n \"b\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  const auto e = expect_config_error([&] { parse_json_text(deep, "deep.json"); });
  // The brackets inside the string do not count: the 100th '[' of "b" is the 101st level.
  EXPECT_EQ(std::string(e.what()),
            "deep.json: nested deeper than 100 levels (line 2, column 106): no input of simumax-sim nests so deep");
  const std::string limit = "{\"b\": " + std::string(99, '[') + std::string(99, ']') + "}";
  EXPECT_NO_THROW(parse_json_text(limit, "limit.json"));
  EXPECT_THROW(parse_json_text("{\"b\": " + std::string(100, '[') + std::string(100, ']') + "}", "over.json"),
               common::ConfigError);
}

TEST(JsonReader, MissingFileReportsCannotOpen) {
  const auto e = expect_config_error([] { parse_json_file("/nonexistent/model.json"); });
  EXPECT_EQ(std::string(e.what()), "/nonexistent/model.json: cannot open file: No such file or directory");
}

struct IntCase {
  const char* json;
  Sign sign;
  const char* expected;  // error message, or the value read when it starts with '='
};

class IntField : public ::testing::TestWithParam<IntCase> {};

TEST_P(IntField, IsTypeCheckedBeforeConversion) {
  const Json doc = Json::parse(std::string("{\"tp_size\": ") + GetParam().json + "}");
  ObjectReader r(doc, ConfigOrigin::of("tp1_pp2.json"));
  const std::string expected = GetParam().expected;
  if (expected[0] == '=') {
    EXPECT_EQ(r.int_or("tp_size", 1, GetParam().sign), std::stoll(expected.substr(1)));
    return;
  }
  const auto e = expect_config_error([&] { r.int_or("tp_size", 1, GetParam().sign); });
  EXPECT_EQ(std::string(e.what()), "tp1_pp2.json: /tp_size: " + expected);
}

INSTANTIATE_TEST_SUITE_P(ObjectReader, IntField,
                         ::testing::Values(IntCase{"\"2\"", Sign::kPositive, "expected a positive integer, got \"2\""},
                                           IntCase{"2.5", Sign::kPositive, "expected a positive integer, got 2.5"},
                                           IntCase{"80.7", Sign::kAny, "expected an integer, got 80.7"},
                                           IntCase{"true", Sign::kPositive, "expected a positive integer, got true"},
                                           IntCase{"null", Sign::kPositive, "expected a positive integer, got null"},
                                           IntCase{"0", Sign::kPositive, "expected a positive integer, got 0"},
                                           IntCase{"-1", Sign::kNonNegative, "expected a non-negative integer, got -1"},
                                           IntCase{"[2]", Sign::kAny, "expected an integer, got an array of 1 element(s)"},
                                           IntCase{"1e30", Sign::kAny, "expected an integer, got 1e+30"},
                                           IntCase{"4.0", Sign::kPositive, "=4"},
                                           IntCase{"0", Sign::kNonNegative, "=0"}, IntCase{"-3", Sign::kAny, "=-3"}));

TEST(ObjectReader, NumberRejectsBooleansAndStrings) {
  const Json doc = Json::parse(R"({"a": true, "b": "0.9", "c": 0.9, "d": 3})");
  ObjectReader r(doc, ConfigOrigin::of("s.json"));
  EXPECT_EQ(std::string(expect_config_error([&] { r.number_or("a", 0, Sign::kAny); }).what()),
            "s.json: /a: expected a number, got true");
  EXPECT_EQ(std::string(expect_config_error([&] { r.number_or("b", 0, Sign::kAny); }).what()),
            "s.json: /b: expected a number, got \"0.9\"");
  EXPECT_DOUBLE_EQ(r.number_or("c", 0, Sign::kPositive), 0.9);
  EXPECT_DOUBLE_EQ(r.number_or("d", 0, Sign::kPositive), 3.0);
}

TEST(ObjectReader, BooleanRejectsNumbersAndStrings) {
  const Json doc = Json::parse(R"({"a": 1, "b": "true", "c": null})");
  ObjectReader r(doc, ConfigOrigin::of("s.json"));
  EXPECT_EQ(std::string(expect_config_error([&] { r.bool_or("a", false); }).what()),
            "s.json: /a: expected true or false, got 1");
  EXPECT_EQ(std::string(expect_config_error([&] { r.bool_or("b", false); }).what()),
            "s.json: /b: expected true or false, got \"true\"");
  EXPECT_EQ(std::string(expect_config_error([&] { r.bool_or("c", false); }).what()),
            "s.json: /c: expected true or false, got null");
  EXPECT_TRUE(r.bool_or_null("c", true));
}

TEST(ObjectReader, RequiredFieldMissingNamesThePointer) {
  const Json doc = Json::parse(R"({})");
  ObjectReader r(doc, ConfigOrigin::of("scenario.json", "/model"));
  EXPECT_EQ(std::string(expect_config_error([&] { r.required_int("hidden_size", Sign::kPositive); }).what()),
            "scenario.json: /model/hidden_size: required field is missing");
}

TEST(ObjectReader, UnknownKeySuggestsClosestName) {
  const Json doc = Json::parse(R"({"tp_sise": 2, "_comment": "ignored"})");
  ObjectReader r(doc, ConfigOrigin::of("tp.json"));
  r.int_or("tp_size", 1, Sign::kPositive);
  r.int_or("pp_size", 1, Sign::kPositive);
  EXPECT_EQ(std::string(expect_config_error([&] { r.finish(UnknownKeys::kError); }).what()),
            "tp.json: /tp_sise: unknown field; did you mean 'tp_size'?");
}

TEST(ObjectReader, UnknownKeyListsValidNamesWhenNothingIsClose) {
  const Json doc = Json::parse(R"({"flux_capacitor": 1})");
  ObjectReader r(doc, ConfigOrigin::of("tp.json"));
  r.given("tp_size");
  r.given("pp_size");
  EXPECT_EQ(std::string(expect_config_error([&] { r.finish(UnknownKeys::kError); }).what()),
            "tp.json: /flux_capacitor: unknown field; valid names: pp_size, tp_size");
}

TEST(ObjectReader, UnknownKeyOnlyWarnsWhenSimuMaxIgnoresIt) {
  testing::CapturedLog log;
  const Json doc = Json::parse(R"({"vendor": "x"})");
  ObjectReader r(doc, ConfigOrigin::of("sys.json"));
  r.finish(UnknownKeys::kWarn);
  EXPECT_EQ(log.text(), "warning: sys.json: /vendor: unknown field, ignored (SimuMax ignores it too)\n");
}

TEST(ObjectReader, ChoiceSuggestsClosestValue) {
  const Json doc = Json::parse(R"({"mode": "roofline2"})");
  ObjectReader r(doc, ConfigOrigin::of("sys.json", "/accelerator"));
  EXPECT_EQ(std::string(expect_config_error([&] {
                          r.choice_or("mode", "", {"roofline", "only_compute"});
                        }).what()),
            "sys.json: /accelerator/mode: expected one of \"roofline\", \"only_compute\", got \"roofline2\"; did "
            "you mean 'roofline'?");
}

TEST(ObjectReader, PointerEscapesSlashAndTilde) { EXPECT_EQ(json_pointer_append("/op", "a/b~c"), "/op/a~1b~0c"); }

TEST(ObjectReader, OverriddenKeyIsLocatedInTheScenarioFile) {
  ConfigOrigin origin = ConfigOrigin::of("tp1.json");
  origin.overrides_file = "scenario.json";
  origin.overrides_pointer = "/strategy_overrides";
  origin.overridden_keys = {"tp_size"};
  EXPECT_EQ(origin.locate("tp_size").file, "scenario.json");
  EXPECT_EQ(origin.locate("tp_size").pointer, "/strategy_overrides/tp_size");
  EXPECT_EQ(origin.locate("pp_size").file, "tp1.json");
  EXPECT_EQ(origin.locate("pp_size").pointer, "/pp_size");
}

}  // namespace
}  // namespace simumax::config::detail
