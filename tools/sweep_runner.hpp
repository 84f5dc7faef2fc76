// The work of `simumax-sim sweep` (docs/sweep.md): one case in this process, many cases each in its own process,
// their rows, the shard files of a Slurm array task, and the sweep.csv / sweep.json every way of running writes.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "engine/config/sweep_file.hpp"

namespace simumax::tools {

// Runs case `index` of `s` here (the child side of run_cases: one simulation per process) and writes
// `dir`/summary.json, and `dir`/platform.xml when the case's platform is generated. Throws ConfigError for a
// case whose values do not suit the base (the parent records it as invalid).
void run_case_here(const config::Sweep& s, size_t index, const std::string& dir);

// Cases [first, first + count) here, one after another, each in <cases_dir>/<name>: summary.json, or outcome.txt
// ("invalid" or "failed", then the error on one line) when the case cannot run. For the sim executor, count is 1.
void run_cases_here(const config::Sweep& s, size_t first, size_t count, const std::string& cases_dir);

struct CaseRunner {
  std::string self;     // this binary
  std::string out_dir;  // cases run in <out_dir>/cases/<name>
  int jobs = 1;         // processes at once
  double case_timeout_s = 0;
  size_t max_cases = 0;  // passed on to the children (they reload the sweep file)
};

// The rows (record lines, see report::record_line) of cases [first, first + count), in case order. Cases run in
// child processes (`sweep FILE --case I --case-count N --cases-dir DIR`), `r.jobs` at a time: a sim case alone,
// fast cases in batches of up to 32; `progress(done, count)` after each batch.
std::vector<std::string> run_cases(const config::Sweep& s, const CaseRunner& r, size_t first, size_t count,
                                   const std::function<void(size_t, size_t)>& progress);

// <dir>/sweep.csv and <dir>/sweep.json from every case's row line (in case order), written to temporary names and
// renamed. A function of the sweep and the lines only: a local run and a merge of shards write the same bytes.
// Returns a one-line summary ("24 cases: 22 ok, 2 invalid, 0 failed").
std::string write_sweep_outputs(const config::Sweep& s, const std::string& dir, const std::vector<std::string>& lines);

// The cases of shard `shard` of `shards`: contiguous, sizes differing by at most one.
std::pair<size_t, size_t> shard_range(size_t cases, size_t shard, size_t shards);
std::string shard_path(const std::string& out_dir, size_t shard);
// A shard's file: a header naming the sweep, its fingerprint and the range, the rows, then a trailer with the row
// count; written to a temporary name and renamed (a reader sees all of it or nothing).
void write_shard(const config::Sweep& s, const std::string& out_dir, size_t shard, size_t shards,
                 const std::vector<std::string>& lines);
// The rows of every shard, in case order. Throws common::UsageError naming each shard that is missing, incomplete
// or from another version of the sweep file (up to 10), with the Slurm log of its task.
std::vector<std::string> read_shards(const config::Sweep& s, const std::string& out_dir, size_t shards);

}  // namespace simumax::tools
