// jemalloc's control interface, reached through a weak symbol so that a build without jemalloc links and runs.
#include "tools/allocator.hpp"

#include <sys/types.h>

#include <cstddef>
#include <string>

extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen) __attribute__((weak));

namespace simumax::tools {

void return_freed_pages_at_once() {
  if (mallctl == nullptr) return;
  ssize_t zero_ms = 0;
  // Defaults for the arenas the request threads are given as they first allocate...
  mallctl("arenas.dirty_decay_ms", nullptr, nullptr, &zero_ms, sizeof zero_ms);
  mallctl("arenas.muzzy_decay_ms", nullptr, nullptr, &zero_ms, sizeof zero_ms);
  // ...and the arena the calling thread already uses.
  unsigned arena = 0;
  size_t arena_len = sizeof arena;
  if (mallctl("thread.arena", &arena, &arena_len, nullptr, 0) != 0) return;
  const std::string prefix = "arena." + std::to_string(arena);
  mallctl((prefix + ".dirty_decay_ms").c_str(), nullptr, nullptr, &zero_ms, sizeof zero_ms);
  mallctl((prefix + ".muzzy_decay_ms").c_str(), nullptr, nullptr, &zero_ms, sizeof zero_ms);
}

}  // namespace simumax::tools
