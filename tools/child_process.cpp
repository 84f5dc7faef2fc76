#include "tools/child_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <memory>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace simumax::tools {

namespace fs = std::filesystem;

std::optional<std::string> find_program(const std::string& name) {
  auto runnable = [](const fs::path& p) {
    std::error_code ec;
    return fs::is_regular_file(p, ec) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    return runnable(name) ? std::optional<std::string>(name) : std::nullopt;
  }
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
    if (runnable(candidate)) return candidate.string();
  }
  return std::nullopt;
}

namespace {

// Waits for `pid`, killing it once `timeout_s` (> 0) has passed; `timed_out` when it ran longer than that.
int wait_with_timeout(pid_t pid, double timeout_s, bool& timed_out) {
  int status = 0;
  if (timeout_s <= 0) {
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  } else {
    const auto start = std::chrono::steady_clock::now();
    bool term_sent = false;
    while (true) {
      const pid_t done = ::waitpid(pid, &status, WNOHANG);
      const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (done == pid || (done < 0 && errno != EINTR)) {
        // Over the limit even if it ended between two polls (a loaded machine may not wake this loop in time):
        // whether a case timed out depends on its run time, not on when it was noticed.
        timed_out = timed_out || s > timeout_s;
        break;
      }
      if (!term_sent && s > timeout_s) {
        ::kill(pid, SIGTERM);
        term_sent = timed_out = true;
      } else if (term_sent && s > timeout_s + 2) {
        ::kill(pid, SIGKILL);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : -1;
}

}  // namespace

ChildResult run_child(const std::string& program, const std::vector<std::string>& args, const std::string& out_path,
                      const std::string& err_path, double timeout_s) {
  ChildResult r;
  const std::optional<std::string> exe = find_program(program);
  if (!exe) return r;
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argv_text = {program};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_text) argv.push_back(s.data());
  argv.push_back(nullptr);
  const std::string out = out_path.empty() ? "/dev/null" : out_path;
  const std::string err = err_path.empty() ? "/dev/null" : err_path;
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return r;
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(127);
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, STDOUT_FILENO) < 0 || ::dup2(e, STDERR_FILENO) < 0) ::_exit(127);
    ::execve(exe->c_str(), argv.data(), environ);
    ::_exit(127);
  }
  r.exit_code = wait_with_timeout(pid, timeout_s, r.timed_out);
  return r;
}

std::string first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string read_text_file(const std::string& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  std::string text(max_bytes, '\0');
  in.read(text.data(), static_cast<std::streamsize>(max_bytes));
  text.resize(static_cast<size_t>(in.gcount()));
  return text;
}

std::function<void(size_t, size_t)> progress_bar(double tail_seconds_per_item) {
  if (!isatty(STDERR_FILENO)) return nullptr;
  const auto t0 = std::chrono::steady_clock::now();
  // The rate over the last few seconds, not since the start: a search's space is cheap where its candidates are
  // illegal and slow where pipelines are deep, and the average since the start kept saying "0:02" for 6 s.
  auto recent = std::make_shared<std::deque<std::pair<double, size_t>>>();
  return [t0, tail_seconds_per_item, recent](size_t done, size_t total) {
    constexpr double kWindowS = 1.5;
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    recent->emplace_back(s, done);
    while (recent->size() > 2 && recent->front().first < s - kWindowS) recent->pop_front();
    const auto [s0, done0] = recent->size() > 1 && s - recent->front().first > 0.5 ? recent->front()
                                                                                   : std::pair<double, size_t>{0, 0};
    const double rate = s > s0 ? static_cast<double>(done - done0) / (s - s0) : 0;
    const double eta = (rate > 0 ? static_cast<double>(total - done) / rate : 0) +
                       static_cast<double>(total) * tail_seconds_per_item;
    const int width = 30, filled = total ? static_cast<int>(width * done / total) : width;
    const long eta_s = std::lround(eta);
    std::fprintf(stderr, "\r[%s%s] %zu/%zu %5.1f%% %9.0f/s ETA %ld:%02ld ", std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total, total ? 100.0 * done / total : 100.0, rate,
                 eta_s / 60, eta_s % 60);
    if (done == total) std::fprintf(stderr, "\n");
    std::fflush(stderr);
  };
}

}  // namespace simumax::tools
