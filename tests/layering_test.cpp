// The layering rules of DESIGN.md, checked over the source tree: which folder may include what.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// DESIGN.md's "may use" column, folder by folder. Every folder may use `common` and itself; a folder that is not
// listed here fails the test, so a new stage has to state what it may use. `compare` is DESIGN's stage for the
// real side (trace and log readers); `calibrate` learns from real evidence and from validation cases, so it
// times ops like `report` does and fits collectives through `measure`, the plain-C++ half of
// `simumax-measure`. `schedule` holds the pipeline schedules (each one's name, chunk placement, refused layouts
// and programs, in one file): it comes before `config`, which checks a strategy's schedule against its entry, so
// that `model` (placement) and `graph` (programs) read the same entry. Its pass vocabulary (F, B, W, B+W, recompute;
// `pass.hpp`) is what ops, costs, tasks and memory steps are labelled with, so every stage that names a pass uses it.
const std::map<std::string, std::set<std::string>> kMayUse = {
    {"common", {}},
    {"schedule", {}},
    {"config", {"schedule"}},
    {"model", {"config", "schedule"}},
    {"cost", {"config", "schedule", "model"}},
    {"graph", {"config", "model", "cost", "schedule"}},
    {"platform", {"config"}},
    {"executor", {"schedule", "graph", "platform"}},
    {"memory", {"schedule", "graph", "executor"}},
    {"report", {"config", "schedule", "model", "cost", "graph", "platform", "executor", "memory"}},
    {"compare", {"config", "report"}},
    {"calibrate", {"config", "model", "cost", "report", "compare", "measure"}},
    {"measure", {"config", "schedule", "model", "cost", "report"}},
    {"search", {"config", "model", "cost", "graph", "platform", "executor", "memory", "report"}},
};

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

TEST(Layering, JsonOnlyInConfigReportAndCompare) {
  for (const auto& s : engine_sources()) {
    for (const auto& inc : s.includes) {
      if (inc.starts_with("nlohmann/")) {
        EXPECT_TRUE(s.folder == "config" || s.folder == "report" || s.folder == "compare") << s.path << " includes " << inc;
      }
    }
  }
}

TEST(Layering, EveryEngineFolderHasAMayUseRow) {
  for (const auto& s : engine_sources()) {
    if (s.folder == "simulate.cpp" || s.folder == "simulate.hpp") continue;  // the whole pipeline
    EXPECT_TRUE(kMayUse.contains(s.folder)) << s.path << ": engine/" << s.folder
                                            << " has no row in the may-use table (tests/layering_test.cpp, DESIGN.md)";
  }
}

TEST(Layering, StagesIncludeOnlyWhatTheirRowAllows) {
  for (const auto& s : engine_sources()) {
    const auto row = kMayUse.find(s.folder);
    if (row == kMayUse.end()) continue;  // engine/simulate.*, or reported by the test above
    // Tests may reach later stages to set up their fixtures; library code may not.
    if (is_test(s.path)) continue;
    for (const auto& inc : s.includes) {
      const fs::path p(inc);
      if (!inc.starts_with("engine/") || std::distance(p.begin(), p.end()) < 3) continue;
      const std::string dep = (++p.begin())->string();
      if (dep == s.folder || dep == "common") continue;
      EXPECT_TRUE(row->second.contains(dep)) << s.path << " (" << s.folder << ") includes " << inc << ", but "
                                             << s.folder << " may not use " << dep;
    }
  }
}

// The rule is only as good as its table: two rows that allow each other's folder would let two stages include
// each other, so the table itself must be acyclic.
TEST(Layering, MayUseTableHasNoCycle) {
  std::map<std::string, int> state;  // 0 unseen, 1 on the path, 2 done
  std::function<bool(const std::string&)> acyclic = [&](const std::string& f) {
    if (state[f] == 1) return false;
    if (state[f] == 2) return true;
    state[f] = 1;
    const auto row = kMayUse.find(f);
    if (row != kMayUse.end()) {
      for (const auto& d : row->second) {
        if (!acyclic(d)) return false;
      }
    }
    state[f] = 2;
    return true;
  };
  for (const auto& [folder, uses] : kMayUse) EXPECT_TRUE(acyclic(folder)) << folder << " is on a cycle";
}

}  // namespace
