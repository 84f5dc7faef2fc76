#include "engine/common/interrupt.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cstring>
#include <utility>

namespace simumax::common {

namespace {

std::array<std::atomic<const char*>, 64> temporaries{};
std::atomic<const char*> temporary_dir{nullptr};

// The files of the flat folder `path`, then the folder, with system calls only (getdents64, unlinkat, rmdir):
// opendir and readdir may allocate, which a signal handler must not.
void remove_flat_dir(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  alignas(8) char buf[4096];
  for (ssize_t n; (n = ::getdents64(fd, buf, sizeof buf)) > 0;) {
    for (ssize_t at = 0; at < n;) {
      const auto* d = reinterpret_cast<const struct dirent64*>(buf + at);
      if (std::strcmp(d->d_name, ".") != 0 && std::strcmp(d->d_name, "..") != 0) ::unlinkat(fd, d->d_name, 0);
      at += d->d_reclen;
    }
  }
  ::close(fd);
  ::rmdir(path);
}

// The handlers in force before ours: another copy of this file's, in the process that dlopened the module this
// copy is in (the SimGrid executor), which removes that copy's temporaries and ends the process.
struct sigaction previous_int {}, previous_term {};

extern "C" void on_interrupt(int sig) {
  // Only async-signal-safe calls here: unlink, the calls of remove_flat_dir, write and _exit.
  for (auto& t : temporaries) {
    if (const char* p = t.load()) ::unlink(p);
  }
  if (const char* d = temporary_dir.load()) remove_flat_dir(d);
  const struct sigaction& previous = sig == SIGINT ? previous_int : previous_term;
  if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN) {
    previous.sa_handler(sig);
  }
  static const char kMessage[] = "\ninterrupted\n";
  [[maybe_unused]] const ssize_t n = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
  ::_exit(128 + sig);
}

}  // namespace

void install_interrupt_handler() {
  struct sigaction sa {};
  sa.sa_handler = on_interrupt;
  sigemptyset(&sa.sa_mask);
  for (auto [sig, previous] : {std::pair{SIGINT, &previous_int}, std::pair{SIGTERM, &previous_term}}) {
    struct sigaction old {};
    sigaction(sig, &sa, &old);
    if (old.sa_handler != on_interrupt) *previous = old;  // installed again: the first one's previous stays
  }
}

void register_temporary(const char* path) {
  for (auto& t : temporaries) {
    const char* empty = nullptr;
    if (t.compare_exchange_strong(empty, path)) return;
  }
}

void unregister_temporary(const char* path) {
  for (auto& t : temporaries) {
    const char* expected = path;
    if (t.compare_exchange_strong(expected, nullptr)) return;
  }
}

void register_temporary_dir(const char* path) { temporary_dir.store(path); }

void unregister_temporary_dir(const char* path) {
  const char* expected = path;
  temporary_dir.compare_exchange_strong(expected, nullptr);
}

ScratchFile::ScratchFile(std::string path) : path_(std::move(path)) { register_temporary(path_.c_str()); }

ScratchFile::~ScratchFile() {
  ::unlink(path_.c_str());
  unregister_temporary(path_.c_str());
}

}  // namespace simumax::common
