#include "tests/whatif_runs.hpp"

#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {

namespace fs = std::filesystem;
using Json = nlohmann::json;

WhatIfRuns run_default_on_two_systems(const fs::path& root, const std::vector<std::string>& extra) {
  fs::remove_all(root);
  fs::create_directories(root);
  Json system = Json::parse(read_file("platforms/b200_bf16.json"));
  for (const char* tier : {"high_intra_node", "inter_node"}) system["networks"][tier]["bandwidth"]["gbps"] =
      system["networks"][tier]["bandwidth"]["gbps"].get<double>() / 2;
  std::ofstream(root / "b200_half_bandwidth.json") << system.dump(1);
  Json scenario = Json::parse(read_file("scenarios/default.json"));
  scenario["model"] = fs::absolute("models/llama3-70b.json").string();
  scenario["system"] = (root / "b200_half_bandwidth.json").string();
  std::ofstream(root / "default_half_bandwidth.json") << scenario.dump(1);
  WhatIfRuns runs{root / "full-bandwidth", root / "half-bandwidth", ""};
  for (const auto& [scenario_path, dir] : {std::pair<std::string, fs::path>{"scenarios/default.json", runs.a},
                                          {(root / "default_half_bandwidth.json").string(), runs.b}}) {
    std::vector<std::string> args = {"run", scenario_path, "-q", "-o", dir.string()};
    args.insert(args.end(), extra.begin(), extra.end());
    const CliResult r = run_cli(args);
    if (r.exit_code != 0) runs.error += scenario_path + ": exit " + std::to_string(r.exit_code) + ": " + r.err;
  }
  return runs;
}

}  // namespace simumax::tests
