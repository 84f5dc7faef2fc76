#include "engine/common/interrupt.hpp"

#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <utility>

namespace simumax::common {

namespace {

std::array<std::atomic<const char*>, 64> temporaries{};

extern "C" void on_interrupt(int sig) {
  // Only async-signal-safe calls here: unlink, write and _exit.
  for (auto& t : temporaries) {
    if (const char* p = t.load()) ::unlink(p);
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
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
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

ScratchFile::ScratchFile(std::string path) : path_(std::move(path)) { register_temporary(path_.c_str()); }

ScratchFile::~ScratchFile() {
  ::unlink(path_.c_str());
  unregister_temporary(path_.c_str());
}

}  // namespace simumax::common
