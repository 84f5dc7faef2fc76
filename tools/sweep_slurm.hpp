// `simumax-sim sweep --slurm`: a sweep as a Slurm job array (one shard of cases per array task, results in the
// output folder, which the cluster's nodes share), and the plan file that the tasks and `sweep --merge` read.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/config/sweep_file.hpp"

namespace simumax::tools {

struct SlurmArgs {
  size_t shards = 0;                     // array tasks; 0: min(cases, 100)
  std::string sbatch = "sbatch";         // the program, found in PATH
  std::vector<std::string> sbatch_args;  // passed to sbatch before the script (--partition=..., --time=...)
  double sbatch_timeout_s = 60;
  // Filled by the command: this binary, and the options the tasks run with.
  std::string self;
  size_t max_cases = 0;
  double case_timeout_s = 0;
};

void add_slurm_options(CLI::App& sub, SlurmArgs& a);

// <out>/slurm/plan.json: what --slurm submitted.
struct SlurmPlan {
  std::string sweep;  // the sweep file, absolute
  std::string fingerprint;
  size_t cases = 0;
  size_t shards = 0;
  size_t max_cases = 0;
  double case_timeout_s = 0;
};

// Throws common::UsageError when `out_dir` has no plan (not a --slurm sweep's folder) or it cannot be read.
SlurmPlan read_plan(const std::string& out_dir);
// Throws common::UsageError when the sweep file is no longer the one submitted.
void check_plan(const SlurmPlan& plan, const config::Sweep& s);

// Writes <out>/slurm/plan.json and <out>/slurm/job.sh, submits the script with sbatch --array (every call bounded
// by a.sbatch_timeout_s), records the job id in <out>/slurm/job_id and returns what to print. Throws
// common::UsageError when sbatch is missing, does not answer, or rejects the job (with what it said).
std::string submit_sweep(const config::Sweep& s, const std::string& out_dir, const SlurmArgs& a);

}  // namespace simumax::tools
