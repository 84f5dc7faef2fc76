// simumax-sim platform: write the SimGrid platform XML of a system config, for a person to read and edit.
#include <fstream>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct PlatformArgs {
  std::string system;
  int64_t nodes = 1;
  int64_t gpus_per_node = 0;
  std::string out;
};

int do_platform(const PlatformArgs& a) {
  config::SystemConfig sys = config::load_system_file(a.system);
  if (a.gpus_per_node > 0) sys.num_per_node = a.gpus_per_node;
  const auto spec = platform::platform_from_system(sys, a.nodes * sys.num_per_node);
  const std::string xml = platform::platform_xml(spec);
  if (a.out.empty() || a.out == "-") {
    std::cout << xml;
  } else {
    std::ofstream f(a.out);
    if (!f) throw common::UsageError(a.out + ": cannot write");
    f << xml;
    std::cerr << "wrote " << a.out << " (" << spec.gpus() << " GPUs on " << spec.nodes << (spec.nodes == 1 ? " node)\n" : " nodes)\n");
  }
  return 0;
}

}  // namespace

std::function<int()> add_platform(CLI::App& app) {
  auto args = std::make_shared<PlatformArgs>();
  CLI::App* sub = app.add_subcommand("platform", "write the SimGrid platform XML of a system config");
  sub->add_option("system", args->system, "SimuMax system JSON")->required();
  sub->add_option("--nodes", args->nodes, "number of nodes")->capture_default_str()->check(CLI::Range(1, 1 << 20));
  sub->add_option("--gpus-per-node", args->gpus_per_node, "GPUs per node (default: the system's num_per_node)")
      ->check(CLI::Range(1, 1024));
  sub->add_option("-o,--out", args->out, "output file (default: standard output)");
  return [sub, args]() { return sub->parsed() ? do_platform(*args) : -1; };
}

}  // namespace simumax::tools
