// The what-if scenarios of docs/whatif.md on SimGrid, every rank: they run on their platforms, shared leaf
// uplinks slow the DP phase down twice, full bisection does not, and a broken platform of each topology is a
// one-line error (exit 2). Each run is its own process (the CLI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;

const std::string kDir = "scenarios/whatif/";
const std::string kPrefix = kDir + "llama3_70b_tp8_pp2_dp8_";

fs::path out_dir(const std::string& name) {
  const fs::path root = fs::temp_directory_path() / ("simumax-whatif-" + std::to_string(getpid()));
  remove_at_exit(root);
  return root / name;
}

struct Step {
  double step_ms = 0;
  double exposed_dp_ms = 0;  // step - end of the pipeline - optimizer: the DP phase after the flush
  nlohmann::json links;
};

Step run_sim(const std::string& variant) {
  const fs::path out = out_dir(variant);
  const auto r = run_cli({"run", kPrefix + variant + ".json", "-q", "--executor", "sim", "--ranks", "all", "-o",
                          out.string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto summary = nlohmann::json::parse(read_file((out / "summary.json").string()));
  Step s;
  s.step_ms = summary["step_time_ms"].get<double>();
  double pipeline = 0, optimizer = 0;
  for (const auto& stage : summary["stages"]) {
    pipeline = std::max(pipeline, stage["pipeline_end_ms"].get<double>());
    optimizer = std::max(optimizer, stage["optimizer_ms"].get<double>());
  }
  s.exposed_dp_ms = s.step_ms - pipeline - optimizer;
  s.links = nlohmann::json::parse(read_file((out / "links.json").string()))["links"];
  return s;
}

TEST(WhatIf, FullBisectionGivesTheCostModelsStep) {
  const auto fast = run_cli({"run", kPrefix + "single_switch.json", "-q", "-o", out_dir("fast").string()});
  ASSERT_EQ(fast.exit_code, 0) << fast.err;
  const double model = nlohmann::json::parse(read_file((out_dir("fast") / "summary.json").string()))["step_time_ms"];
  for (const char* variant : {"single_switch", "fat_tree_full", "rail_4to1"}) {
    EXPECT_NEAR(run_sim(variant).step_ms / model, 1.0, 1e-9) << variant;
  }
}

TEST(WhatIf, DpRingsSharingLeafUplinksTakeTwiceAsLong) {
  // At 4:1 a leaf's uplinks carry 8 NICs' worth: one pipeline stage's 8 DP rings fit, two stages' do not.
  const Step own = run_sim("fat_tree_4to1");
  const Step shared = run_sim("shared_leaves_4to1");
  const double ratio = shared.exposed_dp_ms / own.exposed_dp_ms;
  std::printf("[ whatif   ] exposed DP: own leaves %.1f ms, shared leaves %.1f ms: %.3fx\n", own.exposed_dp_ms,
              shared.exposed_dp_ms, ratio);
  EXPECT_GE(ratio, 1.9);
  EXPECT_LE(ratio, 2.1);
  EXPECT_EQ(shared.links[0]["name"].get<std::string>().find("leaf"), 0u) << shared.links[0];
  EXPECT_GT(shared.links[0]["utilisation"].get<double>(), own.links[0]["utilisation"].get<double>());
}

TEST(WhatIf, LinksJsonHasTheBusiestLinksOverTimeSummingToTheirTotals) {
  const fs::path out = out_dir("series");
  for (int i = 0; i < 2; ++i) {
    const auto r = run_cli({"run", kPrefix + "shared_leaves_4to1.json", "-q", "--executor", "sim", "--ranks", "all",
                            "-o", (out / std::to_string(i)).string()});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const std::string text = read_file((out / "0" / "links.json").string());
  EXPECT_EQ(text, read_file((out / "1" / "links.json").string()));  // deterministic, byte for byte
  const auto j = nlohmann::json::parse(text);
  const double bucket_s = j["series_bucket_s"], makespan_s = j["makespan_s"];
  const size_t buckets = static_cast<size_t>(std::ceil(makespan_s / bucket_s));
  EXPECT_LE(buckets, 128u);
  EXPECT_GT(buckets, 64u);  // the width doubles only when the step outgrows 128 buckets
  ASSERT_GT(j["links"].size(), 20u);
  for (size_t i = 0; i < j["links"].size(); ++i) {
    const auto& l = j["links"][i];
    if (i >= 20) {
      EXPECT_FALSE(l.contains("busy_series")) << i;  // bounded: only the 20 busiest
      continue;
    }
    ASSERT_EQ(l["busy_series"].size(), buckets) << i;
    ASSERT_EQ(l["utilisation_series"].size(), buckets) << i;
    double busy = 0, bytes = 0;
    for (size_t b = 0; b < buckets; ++b) {
      EXPECT_LE(l["busy_series"][b].get<double>(), 1 + 1e-9);
      busy += l["busy_series"][b].get<double>() * bucket_s;
      bytes += l["utilisation_series"][b].get<double>() * bucket_s * l["bandwidth_bytes_per_s"].get<double>();
    }
    EXPECT_NEAR(busy / l["busy_s"].get<double>(), 1.0, 1e-9) << l["name"];
    EXPECT_NEAR(bytes / l["bytes"].get<double>(), 1.0, 1e-9) << l["name"];
  }
}

TEST(WhatIf, HalvedIbSlowsTheDpPhaseAndHalvedNvlinkDoesNotAffectThisJob) {
  const Step base = run_sim("single_switch");
  EXPECT_NEAR(run_sim("ib_half").exposed_dp_ms / base.exposed_dp_ms, 1.95, 0.05);
  EXPECT_NEAR(run_sim("nvlink_half").step_ms, base.step_ms, 1e-9 * base.step_ms);  // TP runs as timers
}

// ---- a broken element in the platform of each topology: one line, exit 2 ----

std::string line_of(const std::string& text, const std::string& needle) {
  const size_t at = text.find(needle);
  EXPECT_NE(at, std::string::npos) << needle;
  return std::to_string(1 + std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
}

// `platform` on 16 nodes with `options`, written to out_dir(folder)/<variant>.xml.
fs::path generated_platform(const std::string& folder, const std::string& variant, std::vector<std::string> options) {
  const fs::path xml = out_dir(folder) / (variant + ".xml");
  fs::create_directories(xml.parent_path());
  std::vector<std::string> args = {"platform", "platforms/b200_bf16.json", "--nodes", "16", "-o", xml.string()};
  args.insert(args.end(), options.begin(), options.end());
  EXPECT_EQ(run_cli(args).exit_code, 0) << variant;
  return xml;
}

// <variant>.json run with every rank on SimGrid on the committed <variant>.xml, into out_dir(<variant>_<before>),
// and on `xml`, into out_dir(<variant>_<after>); returns the two output folders.
std::pair<fs::path, fs::path> run_on_both(const std::string& variant, const fs::path& xml, const std::string& before,
                                          const std::string& after) {
  const fs::path out_before = out_dir(variant + "_" + before), out_after = out_dir(variant + "_" + after);
  for (const auto& [platform, out] : {std::pair{kDir + variant + ".xml", out_before}, {xml.string(), out_after}}) {
    const auto r = run_cli({"run", kPrefix + variant + ".json", "-q", "--executor", "sim", "--ranks", "all",
                            "--platform", platform, "-o", out.string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
  }
  return {out_before, out_after};
}

// The committed what-if XMLs keep the layout written before session 7 (each NIC link inside its leaf's zone);
// `platform` now declares a leaf's links in "inter_node", before the leaf, so SimGrid loads 16k GPUs in linear
// time. Same platform: every rank's timing and every link's load are byte-identical on both files.
TEST(WhatIf, LinksDeclaredOutsideTheLeavesGiveByteIdenticalRuns) {
  const struct {
    const char* variant;
    std::vector<std::string> options;
    const char* leaf;
  } cases[] = {
      {"rail_4to1", {"--topology", "rail", "--oversubscription", "4"}, "<zone id=\"pod0.rail3\""},
      {"fat_tree_2to1", {"--topology", "fat-tree", "--oversubscription", "2"}, "<zone id=\"leaf1\""},
  };
  for (const auto& c : cases) {
    const fs::path xml = generated_platform("relaid", c.variant, c.options);
    // The two files differ where it matters: the old leaf holds its links, the new one only hosts and a router.
    const std::string before = read_file(kDir + c.variant + ".xml"), after = read_file(xml.string());
    const auto leaf_body = [&](const std::string& text) {
      const size_t open = text.find(c.leaf);
      return text.substr(open, text.find("</zone>", open) - open);
    };
    EXPECT_NE(leaf_body(before).find("<link "), std::string::npos) << c.variant;
    EXPECT_EQ(leaf_body(after).find("<link "), std::string::npos) << c.variant;
    const auto [out_before, out_after] = run_on_both(c.variant, xml, "before", "after");
    for (const char* file : {"summary.json", "links.json", "ranks.json"}) {
      EXPECT_EQ(read_file((out_before / file).string()), read_file((out_after / file).string()))
          << c.variant << " " << file;
    }
  }
}

// Past 1,024 leaves `platform` puts up to 8 leaves in one zone (a block, so that SimGrid 3.32 loads 131k GPUs at
// all, docs/simgrid.md); --leaves-per-zone 2 forces blocks on 16 nodes. Same links on every route: every rank's
// timing and every link's load are byte-identical to the committed zone-per-leaf XMLs; links.json only gains the
// blocks' spine links, which never limit, where traffic crosses blocks (the fat-tree's 4 leaves make 2 blocks,
// each with a spine_up and a spine_down).
TEST(WhatIf, LeafBlocksGiveTheRunsOfAZonePerLeaf) {
  const struct {
    const char* variant;
    std::vector<std::string> options;
    const char* block;
    size_t spine_links;
  } cases[] = {
      {"rail_4to1", {"--topology", "rail", "--oversubscription", "4"}, "<zone id=\"rail3.block0\"", 0},
      {"fat_tree_2to1", {"--topology", "fat-tree", "--oversubscription", "2"}, "<zone id=\"block1\"", 4},
  };
  for (const auto& c : cases) {
    std::vector<std::string> options = c.options;
    options.insert(options.end(), {"--leaves-per-zone", "2"});
    const fs::path xml = generated_platform("blocks", c.variant, options);
    EXPECT_NE(read_file(xml.string()).find(c.block), std::string::npos) << c.variant;
    const auto [out_before, out_after] = run_on_both(c.variant, xml, "leaf_zones", "blocks");
    for (const char* file : {"summary.json", "ranks.json"}) {
      EXPECT_EQ(read_file((out_before / file).string()), read_file((out_after / file).string()))
          << c.variant << " " << file;
    }
    nlohmann::json links = nlohmann::json::parse(read_file((out_after / "links.json").string()));
    auto& list = links["links"];
    const auto is_spine = [](const nlohmann::json& l) {
      const std::string name = l["name"];
      return name.ends_with(".spine_up") || name.ends_with(".spine_down");
    };
    EXPECT_EQ(static_cast<size_t>(std::count_if(list.begin(), list.end(), is_spine)), c.spine_links) << c.variant;
    list.erase(std::remove_if(list.begin(), list.end(), is_spine), list.end());
    EXPECT_EQ(nlohmann::json::parse(read_file((out_before / "links.json").string())), links) << c.variant;
  }
}

TEST(WhatIf, BrokenPlatformOfEachTopologyIsAOneLineError) {
  const struct {
    const char* xml;
    std::string from, to, element, message;
  } cases[] = {
      {"single_switch.xml", "<host_link id=\"nic17\" up=\"inter.nic17_UP\"", "<host_link id=\"nic17\" up=\"inter.nic17_UQ\"",
       "<host_link id=\"nic17\">", "unknown link \"inter.nic17_UQ\" (did you mean \"inter.nic17_UP\"?)"},
      {"fat_tree_4to1.xml", "<link id=\"leaf2.uplink\" bandwidth=\"200GiBps\"", "<link id=\"leaf2.uplink\" bandwidth=\"200\"",
       "<link id=\"leaf2.uplink\">",
       "bandwidth: \"200\" has no unit (SimGrid units: Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, or the "
       "same with bps for bits)"},
      {"rail_4to1.xml", "<router id=\"pod0.rail5.switch\"/>", "<router id=\"pod0.rail5.swich\"/>",
       "<zoneRoute src=\"pod0.rail5\">",
       "gw_src \"pod0.rail5.switch\" must be a <router> directly inside <zone id=\"pod0.rail5\"> (did you mean "
       "\"pod0.rail5.swich\"?)"},
  };
  for (const auto& c : cases) {
    const std::string text = read_file(kDir + c.xml);
    std::string broken = text;
    broken.replace(broken.find(c.from), c.from.size(), c.to);
    const fs::path path = out_dir("broken") / c.xml;
    fs::create_directories(path.parent_path());
    std::ofstream(path) << broken;
    const std::string needle = c.element.starts_with("<zoneRoute") ? "<zoneRoute src=\"pod0.rail5\"" : c.from;
    const auto r = run_cli({"run", kPrefix + "single_switch.json", "-q", "--executor", "sim", "--ranks", "all",
                            "--platform", path.string()});
    EXPECT_EQ(r.exit_code, 2) << c.xml;
    EXPECT_EQ(r.err, "error: " + path.string() + ": line " + line_of(text, needle) + ": " + c.element + ": " +
                         c.message + "\n");
  }
}

TEST(WhatIf, PlatformCommandRefusesContradictoryOptions) {
  const auto rail = run_cli({"platform", "platforms/b200_bf16.json", "--nodes", "4", "--topology", "rail", "--nic-per",
                             "node"});
  EXPECT_EQ(rail.exit_code, 2);
  EXPECT_EQ(rail.err, "error: --topology rail needs one NIC per GPU (rail g joins NIC g of every node); drop --nic-per "
                      "node\n");
  const auto flat = run_cli({"platform", "platforms/b200_bf16.json", "--nodes", "4", "--oversubscription", "2"});
  EXPECT_EQ(flat.exit_code, 2);
  EXPECT_EQ(flat.err,
            "error: --oversubscription, --nodes-per-leaf and --leaves-per-zone need --topology fat-tree or rail\n");
  const auto flat_blocks = run_cli({"platform", "platforms/b200_bf16.json", "--nodes", "4", "--leaves-per-zone", "2"});
  EXPECT_EQ(flat_blocks.exit_code, 2);
  EXPECT_EQ(flat_blocks.err, flat.err);
  const auto no_leaves =
      run_cli({"platform", "platforms/b200_bf16.json", "--nodes", "4", "--topology", "rail", "--leaves-per-zone", "0"});
  EXPECT_EQ(no_leaves.exit_code, 2);
  EXPECT_EQ(no_leaves.err.rfind("error: --leaves-per-zone: Value 0 not in range 1 to 64\n", 0), 0u) << no_leaves.err;
}

}  // namespace
}  // namespace simumax::tests
