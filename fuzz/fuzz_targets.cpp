#include "fuzz/fuzz_targets.hpp"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/config/scenario.hpp"
#include "engine/platform/platform_check.hpp"
#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/kineto_trace.hpp"
#include "engine/compare/megatron_log.hpp"
#include "engine/config/sweep_file.hpp"
#include "engine/measure/nccl_tests.hpp"
#include "engine/report/serve_request.hpp"

namespace simumax::fuzz {
namespace {

namespace fs = std::filesystem;

// A folder of our own for the readers that take a path; it outlives every call and goes at exit.
class Scratch {
 public:
  Scratch() {
    std::string pattern = (fs::temp_directory_path() / "simumax-fuzz-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw common::InternalError("fuzz: cannot create a scratch folder");
    dir_ = pattern;
    // The configs a fuzzed scenario can name by relative path ("model.json", ...).
    const fs::path src = SIMUMAX_SOURCE_DIR;
    fs::copy_file(src / "models/llama3-8b.json", dir_ / "model.json");
    fs::copy_file(src / "fuzz/corpus/config_strategy/tp1_pp2.json", dir_ / "strategy.json");
    fs::copy_file(src / "fuzz/corpus/config_system/small_system.json", dir_ / "system.json");
  }
  ~Scratch() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  // Writes `data` to `name` in the folder and returns its path.
  std::string put(const std::string& name, std::string_view data) const {
    const fs::path path = dir_ / name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(data.data(), static_cast<std::streamsize>(data.size()));
    out.close();
    if (!out) throw common::InternalError("fuzz: cannot write " + path.string());
    return path.string();
  }

 private:
  fs::path dir_;
};

const Scratch& scratch() {
  static const Scratch instance;
  return instance;
}

const compare::KernelClassTable& kernel_classes() {
  static const compare::KernelClassTable table =
      compare::KernelClassTable::load(std::string(SIMUMAX_SOURCE_DIR) + "/data/kernel_classes.json");
  return table;
}

using Target = std::function<void(std::string_view)>;

const std::map<std::string, Target>& targets() {
  static const std::map<std::string, Target> all = {
      {"config_model", [](std::string_view d) { config::load_model_file(scratch().put("in_model.json", d)); }},
      {"config_strategy",
       [](std::string_view d) { config::load_strategy_file(scratch().put("in_strategy.json", d)); }},
      {"config_system", [](std::string_view d) { config::load_system_file(scratch().put("in_system.json", d)); }},
      {"scenario", [](std::string_view d) { config::load_scenario(scratch().put("in_scenario.json", d)); }},
      // One 8-GPU node: the platform check's reach and count rules run too.
      {"platform_xml", [](std::string_view d) { platform::check_platform_text(d, "in_platform.xml", 8, 8); }},
      {"kineto", [](std::string_view d) { compare::load_kineto_trace(scratch().put("in_trace.json", d), kernel_classes()); }},
      {"megatron_log",
       [](std::string_view d) {
         std::istringstream in{std::string(d)};
         compare::parse_megatron_log(in, "in.log");
       }},
      {"kernel_classes", [](std::string_view d) { compare::KernelClassTable::parse(std::string(d), "in_classes.json"); }},
      // serve's POST body, read as serve reads it: the inline scenario, written and loaded.
      {"serve_request",
       [](std::string_view d) {
         config::load_scenario(scratch().put("in_request.json", report::inline_scenario_text(std::string(d))));
       }},
      // A sweep file whose base may name the scratch folder's model.json, strategy.json and system.json.
      {"sweep_file", [](std::string_view d) { config::load_sweep(scratch().put("in_sweep.json", d), 1000); }},
      // nccl-tests output, with the collective and ranks from the text and given.
      {"nccl_tests",
       [](std::string_view d) {
         const std::string text(d);
         try {
           measure::parse_nccl_tests(text, "in.txt", {});
         } catch (const common::ConfigError&) {
         }
         measure::parse_nccl_tests(text, "in.txt", {"all_reduce", 8, true});
       }},
  };
  return all;
}

}  // namespace

const std::vector<std::string>& target_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [name, target] : targets()) v.push_back(name);
    return v;
  }();
  return names;
}

void fuzz_one(const std::string& target, std::string_view data) {
  const auto it = targets().find(target);
  if (it == targets().end()) throw common::UsageError("unknown fuzz target '" + target + "'");
  try {
    it->second(data);
  } catch (const common::ConfigError&) {
  } catch (const common::UsageError&) {
  }
}

}  // namespace simumax::fuzz
