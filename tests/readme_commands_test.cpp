// Every simumax-sim command of README.md, run exactly as written (issue #14): the ```sh blocks are read from the
// README itself, each command (continuation lines joined, the trailing "# comment" dropped) runs through /bin/sh
// in order, from a fresh copy of the checkout's data folders with shared/ beside it and SIMUMAX_SHARED_DIR unset,
// as a new user's clone would; each must exit 0. `make` lines build and test the project itself: not run here.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = SIMUMAX_SOURCE_DIR;

// The simumax-sim commands of the README's ```sh blocks, in order.
std::vector<std::string> readme_commands() {
  std::istringstream in(read_file((kRoot / "README.md").string()));
  std::vector<std::string> out;
  std::string line, cmd;
  bool in_sh = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) {
      in_sh = !in_sh && line == "```sh";
      continue;
    }
    if (!in_sh) continue;
    const size_t hash = line.find(" #");
    std::string code = hash == std::string::npos ? line : line.substr(0, hash);
    while (!code.empty() && code.back() == ' ') code.pop_back();
    const bool more = !code.empty() && code.back() == '\\';
    if (more) code.pop_back();
    cmd += code;
    if (more) continue;
    if (cmd.rfind("build/tools/simumax-sim ", 0) == 0) out.push_back(cmd);
    cmd.clear();
  }
  return out;
}

TEST(Readme, HasTheCommandsThisTestRuns) {
  const auto cmds = readme_commands();
  EXPECT_GE(cmds.size(), 15u);
  for (const auto& c : cmds) {
    EXPECT_EQ(c.find("..."), std::string::npos) << "a README command must run as written: " << c;
    EXPECT_EQ(c.find('<'), std::string::npos) << "a README command must run as written: " << c;
  }
}

TEST(Readme, EveryCommandRunsAsWrittenFromAFreshCopy) {
  const fs::path base = fs::temp_directory_path() / ("simumax-readme-" + std::to_string(getpid()));
  const fs::path repo = base / "simumax-sim";
  fs::remove_all(base);
  fs::create_directories(repo / "build/tools");
  fs::create_directories(repo / "tests");
  for (const char* dir : {"models", "platforms", "scenarios", "data"}) {
    fs::copy(kRoot / dir, repo / dir, fs::copy_options::recursive);
  }
  fs::copy(kRoot / "tests/data", repo / "tests/data", fs::copy_options::recursive);
  fs::copy(kRoot / "README.md", repo / "README.md");
  fs::create_symlink(SIMUMAX_CLI, repo / "build/tools/simumax-sim");
  fs::create_directory_symlink(fs::absolute(SIMUMAX_SHARED_DIR), base / "shared");
  int n = 0;
  for (const std::string& cmd : readme_commands()) {
    const fs::path log = base / ("cmd" + std::to_string(n++) + ".log");
    const std::string shell = "cd '" + repo.string() + "' && env -u SIMUMAX_SHARED_DIR sh -c '" + cmd + "' > '" +
                              log.string() + "' 2>&1";
    const int status = std::system(shell.c_str());
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    EXPECT_EQ(rc, 0) << cmd << "\n" << read_file(log.string()).substr(0, 4000);
  }
  fs::remove_all(base);
}

}  // namespace
}  // namespace simumax::tests
