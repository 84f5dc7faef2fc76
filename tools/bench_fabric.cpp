#include "tools/bench_fabric.hpp"

#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "engine/common/error.hpp"
#include "engine/common/target.hpp"
#include "engine/config/scenario.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/report/text_file.hpp"

extern char** environ;

namespace simumax::tools {

void bench_rail_fabric(const std::string& self, const std::string& scenario, const std::string& out_dir,
                       double target_s, double target_gb, double oversubscription) {
  const config::Scenario s = config::load_scenario(scenario);
  platform::PlatformSpec spec = platform::platform_from_system(s.system, s.strategy.world_size);
  spec.topology = platform::Topology::kRail;
  spec.oversubscription = oversubscription;
  const std::string xml =
      (std::filesystem::temp_directory_path() / ("simumax-bench-rail-" + std::to_string(::getpid()) + ".xml")).string();
  report::write_file_atomically(xml, platform::platform_xml(spec));
  std::vector<std::string> args = {self,      "run",     scenario, "-q",       "-o", out_dir,
                                   "--executor", "sim", "--ranks", "all", "--platform", xml};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const auto t0 = std::chrono::steady_clock::now();
  pid_t pid = 0;
  if (posix_spawn(&pid, self.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
    throw common::UsageError("cannot start " + self);
  }
  int status = 0;
  struct rusage usage {};
  wait4(pid, &status, 0, &usage);  // this child's own peak RSS (RUSAGE_CHILDREN would mix in earlier children)
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::filesystem::remove(xml);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw common::UsageError("benchmark child failed: " + scenario);
  const double gb = static_cast<double>(usage.ru_maxrss) * 1024 / 1e9;  // ru_maxrss is in KiB on Linux
  std::string what = "sim, every rank of " + std::to_string(s.strategy.world_size) + " GPUs, rail fat-tree";
  if (oversubscription != 1) what += fmt::format(" {:g}:1", oversubscription);
  std::printf("%-58s %10.3f %-3s %s\n", what.c_str(), wall, "s", common::target_verdict(wall, target_s, true).c_str());
  std::printf("%-58s %10.3f %-3s %s\n", "  peak memory of that process", gb, "GB",
              common::target_verdict(gb, target_gb, true).c_str());
}

}  // namespace simumax::tools
