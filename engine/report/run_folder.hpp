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

}  // namespace simumax::report
