#include "engine/measure/launch_env.hpp"

#include <cstdlib>
#include <vector>

#include "engine/common/error.hpp"

namespace simumax::measure {

namespace {

int64_t number(const EnvLookup& env, const std::string& name, int64_t min) {
  const auto v = env(name);
  int64_t out = 0;
  bool ok = v && !v->empty() && v->size() <= 9;
  for (char c : ok ? *v : std::string()) ok = ok && c >= '0' && c <= '9';
  if (ok) out = std::stoll(*v);
  if (!ok || out < min) {
    throw common::UsageError("launch: " + name + "=" + (v ? "'" + *v + "'" : "(unset)") +
                             ": expected an integer >= " + std::to_string(min));
  }
  return out;
}

// SLURM_TASKS_PER_NODE: "8(x2)" or "8,4" or "8(x2),4"; every node must run the same number of tasks.
int64_t slurm_tasks_per_node(const std::string& v) {
  int64_t common_count = -1;
  size_t start = 0;
  while (start < v.size()) {
    size_t end = v.find(',', start);
    if (end == std::string::npos) end = v.size();
    const std::string part = v.substr(start, end - start);
    const std::string count = part.substr(0, part.find('('));
    if (count.empty() || count.find_first_not_of("0123456789") != std::string::npos || count.size() > 9) {
      throw common::UsageError("launch: SLURM_TASKS_PER_NODE='" + v + "': expected counts like 8(x2) or 8,8");
    }
    const int64_t c = std::stoll(count);
    if (common_count >= 0 && c != common_count) {
      throw common::UsageError("launch: SLURM_TASKS_PER_NODE='" + v +
                               "': the nodes run different numbers of ranks; launch the same number on every node "
                               "(srun --ntasks-per-node)");
    }
    common_count = c;
    start = end + 1;
  }
  if (common_count <= 0) throw common::UsageError("launch: SLURM_TASKS_PER_NODE='" + v + "': no task count");
  return common_count;
}

}  // namespace

EnvLookup process_env() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* v = std::getenv(name.c_str());
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
}

Launch launch_from_env(const EnvLookup& env) {
  Launch l;
  std::string rank_var, world_var;
  if (env("OMPI_COMM_WORLD_RANK")) {
    l.launcher = "mpi";
    rank_var = "OMPI_COMM_WORLD_RANK", world_var = "OMPI_COMM_WORLD_SIZE";
    l.local_rank = number(env, "OMPI_COMM_WORLD_LOCAL_RANK", 0);
    l.local_world = number(env, "OMPI_COMM_WORLD_LOCAL_SIZE", 1);
  } else if (env("PMI_RANK")) {
    l.launcher = "mpi";
    rank_var = "PMI_RANK", world_var = "PMI_SIZE";
    l.local_rank = number(env, "MPI_LOCALRANKID", 0);
    l.local_world = number(env, "MPI_LOCALNRANKS", 1);
  } else if (env("SLURM_PROCID")) {
    l.launcher = "slurm";
    rank_var = "SLURM_PROCID", world_var = "SLURM_NTASKS";
    l.local_rank = number(env, "SLURM_LOCALID", 0);
    const auto per_node = env("SLURM_TASKS_PER_NODE");
    if (!per_node) throw common::UsageError("launch: SLURM_PROCID is set but SLURM_TASKS_PER_NODE is not");
    l.local_world = slurm_tasks_per_node(*per_node);
  } else {
    return l;
  }
  l.rank = number(env, rank_var, 0);
  l.world = number(env, world_var, 1);
  if (l.rank >= l.world) {
    throw common::UsageError("launch: " + rank_var + "=" + std::to_string(l.rank) + " is not below " + world_var +
                             "=" + std::to_string(l.world));
  }
  if (l.local_rank >= l.local_world) {
    throw common::UsageError("launch: local rank " + std::to_string(l.local_rank) + " is not below the " +
                             std::to_string(l.local_world) + " ranks of its node");
  }
  if (l.world % l.local_world != 0) {
    throw common::UsageError("launch: " + std::to_string(l.world) + " ranks do not split into nodes of " +
                             std::to_string(l.local_world) +
                             ": the nodes run different numbers of ranks; launch the same number on every node");
  }
  return l;
}

}  // namespace simumax::measure
