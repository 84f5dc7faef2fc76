#include "engine/executor/sim_engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <simgrid/s4u.hpp>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"
#include "engine/platform/platform_check.hpp"
#include "engine/platform/platform_xml.hpp"

namespace simumax::executor::detail {

namespace sg4 = simgrid::s4u;

namespace {

uint32_t job_rank(const graph::TaskGraph& g, uint32_t rank) {
  return rank < g.global_rank.size() ? g.global_rank[rank] : rank;
}

// platform_xml(spec) in a private temporary file: what a user would get from the CLI is exactly what runs.
// Removed once SimGrid has loaded it, when loading fails, and when the process is interrupted meanwhile.
class GeneratedPlatformFile {
 public:
  explicit GeneratedPlatformFile(const platform::PlatformSpec& spec)
      : file_((std::filesystem::temp_directory_path() / ("simumax-platform-" + std::to_string(::getpid()) + ".xml"))
                  .string()) {
    std::ofstream out(path(), std::ios::binary | std::ios::trunc);
    out << platform::platform_xml(spec);
    out.close();
    if (!out) throw common::InternalError("sim: cannot write the platform to " + path());
  }
  const std::string& path() const { return file_.path(); }

 private:
  common::ScratchFile file_;
};

sg4::Engine& make_engine(bool log_simgrid) {
  static bool created = false;
  if (created) {
    throw common::InternalError("run_sim: one simulation per process (SimGrid keeps global state)");
  }
  created = true;
  std::vector<std::string> args = {"simumax-sim"};
  if (!log_simgrid) args.emplace_back("--log=root.thres:critical");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  // SimGrid installs its own SIGINT handler (it prints a status and exits 1): the process's handlers are put back,
  // then this module's, which chains to them. The module (dlopened, RTLD_LOCAL) has its own copy of the list of
  // temporary files; the process's (a run's staging folder, files half written) is removed by its own handler.
  struct sigaction before_int {}, before_term {};
  sigaction(SIGINT, nullptr, &before_int);
  sigaction(SIGTERM, nullptr, &before_term);
  // Never deleted: tearing down a large simulation costs as much as running it (see the header contract).
  auto* engine = new sg4::Engine(&argc, argv.data());
  sigaction(SIGINT, &before_int, nullptr);
  sigaction(SIGTERM, &before_term, nullptr);
  common::install_interrupt_handler();
  // Measured on SimGrid 3.32 (shared/simgrid-notes): CM02 without cross-traffic and without the TCP window
  // bound makes a transfer take exactly latency + bytes / bandwidth; precision 1e-12 keeps completions
  // 0.1 ns apart distinct. All must be set before the platform exists.
  sg4::Engine::set_config("network/model:CM02");
  sg4::Engine::set_config("network/crosstraffic:0");
  sg4::Engine::set_config("network/TCP-gamma:1e30");
  sg4::Engine::set_config("surf/precision:1e-12");
  // The flow helpers (FlowPool) only make Execs: 128 KiB of stack each instead of 8 MiB of address space.
  sg4::Engine::set_config("contexts/stack-size:128");
  return *engine;
}

RankHosts map_hosts(const sg4::Engine& engine, const graph::TaskGraph& g, int64_t gpn, const std::string& path) {
  // SimGrid 3.32 looks a name up zone by zone (O(zones) per lookup): one pass over all hosts instead.
  std::unordered_map<std::string, sg4::Host*> by_name;
  for (sg4::Host* h : engine.get_all_hosts()) by_name.emplace(h->get_name(), h);
  auto find = [&](const std::string& name) {
    auto it = by_name.find(name);
    return it == by_name.end() ? nullptr : it->second;
  };
  RankHosts hosts;
  hosts.platform = path;
  for (uint32_t r = 0; r < g.num_ranks; ++r) {
    const int64_t job = job_rank(g, r);
    sg4::Host* gpu = find(platform::gpu_host_name(job, gpn));
    if (gpu == nullptr) {
      throw common::ConfigError(path, "",
                                "no host " + platform::gpu_host_name(job, gpn) + " for rank " + std::to_string(job));
    }
    hosts.gpu.push_back(gpu);
    hosts.nic.push_back(find(platform::nic_host_name(job)));
    hosts.node.push_back(job / gpn);
  }
  return hosts;
}

}  // namespace

LoadedPlatform load_platform(const graph::TaskGraph& graph, const SimOptions& options) {
  const bool user_xml = !options.platform_xml_path.empty();
  const int64_t gpn = options.gpus_per_node > 0 ? options.gpus_per_node
                      : options.spec            ? options.spec->gpus_per_node
                                                : 0;
  if (!user_xml && !options.spec)
    throw common::InternalError("run_sim: SimOptions needs a platform_xml_path or a spec");
  if (gpn < 1) throw common::InternalError("run_sim: SimOptions needs gpus_per_node (or a spec) with an XML path");
  int64_t world = 1;
  for (uint32_t r = 0; r < graph.num_ranks; ++r) world = std::max<int64_t>(world, job_rank(graph, r) + 1);
  if (!user_xml && world > options.spec->gpus()) {
    throw common::InternalError("run_sim: the graph has rank " + std::to_string(world - 1) + " but the spec only " +
                                std::to_string(options.spec->gpus()) + " GPUs");
  }
  std::optional<GeneratedPlatformFile> generated;
  if (!user_xml) generated.emplace(*options.spec);
  const std::string& path = user_xml ? options.platform_xml_path : generated->path();
  if (user_xml) platform::check_platform_xml(path, world, gpn);  // before SimGrid, which aborts on bad platforms
  sg4::Engine& engine = make_engine(options.log_simgrid);
  try {
    engine.load_platform(path);
    engine.seal_platform();
  } catch (const std::exception& e) {  // what the check missed but SimGrid reports without aborting
    if (!user_xml) throw common::InternalError(std::string("sim: SimGrid rejected the generated platform: ") + e.what());
    throw common::ConfigError(path, "", std::string("SimGrid rejected the platform: ") + e.what());
  }
  return {&engine, map_hosts(engine, graph, gpn, user_xml ? path : "generated platform")};
}

}  // namespace simumax::executor::detail
