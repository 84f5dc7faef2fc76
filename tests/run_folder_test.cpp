// A run owns its output folder (issue #12): every file is written whole or not at all, files of an earlier run
// never sit beside a new run's, and nothing that is not ours is touched.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) { return scratch_dir("run-folder", name); }

TEST(RunFolder, ALaterRunRemovesTheFilesOfAnEarlierOneAndNothingElse) {
  const fs::path dir = scratch("stale");
  std::ofstream(dir / "notes.txt") << "mine";
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "--memory", "-q", "-o", dir.string()}).exit_code, 0);
  ASSERT_TRUE(fs::exists(dir / "trace.json"));
  ASSERT_TRUE(fs::exists(dir / "memory_snapshot.pickle"));
  const auto r = run_cli({"run", "scenarios/default.json", "--fidelity", "simumax", "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::exists(dir / "summary.json"));
  for (const char* stale : {"trace.json", "memory_timeline.json", "memory_snapshot.json", "memory_snapshot.pickle"}) {
    EXPECT_FALSE(fs::exists(dir / stale)) << stale;
  }
  EXPECT_EQ(read_file((dir / "notes.txt").string()), "mine");
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
}

TEST(RunFolder, AFailedRunLeavesTheEarlierRunWhole) {
  const fs::path dir = scratch("failed");
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "-q", "-o", dir.string()}).exit_code, 0);
  const std::string before = read_file((dir / "summary.json").string());
  // A bad input fails before anything is simulated: the earlier run's files stay, together.
  const auto r = run_cli({"run", "tests/data/cli/mbc0.json", "-q", "-o", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(read_file((dir / "summary.json").string()), before);
  EXPECT_TRUE(fs::exists(dir / "trace.json"));
}

// Issue 32: an option refused once the run is done (the ranks of --trace-ranks are checked against the run)
// had already replaced summary.json and removed trace.json; now every file waits in the staging folder.
TEST(RunFolder, AnOptionRefusedAfterTheRunLeavesTheEarlierRunWhole) {
  const fs::path dir = scratch("late-refusal");
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "--trace", "-q", "-o", dir.string()}).exit_code, 0);
  const std::string summary = read_file((dir / "summary.json").string());
  const std::string trace = read_file((dir / "trace.json").string());
  const auto r = run_cli({"run", "scenarios/default.json", "--fidelity", "simumax", "--trace", "--trace-ranks", "5-1",
                          "-q", "-o", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: --trace-ranks: '5-1' is an empty range; write it low-high\n");
  EXPECT_EQ(read_file((dir / "summary.json").string()), summary);
  EXPECT_EQ(read_file((dir / "trace.json").string()), trace);
  EXPECT_FALSE(fs::exists(dir / ".simumax-staging"));
}

// A write that fails part-way (a full disk; here a file-size limit of 64 KiB, which trace.json passes) leaves the
// earlier run's files as they were, and none of the new run's.
TEST(RunFolder, AWriteFailingPartWayLeavesTheEarlierRunWhole) {
  const fs::path dir = scratch("full-disk");
  ASSERT_EQ(run_cli({"run", "scenarios/default.json", "-q", "-o", dir.string()}).exit_code, 0);
  const std::string summary = read_file((dir / "summary.json").string());
  const std::string cmd = "trap '' XFSZ; ulimit -f 64; exec " + std::string(SIMUMAX_CLI) +
                          " run scenarios/default.json --fidelity simumax --trace -q -o " + dir.string() +
                          " 2> " + (dir / "err.txt").string();
  const int status = std::system(("sh -c \"" + cmd + "\"").c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << status << " " << read_file((dir / "err.txt").string());
  EXPECT_NE(read_file((dir / "err.txt").string()).find("trace.json"), std::string::npos)
      << read_file((dir / "err.txt").string());
  EXPECT_EQ(read_file((dir / "summary.json").string()), summary);
  EXPECT_FALSE(fs::exists(dir / "trace.json"));
  EXPECT_FALSE(fs::exists(dir / ".simumax-staging"));
}

TEST(RunFolder, AFileThatCannotBeWrittenIsAnErrorNamingIt) {
  const fs::path dir = scratch("unwritable");
  fs::create_directories(dir / "summary.json");  // a folder where the file goes
  const auto r = run_cli({"run", "scenarios/default.json", "-q", "-o", dir.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: cannot write " + (dir / "summary.json").string() + ": it is a folder\n");
  EXPECT_EQ(r.out, "");  // no "wrote"
}

TEST(RunFolder, TheUsersPlatformInTheFolderIsKept) {
  const fs::path dir = scratch("platform");
  fs::copy_file("tests/data/cli/b200_1node.xml", dir / "platform.xml");
  const std::string xml = read_file((dir / "platform.xml").string());
  const auto r = run_cli({"run", "scenarios/default.json", "--executor", "sim", "--platform",
                          (dir / "platform.xml").string(), "-q", "-o", dir.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file((dir / "platform.xml").string()), xml);
}

// Starts the CLI in the background (stderr to `err`) on the 4,096-GPU SimGrid benchmark, writing into `out`, and
// returns once its simulation is under way (the generated platform is written, into the run's staging folder, just
// before it starts).
pid_t start_long_run(const fs::path& out, const std::string& err) {
  const pid_t pid = spawn_cli({"run", "scenarios/bench/llama3_70b_4096gpu_tp8_pp8_dp64.json", "--executor", "sim",
                               "--ranks", "all", "-q", "-o", out.string()},
                              err);
  EXPECT_GT(pid, 0);
  for (int i = 0; i < 300 && !fs::exists(out / ".simumax-staging" / "platform.xml"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  return pid;
}

// Ctrl-C in the middle of a SimGrid run (SimGrid's own handler printed a status and exited 1): exit 130 with one
// line, and no temporary file left behind.
TEST(RunFolder, CtrlCEndsARunWith130AndLeavesNoTemporaryFile) {
  const fs::path dir = scratch("interrupt");
  const std::string err = (dir / "stderr.txt").string();
  const pid_t pid = start_long_run(dir / "out", err);
  kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
  EXPECT_EQ(read_file(err), "\ninterrupted\n");
  for (const auto& e : fs::directory_iterator(dir / "out")) EXPECT_NE(e.path().extension(), ".tmp") << e.path();
  EXPECT_FALSE(fs::exists(dir / "out" / ".simumax-staging"));  // with the platform it held
  // Nor the generated platform SimGrid was loading (it was left in the temp folder before).
  EXPECT_FALSE(fs::exists(fs::temp_directory_path() / ("simumax-platform-" + std::to_string(pid) + ".xml")));
}

// Two runs into one folder mixed their files: the second is refused while the first holds the folder.
TEST(RunFolder, ASecondRunIntoABusyFolderIsRefused) {
  const fs::path dir = scratch("busy");
  const pid_t pid = start_long_run(dir / "out", (dir / "stderr.txt").string());
  const auto r = run_cli({"run", "scenarios/default.json", "-q", "-o", (dir / "out").string()});
  kill(pid, SIGINT);
  int status = 0;
  waitpid(pid, &status, 0);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err, "error: " + (dir / "out").string() + " is in use by pid " + std::to_string(pid) +
                       " (another simumax-sim run writes there); wait for it, or give another -o\n");
  EXPECT_FALSE(fs::exists(dir / "out" / "summary.json"));
}

}  // namespace
}  // namespace simumax::tests
