// Child processes of the CLI (a search re-check, a sweep case, sbatch) and the progress bar of long commands.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace simumax::tools {

struct ChildResult {
  int exit_code = -1;      // the child's exit status; 128 + signal when a signal ended it; -1: it did not start
  bool timed_out = false;  // ran longer than the timeout (killed, or ended after it between two checks)
};

// Runs `program args...` (a path, or a name looked up in PATH) with stdout to `out_path` and stderr to `err_path`
// (both "/dev/null" when empty) and waits for it, at most `timeout_s` seconds when > 0 (then SIGTERM, and
// SIGKILL 2 s later). The child gets SIGTERM if this process dies first, so an interrupted command leaves no work
// running. Thread-safe: each call waits only for its own child.
ChildResult run_child(const std::string& program, const std::vector<std::string>& args, const std::string& out_path,
                      const std::string& err_path, double timeout_s = 0);

// `name` as PATH finds it (a name holding '/' is checked as a path); nullopt when it is not an executable file.
std::optional<std::string> find_program(const std::string& name);

// The first line of a file ("" when it cannot be read), and the whole of it (at most `max_bytes`).
std::string first_line(const std::string& path);
std::string read_text_file(const std::string& path, size_t max_bytes = 1 << 20);

// A progress bar with rate and ETA, redrawn in place on stderr; nullptr when stderr is not a terminal.
// `tail_seconds_per_item`: work after the last item, per item (a search's files), counted in the ETA.
std::function<void(size_t done, size_t total)> progress_bar(double tail_seconds_per_item = 0);

}  // namespace simumax::tools
