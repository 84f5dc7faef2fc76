// Helpers shared by the config tests: paths to the shared data, temporary JSON files, captured warnings.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config::testing {

using Json = nlohmann::json;

// Normalized, as the loaders normalize the paths they resolve (the root build passes "<repo>/../shared").
inline std::string shared_dir() {
  std::string dir = std::filesystem::path(SIMUMAX_SHARED_DIR).lexically_normal().string();
  if (dir.size() > 1 && dir.back() == '/') dir.pop_back();
  return dir;
}
inline std::string shared(const std::string& relative) { return shared_dir() + "/" + relative; }
inline std::string model_file(const std::string& name) { return shared("simumax-configs/models/" + name); }
inline std::string strategy_file(const std::string& name) { return shared("simumax-configs/strategy/" + name); }
inline std::string system_file(const std::string& name) { return shared("simumax-configs/system/" + name); }
inline std::string error_fixture(const std::string& name) { return std::string(SIMUMAX_CONFIG_TEST_DATA) + "/" + name; }

inline Json read_json(const std::string& path) {
  std::ifstream in(path);
  return Json::parse(in);
}

// A fresh folder under the system temp dir, removed with the object.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("simumax_config_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  std::string path(const std::string& name) const { return (path_ / name).string(); }
  std::string write_text(const std::string& name, const std::string& text) const {
    std::filesystem::create_directories((path_ / name).parent_path());
    std::ofstream(path(name)) << text;
    return path(name);
  }
  std::string write(const std::string& name, const Json& json) const { return write_text(name, json.dump(2)); }

 private:
  std::filesystem::path path_;
};

// Runs `body`, expecting a ConfigError; returns it (or fails the test and returns an empty error).
inline common::ConfigError expect_config_error(const std::function<void()>& body) {
  try {
    body();
  } catch (const common::ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError";
  return common::ConfigError("", "", "");
}

// Shipped configs (llama3-70b or deepseekv2 with ep8, on b200), named briefly so that expected messages
// stay readable: "llama3-70b.json" / "deepseekv2.json", "strategy.json", "system.json".
inline const Scenario& shipped_scenario(bool moe) {
  static const auto make = [](bool with_experts) {
    Scenario s;
    const std::string model = with_experts ? "deepseekv2.json" : "llama3-70b.json";
    s.model = load_model_file(model_file(model));
    s.strategy = load_strategy_file(strategy_file(with_experts ? "ep8_pp1_dp8_mbs1.json" : "tp1_pp1_dp8_mbs1.json"));
    s.system = load_system_file(system_file("b200_bf16_ceperm.json"));
    s.model_origin = ConfigOrigin::of(model);
    s.strategy_origin = ConfigOrigin::of("strategy.json");
    s.system_origin = ConfigOrigin::of("system.json");
    return s;
  };
  static const Scenario dense = make(false);
  static const Scenario with_experts = make(true);
  return moe ? with_experts : dense;
}

// A change to a shipped scenario and the exact message check_scenario gives for it.
struct RuleCase {
  const char* name;
  bool moe;
  std::function<void(Scenario&)> change;
  const char* expected;  // the full message; empty when the changed scenario is legal
};

inline void expect_rule(const RuleCase& rule) {
  Scenario s = shipped_scenario(rule.moe);
  rule.change(s);
  if (std::string(rule.expected).empty()) {
    EXPECT_NO_THROW(check_scenario(s));
    return;
  }
  EXPECT_EQ(std::string(expect_config_error([&] { check_scenario(s); }).what()), rule.expected);
}

// Collects what the "config" logger writes while it lives.
class CapturedLog {
 public:
  CapturedLog() : sink_(std::make_shared<spdlog::sinks::ostream_sink_mt>(stream_)) {
    sink_->set_pattern("%l: %v");
    common::logger("config")->sinks().push_back(sink_);
  }
  ~CapturedLog() {
    auto& sinks = common::logger("config")->sinks();
    sinks.erase(std::remove(sinks.begin(), sinks.end(), sink_), sinks.end());
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;
  std::string text() const { return stream_.str(); }

 private:
  std::ostringstream stream_;
  std::shared_ptr<spdlog::sinks::ostream_sink_mt> sink_;
};

}  // namespace simumax::config::testing
