// The layering rules of DESIGN.md, checked over the source tree: which folder may include what.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kStages = {"common", "config",   "model",  "cost",   "graph",
                                          "platform", "executor", "memory", "report", "search", "measure",
                                          "calibrate"};

int stage_index(const std::string& s) {
  for (size_t i = 0; i < kStages.size(); ++i) {
    if (kStages[i] == s) return static_cast<int>(i);
  }
  return -1;
}

struct Source {
  std::string folder;  // engine stage, or "tools"/"tests"
  fs::path path;
  std::vector<std::string> includes;
};

std::vector<Source> engine_sources() {
  std::vector<Source> out;
  const std::regex include_re(R"(^\s*#\s*include\s*[<"]([^>"]+)[>"])");
  for (const auto& e : fs::recursive_directory_iterator(fs::path(SIMUMAX_SOURCE_DIR) / "engine")) {
    const auto ext = e.path().extension();
    if (!e.is_regular_file() || (ext != ".cpp" && ext != ".hpp")) continue;
    Source s;
    s.path = e.path();
    const auto rel = fs::relative(e.path(), fs::path(SIMUMAX_SOURCE_DIR) / "engine");
    s.folder = rel.begin()->string();
    std::ifstream in(e.path());
    std::string line;
    std::smatch m;
    while (std::getline(in, line)) {
      if (std::regex_search(line, m, include_re)) s.includes.push_back(m[1]);
    }
    out.push_back(std::move(s));
  }
  return out;
}

// Tests and their helpers may reach what they need to set up fixtures.
bool is_test(const fs::path& p) {
  const std::string stem = p.stem().string();
  return stem.ends_with("_test") || stem.find("test_util") != std::string::npos;
}

TEST(Layering, SimGridOnlyInPlatformAndExecutorSources) {
  for (const auto& s : engine_sources()) {
    for (const auto& inc : s.includes) {
      if (!inc.starts_with("simgrid/") && !inc.starts_with("xbt/")) continue;
      if (is_test(s.path)) continue;
      EXPECT_TRUE((s.folder == "platform" || s.folder == "executor") && s.path.extension() == ".cpp")
          << s.path << " includes " << inc;
    }
  }
}

TEST(Layering, BoostGraphOnlyInGraph) {
  for (const auto& s : engine_sources()) {
    for (const auto& inc : s.includes) {
      if (inc.starts_with("boost/graph")) {
        EXPECT_EQ(s.folder, "graph") << s.path << " includes " << inc;
      }
    }
  }
}

TEST(Layering, JsonOnlyInConfigAndReport) {
  for (const auto& s : engine_sources()) {
    for (const auto& inc : s.includes) {
      if (inc.starts_with("nlohmann/")) {
        EXPECT_TRUE(s.folder == "config" || s.folder == "report") << s.path << " includes " << inc;
      }
    }
  }
}

TEST(Layering, StagesIncludeOnlyEarlierStages) {
  for (const auto& s : engine_sources()) {
    const int own = stage_index(s.folder);
    if (own < 0) continue;  // engine/simulate.*: the whole pipeline
    for (const auto& inc : s.includes) {
      if (!inc.starts_with("engine/")) continue;
      const std::string dep = fs::path(inc).begin()->string() == "engine" ? (++fs::path(inc).begin())->string() : "";
      const int other = stage_index(dep);
      if (other < 0) continue;
      // Tests may reach later stages to set up their fixtures; library code may not.
      if (is_test(s.path)) continue;
      EXPECT_LE(other, own) << s.path << " (" << s.folder << ") includes " << inc;
    }
  }
}

}  // namespace
