// fuzz_replay TARGET PATH...: feeds every file (of the folders, recursively) to the target, as the fuzzer did.
// fuzz_replay --all CORPUS: every target, each from CORPUS/<target>/ (a target without inputs is an error).
// Exit 0 when every input is accepted or refused as the user's fault; 1 naming the first input that escaped.
#include <algorithm>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "fuzz/fuzz_targets.hpp"

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> inputs_of(const std::vector<std::string>& args) {
  std::vector<fs::path> files;
  for (const auto& arg : args) {
    if (fs::is_directory(arg)) {
      for (const auto& entry : fs::recursive_directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.emplace_back(arg);
    }
  }
  std::sort(files.begin(), files.end());  // a stable order, so a failure names the same input every time
  return files;
}

int replay(const std::string& target, const std::vector<std::string>& paths) {
  const auto files = inputs_of(paths);
  if (files.empty()) {
    std::cerr << "error: no input to replay for " << target << "\n";
    return 2;
  }
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << "error: " << file.string() << ": cannot read\n";
      return 2;
    }
    const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      simumax::fuzz::fuzz_one(target, data);
    } catch (const simumax::common::UsageError& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 2;
    } catch (const std::exception& e) {
      std::cerr << file.string() << ": " << target << ": escaped the reader: " << e.what() << "\n";
      return 1;
    }
  }
  std::cout << "replayed " << files.size() << " inputs of " << target << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: fuzz_replay TARGET FILE_OR_FOLDER... | fuzz_replay --all CORPUS\n";
    return 2;
  }
  simumax::common::set_log_level("off");
  if (std::string(argv[1]) != "--all") return replay(argv[1], std::vector<std::string>(argv + 2, argv + argc));
  for (const auto& target : simumax::fuzz::target_names()) {
    const fs::path folder = fs::path(argv[2]) / target;
    if (!fs::is_directory(folder)) {
      std::cerr << "error: " << folder.string() << ": missing (every target keeps a corpus)\n";
      return 2;
    }
    if (const int rc = replay(target, {folder.string()}); rc != 0) return rc;
  }
  return 0;
}
