// Test helper: files in the test temp folder, removed when the test program ends (a forked child leaves with
// _exit and removes nothing).
#pragma once

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace simumax::platform::testing {

// `text` in a file of the test temp folder; the name carries the process id, as ctest runs tests side by side.
inline std::string write_file(const std::string& name, const std::string& text) {
  struct Written {
    std::vector<std::string> paths;
    ~Written() {
      for (const std::string& p : paths) std::remove(p.c_str());
    }
  };
  static Written written;
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "." + name;
  std::ofstream(path) << text;
  if (std::find(written.paths.begin(), written.paths.end(), path) == written.paths.end()) written.paths.push_back(path);
  return path;
}

}  // namespace simumax::platform::testing
