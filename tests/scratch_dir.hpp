// A folder of its own for each test that writes files: ctest runs tests, and CI runs whole suites, side by side.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <string>

namespace simumax::tests {

// `<system temp>/simumax-<what>-<name>-<pid>`, emptied; created unless `create` is false (for a command that
// must make its output folder itself).
inline std::filesystem::path scratch_dir(const std::string& what, const std::string& name, bool create = true) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("simumax-" + what + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  if (create) std::filesystem::create_directories(p);
  return p;
}

}  // namespace simumax::tests
