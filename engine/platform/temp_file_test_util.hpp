// Test helper: files in the test temp folder, removed when the test program ends.
#pragma once

#include <unistd.h>

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "tests/scratch_dir.hpp"

namespace simumax::platform::testing {

// `text` in a file of the test temp folder; the name carries the process id, as ctest runs tests side by side.
inline std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + std::to_string(getpid()) + "." + name;
  std::ofstream(path) << text;
  tests::remove_at_exit(path);
  return path;
}

}  // namespace simumax::platform::testing
