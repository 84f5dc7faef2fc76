// A run's output folder (issue #12): one run at a time writes it, and a new run's files never sit beside an
// earlier run's. Nothing in the folder that a run does not write is touched.
#pragma once

#include <optional>
#include <string>

namespace simumax::report {

// Takes the folder `dir` (which exists) for this process: an advisory lock on `dir`/.simumax-sim.lock, held until
// the process ends (the kernel releases it even on a crash). Throws common::UsageError naming the process that
// holds it (two runs writing one folder mixed their files), or naming `dir` when the lock file cannot be opened.
void lock_run_folder(const std::string& dir);

// Removes the files an earlier run wrote into `dir` (summary.json, platform.xml, links.json, ranks.json, the
// trace, memory and SimuMax files, report.html, compare.json), except `keep` (a file this run reads, such as the
// user's platform XML under the name a run writes). Throws common::UsageError naming a file that cannot be removed.
void remove_earlier_run(const std::string& dir, const std::optional<std::string>& keep);

// The new files of a run, written into a staging folder inside the locked run folder (`dir`/.simumax-staging) and
// moved in once every one is written: a run that fails late (an option checked against the result, a full disk,
// Ctrl-C) leaves the earlier run's files as they were and none of its own (issue 32: `--trace-ranks 5-1` had
// replaced summary.json and deleted trace.json before it was refused).
class RunStaging {
 public:
  // Removes a staging folder a killed run left, then makes a fresh one. REQUIRES: lock_run_folder(dir) held.
  explicit RunStaging(const std::string& dir);
  ~RunStaging();  // removes the staging folder and its files unless committed (also when interrupted)
  RunStaging(const RunStaging&) = delete;
  RunStaging& operator=(const RunStaging&) = delete;
  const std::string& path() const { return path_; }
  // remove_earlier_run(dir, keep), then every staged file moved into `dir` under its name. Throws
  // common::UsageError naming a file that cannot be moved.
  void commit(const std::optional<std::string>& keep);
  // `text` with the staging folder's path replaced by the run folder's (the paths a writer returned).
  std::string final_paths(std::string text) const;

 private:
  std::string dir_, path_;
  bool committed_ = false;
};

}  // namespace simumax::report
