// Where this process sits in a multi-process launch (mpirun or srun), from the launcher's environment, checked
// before any GPU or NCCL call so a bad launch is a one-line error.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace simumax::measure {

struct Launch {
  std::string launcher = "single";  // single, mpi (Open MPI / MPICH / PMI), slurm
  int64_t rank = 0, world = 1;              // global
  int64_t local_rank = 0, local_world = 1;  // on this node
  int64_t nodes() const { return world / local_world; }
};

using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;

// The launch from Open MPI (OMPI_COMM_WORLD_*), MPICH/PMI (PMI_RANK, PMI_SIZE, MPI_LOCALRANKID, MPI_LOCALNRANKS)
// or Slurm (SLURM_PROCID, SLURM_NTASKS, SLURM_LOCALID, SLURM_TASKS_PER_NODE), in that order; "single" when none
// is set. Throws common::UsageError naming the variable when a value is not a number, a rank is outside its
// world, or the nodes run different numbers of ranks (SLURM_TASKS_PER_NODE "8,4", or a world that the ranks
// per node do not divide): the per-tier fits assume the same ranks on every node.
Launch launch_from_env(const EnvLookup& env);

// The process environment (std::getenv).
EnvLookup process_env();

}  // namespace simumax::measure
