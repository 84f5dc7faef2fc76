// simumax-sim platform: write the SimGrid platform XML of a system config, for a person to read and edit.
#include <fstream>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/platform/fabric.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/report/text_file.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct PlatformArgs {
  std::string system;
  int64_t nodes = 1;
  int64_t gpus_per_node = 0;
  std::string topology = "single-switch";
  double oversubscription = 1;
  int64_t nodes_per_leaf = 0;
  int64_t leaves_per_zone = 0;
  std::string nic_per = "gpu";
  std::string out;
};

platform::PlatformSpec make_spec(const PlatformArgs& a) {
  config::SystemConfig sys = config::load_system_file(a.system);
  if (a.gpus_per_node > 0) sys.num_per_node = a.gpus_per_node;
  if (a.nodes * sys.num_per_node > platform::kMaxPlatformGpus) {  // at most 2^20 x 2^31: no overflow
    throw common::UsageError("--nodes " + std::to_string(a.nodes) + " x " + std::to_string(sys.num_per_node) +
                             " GPUs per node is " + std::to_string(a.nodes * sys.num_per_node) +
                             " GPUs, more than a platform holds (" + std::to_string(platform::kMaxPlatformGpus) +
                             ", 2^24)");
  }
  platform::PlatformSpec spec = platform::platform_from_system(sys, a.nodes * sys.num_per_node);
  spec.topology = *platform::parse_topology(a.topology);  // CLI11 checked the name
  spec.oversubscription = a.oversubscription;
  spec.nodes_per_leaf = a.nodes_per_leaf;
  spec.leaves_per_zone = a.leaves_per_zone;
  spec.nic_per_node = a.nic_per == "node";
  if (spec.topology == platform::Topology::kRail && spec.nic_per_node) {
    throw common::UsageError("--topology rail needs one NIC per GPU (rail g joins NIC g of every node); "
                             "drop --nic-per node");
  }
  if (spec.topology == platform::Topology::kSingleSwitch &&
      (a.oversubscription != 1 || a.nodes_per_leaf != 0 || a.leaves_per_zone != 0)) {
    throw common::UsageError(
        "--oversubscription, --nodes-per-leaf and --leaves-per-zone need --topology fat-tree or rail");
  }
  return spec;
}

int do_platform(const PlatformArgs& a) {
  if (!a.out.empty() && a.out != "-") check_output_file(a.out);
  const platform::PlatformSpec spec = make_spec(a);
  const std::string xml = platform::platform_xml(spec);
  if (a.out.empty() || a.out == "-") {
    std::cout << xml;
    return 0;
  }
  report::write_file_atomically(a.out, xml);
  std::cerr << "wrote " << a.out << " (" << spec.gpus() << " GPUs on " << spec.nodes
            << (spec.nodes == 1 ? " node" : " nodes");
  if (spec.topology != platform::Topology::kSingleSwitch) {
    const auto layout = platform::fabric_layout(spec);
    std::cerr << ", " << platform::to_string(spec.topology) << " with " << layout.leaves.size() << " leaf switches of "
              << layout.ports_per_leaf << " ports, oversubscription " << spec.oversubscription << ":1";
  }
  std::cerr << ")\n";
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
  sub->add_option("--topology", args->topology,
                  "inter-node fabric: single-switch (non-blocking), fat-tree (leaf switches of whole nodes under a "
                  "spine tier) or rail (NIC g of every node of a pod on rail switch g, rails under a spine tier)")
      ->capture_default_str()
      ->check(CLI::IsMember({"single-switch", "fat-tree", "rail"}));
  sub->add_option("--oversubscription", args->oversubscription,
                  "fat-tree/rail: a leaf's NIC bandwidth / its uplink bandwidth (1 = full bisection, 2 = 2:1)")
      ->capture_default_str()
      ->check(CLI::Range(1e-3, 1e6));
  sub->add_option("--nodes-per-leaf", args->nodes_per_leaf,
                  "fat-tree: nodes under one leaf switch (default: 32 NIC ports' worth, 4 nodes of 8 GPUs); "
                  "rail: nodes per pod under one rail switch (default 32)")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--leaves-per-zone", args->leaves_per_zone,
                  "fat-tree/rail: leaf switches per SimGrid zone, 1 (a zone per leaf, which SimGrid runs fastest) or "
                  "more (blocks of leaves, which SimGrid 3.32 loads far faster past a thousand leaves; same routes); "
                  "default: 1 up to 1024 leaves, 8 past them")
      ->check(CLI::Range(1, 64));
  sub->add_option("--nic-per", args->nic_per, "gpu: one NIC per GPU; node: one NIC per node, shared by its GPUs")
      ->capture_default_str()
      ->check(CLI::IsMember({"gpu", "node"}));
  sub->add_option("-o,--out", args->out, "output file (default: standard output)");
  return [sub, args]() { return sub->parsed() ? do_platform(*args) : -1; };
}

}  // namespace simumax::tools
