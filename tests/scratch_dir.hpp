// A folder of its own for each test that writes files: ctest runs tests, and CI runs whole suites, side by side.
#pragma once

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

namespace simumax::tests {

// `<system temp>/simumax-<what>-<name>-<pid>`, emptied; created unless `create` is false (for a command that
// must make its output folder itself). Removed when the test program ends.
inline std::filesystem::path scratch_dir(const std::string& what, const std::string& name, bool create = true) {
  struct Made {
    std::vector<std::filesystem::path> dirs;
    ~Made() {
      std::error_code ignored;
      for (const auto& d : dirs) std::filesystem::remove_all(d, ignored);
    }
  };
  static Made made;
  const std::filesystem::path p =
      std::filesystem::temp_directory_path() / ("simumax-" + what + "-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(p);
  if (std::find(made.dirs.begin(), made.dirs.end(), p) == made.dirs.end()) made.dirs.push_back(p);
  if (create) std::filesystem::create_directories(p);
  return p;
}

}  // namespace simumax::tests
