#include "engine/report/run_folder.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"

namespace simumax::report {

namespace {

// The files a run writes into its folder. A run owns them: once its simulation has succeeded, those an earlier
// run left are removed before the new ones are written, so a folder never mixes two runs.
const char* const kRunFiles[] = {"summary.json",         "platform.xml",           "links.json",
                                 "trace.json",           "tracing_logs.json",      "memory_timeline.json",
                                 "memory_snapshot.json", "memory_snapshot.pickle", "compute_result.json",
                                 "mem_result.json",      "base_info.json",         "net_info.json",
                                 "simu_memory_result.json", "simu_memory_snapshot.json", "report.html",
                                 "ranks.json",
                                 "simu_memory_viz_snapshot.pickle",  // Python's simulate(): SimuMax's name
                                 "compare.json"};  // `compare --json DIR/compare.json` of the earlier run

}  // namespace

void lock_run_folder(const std::string& dir) {
  const std::string path = dir + "/.simumax-sim.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw common::UsageError("-o " + dir + ": cannot lock the folder: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    throw common::UsageError(dir + " is in use by " + (n > 0 ? "pid " + std::string(pid, static_cast<size_t>(n)) : "another run") +
                             " (another simumax-sim run writes there); wait for it, or give another -o");
  }
  // The pid is only for the message a second run prints; the lock holds whether or not it is recorded.
  const std::string me = std::to_string(::getpid());
  [[maybe_unused]] const bool recorded =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) == static_cast<ssize_t>(me.size());
}

void remove_earlier_run(const std::string& dir, const std::optional<std::string>& keep) {
  for (const char* name : kRunFiles) {
    std::error_code ec;
    const auto path = std::filesystem::path(dir) / name;
    if (keep && std::filesystem::equivalent(path, *keep, ec)) continue;
    if (std::filesystem::is_regular_file(path, ec) || std::filesystem::is_symlink(path, ec)) {
      std::filesystem::remove(path, ec);
      if (ec) throw common::UsageError("cannot remove " + path.string() + " of an earlier run: " + ec.message());
    }
  }
}

RunStaging::RunStaging(const std::string& dir) : dir_(dir), path_(dir + "/.simumax-staging") {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
  if (!std::filesystem::create_directory(path_, ec) || ec) {
    throw common::UsageError("cannot create " + path_ + " (the run's files are written there first): " +
                             (ec ? ec.message() : std::string("it exists")));
  }
  common::register_temporary_dir(path_.c_str());
}

RunStaging::~RunStaging() {
  std::error_code ec;
  if (!committed_) std::filesystem::remove_all(path_, ec);
  common::unregister_temporary_dir(path_.c_str());
}

void RunStaging::commit(const std::optional<std::string>& keep) {
  std::error_code ec;
  std::vector<std::filesystem::path> staged;
  for (const auto& e : std::filesystem::directory_iterator(path_, ec)) staged.push_back(e.path());
  if (ec) throw common::UsageError("cannot read " + path_ + ": " + ec.message());
  // A folder where a file goes would stop the move half-way: refused while the earlier run is still whole.
  for (const auto& from : staged) {
    const std::filesystem::path to = std::filesystem::path(dir_) / from.filename();
    if (std::filesystem::is_directory(to, ec)) throw common::UsageError("cannot write " + to.string() + ": it is a folder");
  }
  remove_earlier_run(dir_, keep);
  for (const auto& from : staged) {
    const std::filesystem::path to = std::filesystem::path(dir_) / from.filename();
    std::filesystem::rename(from, to, ec);
    if (ec) throw common::UsageError("cannot move " + from.string() + " to " + to.string() + ": " + ec.message());
  }
  std::filesystem::remove(path_, ec);
  committed_ = true;
}

std::string RunStaging::final_paths(std::string text) const {
  for (size_t at; (at = text.find(path_)) != std::string::npos;) text.replace(at, path_.size(), dir_);
  return text;
}

}  // namespace simumax::report
