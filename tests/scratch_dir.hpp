// A folder of its own for each test that writes files: ctest runs tests, and CI runs whole suites, side by side.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace simumax::tests {

// Removes `path` (a file or a folder) when the test program ends; a forked child leaves with _exit and removes
// nothing.
inline void remove_at_exit(const std::filesystem::path& path) {
  struct Made {
    std::vector<std::filesystem::path> paths;
    ~Made() {
      std::error_code ignored;
      for (const auto& p : paths) std::filesystem::remove_all(p, ignored);
    }
  };
  static Made made;
  if (std::find(made.paths.begin(), made.paths.end(), path) == made.paths.end()) made.paths.push_back(path);
}

// `<system temp>/simumax-<what>-<name>-<pid>`, emptied; created unless `create` is false (for a command that
// must make its output folder itself). Removed when the test program ends.
inline std::filesystem::path scratch_dir(const std::string& what, const std::string& name, bool create = true) {
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("simumax-" + what + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  remove_at_exit(p);
  if (create) std::filesystem::create_directories(p);
  return p;
}

}  // namespace simumax::tests
