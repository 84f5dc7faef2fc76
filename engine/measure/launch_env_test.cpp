#include "engine/measure/launch_env.hpp"

#include <gtest/gtest.h>

#include <map>

#include "engine/common/error.hpp"

namespace simumax::measure {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    return it == vars.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

TEST(LaunchEnv, NoLauncherIsOneProcess) {
  const Launch l = launch_from_env(env_of({}));
  EXPECT_EQ(l.launcher, "single");
  EXPECT_EQ(l.world, 1);
}

TEST(LaunchEnv, OpenMpiAndSlurmAreRead) {
  const Launch mpi = launch_from_env(env_of({{"OMPI_COMM_WORLD_RANK", "9"}, {"OMPI_COMM_WORLD_SIZE", "16"},
                                             {"OMPI_COMM_WORLD_LOCAL_RANK", "1"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}));
  EXPECT_EQ(mpi.launcher, "mpi");
  EXPECT_EQ(mpi.rank, 9);
  EXPECT_EQ(mpi.nodes(), 2);
  const Launch slurm = launch_from_env(env_of({{"SLURM_PROCID", "3"}, {"SLURM_NTASKS", "16"},
                                               {"SLURM_LOCALID", "3"}, {"SLURM_TASKS_PER_NODE", "8(x2)"}}));
  EXPECT_EQ(slurm.launcher, "slurm");
  EXPECT_EQ(slurm.local_world, 8);
}

TEST(LaunchEnv, MismatchedRanksAreOneLineErrors) {
  auto message = [](std::map<std::string, std::string> vars) {
    try {
      launch_from_env(env_of(std::move(vars)));
    } catch (const common::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "12"}, {"SLURM_LOCALID", "0"},
                     {"SLURM_TASKS_PER_NODE", "8,4"}}),
            "launch: SLURM_TASKS_PER_NODE='8,4': the nodes run different numbers of ranks; launch the same number "
            "on every node (srun --ntasks-per-node)");
  EXPECT_EQ(message({{"OMPI_COMM_WORLD_RANK", "0"}, {"OMPI_COMM_WORLD_SIZE", "12"},
                     {"OMPI_COMM_WORLD_LOCAL_RANK", "0"}, {"OMPI_COMM_WORLD_LOCAL_SIZE", "8"}}),
            "launch: 12 ranks do not split into nodes of 8: the nodes run different numbers of ranks; launch the "
            "same number on every node");
  EXPECT_EQ(message({{"PMI_RANK", "4"}, {"PMI_SIZE", "4"}, {"MPI_LOCALRANKID", "0"}, {"MPI_LOCALNRANKS", "4"}}), "launch: PMI_RANK=4 is not below PMI_SIZE=4");
  EXPECT_EQ(message({{"OMPI_COMM_WORLD_RANK", "x"}}),
            "launch: OMPI_COMM_WORLD_LOCAL_RANK=(unset): expected an integer >= 0");
}

}  // namespace
}  // namespace simumax::measure
