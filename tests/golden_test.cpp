// Golden tests: every scenario under scenarios/ runs through the CLI; its summary.json must match the
// checked-in tests/golden/<scenario path>.summary.json (exact strings; numbers to 1e-9 relative, 1e-9 absolute;
// the top-level "version" is the release's and not compared).
// SIMUMAX_UPDATE_GOLDEN=1 rewrites the expected files (review the diff).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = SIMUMAX_SOURCE_DIR;

std::vector<std::string> scenarios() {
  std::vector<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(kRoot / "scenarios")) {
    if (e.is_regular_file() && e.path().extension() == ".json" &&
        e.path().string().find("/bench/") == std::string::npos) {
      out.push_back(fs::relative(e.path(), kRoot / "scenarios").string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

void compare(const nlohmann::json& want, const nlohmann::json& got, const std::string& where) {
  if (want.is_number() && got.is_number()) {
    const double a = want.get<double>(), b = got.get<double>();
    // Relative 1e-9, plus an absolute 1e-9 for values that are zero up to rounding (a bubble of 1e-12 ms).
    EXPECT_LE(std::abs(a - b), 1e-9 * std::max(std::abs(a), std::abs(b)) + 1e-9) << where << ": " << a << " vs " << b;
    return;
  }
  ASSERT_EQ(want.type(), got.type()) << where;
  if (want.is_object()) {
    ASSERT_EQ(want.size(), got.size()) << where;
    for (auto it = want.begin(); it != want.end(); ++it) {
      // The release writes its own version; the schema key says whether the keys changed.
      if (where.empty() && it.key() == "version") continue;
      ASSERT_TRUE(got.contains(it.key())) << where << "/" << it.key();
      compare(it.value(), got[it.key()], where + "/" + it.key());
    }
  } else if (want.is_array()) {
    ASSERT_EQ(want.size(), got.size()) << where;
    for (size_t i = 0; i < want.size(); ++i) compare(want[i], got[i], where + "/" + std::to_string(i));
  } else {
    EXPECT_EQ(want, got) << where;
  }
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, SummaryMatchesCheckedInReport) {
  const fs::path scenario = kRoot / "scenarios" / GetParam();
  const fs::path out = fs::temp_directory_path() / ("simumax-golden-" + std::to_string(getpid()));
  const auto r = run_cli({"run", scenario.string(), "-q", "-o", out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string got_text = read_file((out / "summary.json").string());
  const fs::path golden = kRoot / "tests" / "golden" / (GetParam() + ".summary.json");
  if (std::getenv("SIMUMAX_UPDATE_GOLDEN")) {
    fs::create_directories(golden.parent_path());
    std::ofstream(golden) << got_text;
    GTEST_SKIP() << "rewrote " << golden;
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing; run with SIMUMAX_UPDATE_GOLDEN=1";
  compare(nlohmann::json::parse(read_file(golden.string())), nlohmann::json::parse(got_text), "");
  fs::remove_all(out);
}

TEST_P(Golden, ReportIsByteIdenticalAcrossRuns) {
  const fs::path scenario = kRoot / "scenarios" / GetParam();
  const fs::path out = fs::temp_directory_path() / ("simumax-golden-twice-" + std::to_string(getpid()));
  ASSERT_EQ(run_cli({"run", scenario.string(), "-q", "-o", (out / "a").string()}).exit_code, 0);
  ASSERT_EQ(run_cli({"run", scenario.string(), "-q", "-o", (out / "b").string()}).exit_code, 0);
  EXPECT_EQ(read_file((out / "a/summary.json").string()), read_file((out / "b/summary.json").string()));
  fs::remove_all(out);
}

std::string name_of(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return n;
}

INSTANTIATE_TEST_SUITE_P(Scenarios, Golden, ::testing::ValuesIn(scenarios()), name_of);

}  // namespace
}  // namespace simumax::tests
