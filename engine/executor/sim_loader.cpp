// Loads the SimGrid executor (libsimumax_sim.so) only when a simulation is asked for.
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/install_paths.hpp"
#include "engine/executor/sim_executor.hpp"

namespace simumax::executor {

namespace {

using Entry = void (*)(const graph::TaskGraph*, const SimOptions*, Timeline*);

std::vector<std::string> candidates() {
  std::vector<std::string> out;
  if (const char* env = std::getenv("SIMUMAX_SIM_MODULE")) out.emplace_back(env);
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    out.push_back((exe.parent_path() / "libsimumax_sim.so").string());
    out.push_back((exe.parent_path() / "../lib/libsimumax_sim.so").string());
  }
  // The Python module's install root (install_paths.hpp) when the process is the interpreter.
  if (const auto root = common::install_root(); !root.empty()) out.push_back((root / "lib/libsimumax_sim.so").string());
  out.emplace_back(SIMUMAX_SIM_MODULE);  // the build tree
  return out;
}

Entry load_entry() {
  std::string tried;
  for (const auto& path : candidates()) {
    if (!std::filesystem::exists(path)) {
      tried += " " + path;
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) throw common::InternalError(std::string("cannot load the SimGrid executor: ") + dlerror());
    if (void* sym = dlsym(handle, "simumax_run_sim_entry")) return reinterpret_cast<Entry>(sym);
    throw common::InternalError(path + " has no simumax_run_sim_entry");
  }
  throw common::InternalError("the SimGrid executor library libsimumax_sim.so was not found; tried:" + tried +
                              " (set SIMUMAX_SIM_MODULE to its path)");
}

}  // namespace

Timeline run_sim(const graph::TaskGraph& graph, const SimOptions& options) {
  static const Entry entry = load_entry();
  Timeline out;
  entry(&graph, &options, &out);
  return out;
}

}  // namespace simumax::executor
