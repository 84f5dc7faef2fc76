// The writers of a run folder's files, as the CLI, serve and the Python module call them: links.json's text, the
// files written under their names, and the folder's lock and clean-up (the end-to-end checks are
// tests/run_folder_test.cpp and tests/whatif_test.cpp).
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/report/links_json.hpp"
#include "engine/report/run_folder.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("simumax_report_run_folder_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

executor::Timeline two_links() {
  executor::Timeline tl;
  tl.makespan = 2;
  tl.link_bucket_seconds = 0.5;
  executor::LinkUsage a;
  a.name = "leaf0.uplink_UP";
  a.bandwidth_bytes_per_s = 100;
  a.bytes = 50;
  a.flows = 3;
  a.busy_seconds = 1;
  a.utilisation = 0.25;
  a.busy_series = {1, 0.5, 0, 0.5};
  a.utilisation_series = {0.5, 0.25, 0, 0.25};
  executor::LinkUsage b;
  b.name = "node1.nic0_\"DOWN\"";  // quoted as JSON
  b.bandwidth_bytes_per_s = 400;
  b.bytes = 8;
  b.flows = 1;
  b.busy_seconds = 0.1;
  b.utilisation = 0.01;
  tl.links = {a, b};
  return tl;
}

TEST(LinksJson, HasEveryLinkInOrderWithItsSeriesOnlyWhereItHasOne) {
  const std::string text = links_json(two_links());
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["makespan_s"], 2.0);
  EXPECT_EQ(j["series_bucket_s"], 0.5);
  ASSERT_EQ(j["links"].size(), 2u);
  const auto& a = j["links"][0];
  EXPECT_EQ(a["name"], "leaf0.uplink_UP");
  EXPECT_EQ(a["bandwidth_bytes_per_s"], 100.0);
  EXPECT_EQ(a["bytes"], 50.0);
  EXPECT_EQ(a["flows"], 3);
  EXPECT_EQ(a["busy_s"], 1.0);
  EXPECT_EQ(a["busy_fraction"], 0.5);  // busy_s / makespan_s
  EXPECT_EQ(a["utilisation"], 0.25);
  EXPECT_EQ(a["busy_series"], nlohmann::json({1.0, 0.5, 0.0, 0.5}));
  EXPECT_EQ(a["utilisation_series"], nlohmann::json({0.5, 0.25, 0.0, 0.25}));
  const auto& b = j["links"][1];
  EXPECT_EQ(b["name"], "node1.nic0_\"DOWN\"");
  EXPECT_FALSE(b.contains("busy_series"));
  EXPECT_FALSE(b.contains("utilisation_series"));
  // One link a line, numbers in their shortest form.
  EXPECT_NE(text.find("\n    {\"name\": \"leaf0.uplink_UP\", \"bandwidth_bytes_per_s\": 100, \"bytes\": 50, \"flows\": 3, "
                      "\"busy_s\": 1, \"busy_fraction\": 0.5, \"utilisation\": 0.25, \"busy_series\": [1, 0.5, 0, 0.5], "
                      "\"utilisation_series\": [0.5, 0.25, 0, 0.25]},\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.substr(text.size() - 8), "}\n  ]\n}\n");
}

TEST(LinksJson, AStepWithoutFlowsHasAnEmptyList) {
  executor::Timeline tl;
  tl.makespan = 1;
  const std::string text = links_json(tl);
  EXPECT_EQ(nlohmann::json::parse(text)["links"], nlohmann::json::array());
  EXPECT_EQ(text.substr(text.size() - 14), "\"links\": []\n}\n");
  EXPECT_EQ(busiest_links_table(tl, 5), "");
}

TEST(LinksJson, IsWrittenWholeUnderItsName) {
  const fs::path dir = scratch("links");
  const executor::Timeline tl = two_links();
  EXPECT_EQ(write_links_json(dir.string(), tl), (dir / "links.json").string());
  EXPECT_EQ(read(dir / "links.json"), links_json(tl));
  for (const auto& e : fs::directory_iterator(dir)) EXPECT_EQ(e.path().filename(), "links.json");
  fs::remove_all(dir);
}

TEST(SummaryJson, IsWrittenUnderItsName) {
  const fs::path dir = scratch("summary");
  Summary s;
  s.name = "tiny";
  s.step_time_ms = 12.5;
  EXPECT_EQ(write_summary_json(dir.string(), s), (dir / "summary.json").string());
  EXPECT_EQ(read(dir / "summary.json"), summary_json(s));
  fs::remove_all(dir);
}

TEST(SummaryJson, AFolderWhereTheFileGoesIsAnErrorNamingIt) {
  const fs::path dir = scratch("summary_blocked");
  fs::create_directories(dir / "summary.json");
  try {
    write_summary_json(dir.string(), Summary{});
    ADD_FAILURE() << "no error";
  } catch (const common::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find((dir / "summary.json").string()), std::string::npos) << e.what();
  }
  fs::remove_all(dir);
}

TEST(RunFolder, RemovesOnlyTheFilesOfARunAndKeepsTheOneTheRunReads) {
  const fs::path dir = scratch("clean");
  for (const char* f : {"summary.json", "trace.json", "links.json", "report.html", "platform.xml", "notes.txt"}) {
    std::ofstream(dir / f) << f;
  }
  remove_earlier_run(dir.string(), (dir / "platform.xml").string());
  for (const char* gone : {"summary.json", "trace.json", "links.json", "report.html"}) {
    EXPECT_FALSE(fs::exists(dir / gone)) << gone;
  }
  EXPECT_EQ(read(dir / "platform.xml"), "platform.xml");
  EXPECT_EQ(read(dir / "notes.txt"), "notes.txt");
  remove_earlier_run(dir.string(), std::nullopt);
  EXPECT_FALSE(fs::exists(dir / "platform.xml"));
  EXPECT_TRUE(fs::exists(dir / "notes.txt"));
  fs::remove_all(dir);
}

TEST(RunFolder, ASecondLockOnTheFolderNamesTheHolder) {
  const fs::path dir = scratch("lock");
  lock_run_folder(dir.string());
  // flock belongs to the open file: a second open in this process is refused as another process would be.
  try {
    lock_run_folder(dir.string());
    ADD_FAILURE() << "no error";
  } catch (const common::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), dir.string() + " is in use by pid " + std::to_string(::getpid()) +
                                         " (another simumax-sim run writes there); wait for it, or give another -o");
  }
  fs::remove_all(dir);  // the lock stays held (until the process ends) on the removed file
}

}  // namespace
}  // namespace simumax::report
