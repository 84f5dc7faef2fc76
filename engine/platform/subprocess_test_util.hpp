// Test helper: run a function in a forked child process. SimGrid allows one engine per process, so every
// test that loads a platform or runs a simulation does it in a child; the test binary can then also be run
// directly (all tests in one process), not only through ctest.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <exception>
#include <functional>
#include <string>

namespace simumax::platform::testing {

struct ChildResult {
  bool ok = false;    // fn returned normally
  std::string value;  // what fn returned, or "exception: ...", "killed by signal N", "exit code N"
};

inline ChildResult in_child_process(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) return {false, "pipe failed"};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return {false, "fork failed"};
  if (pid == 0) {
    close(fds[0]);
    std::string out(1, '+');  // (not "+" + fn(): GCC 12 warns falsely with -Werror=restrict)
    try {
      out += fn();
    } catch (const std::exception& e) {
      out = std::string("-exception: ") + e.what();
    }
    for (size_t done = 0; done < out.size();) {
      const ssize_t n = write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    close(fds[1]);
    std::fflush(stdout);
    _exit(0);  // skip SimGrid's teardown and the parent's atexit handlers
  }
  close(fds[1]);
  std::string out;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status)) return {false, "killed by signal " + std::to_string(WTERMSIG(status))};
  if (out.empty()) return {false, "exit code " + std::to_string(WEXITSTATUS(status))};
  return {out[0] == '+', out.substr(1)};
}

}  // namespace simumax::platform::testing
