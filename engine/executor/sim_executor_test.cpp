#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/common/error.hpp"
#include "engine/executor/fast_executor.hpp"
#include "engine/executor/sim_executor.hpp"
#include "engine/executor/sim_executor_test_util.hpp"
#include "engine/platform/platform_xml.hpp"

namespace simumax::executor {
namespace {

using namespace testing;  // NOLINT: the helpers of this test

void expect_same_timeline(const graph::TaskGraph& g, const SimOptions& options) {
  const Timeline fast = run_fast(g);
  const Timeline sim = sim_in_child(g, options);
  ASSERT_EQ(sim.start.size(), g.size());
  auto rel = [](double a, double b) { return std::abs(a - b) / std::max(1e-300, std::max(std::abs(a), std::abs(b))); };
  for (size_t t = 0; t < g.size(); ++t) {
    ASSERT_LE(rel(sim.start[t], fast.start[t]), 1e-9)
        << "start of task " << t << ": " << sim.start[t] << " vs " << fast.start[t];
    ASSERT_LE(rel(sim.end[t], fast.end[t]), 1e-9) << "end of task " << t << ": " << sim.end[t] << " vs " << fast.end[t];
  }
  EXPECT_LE(rel(sim.makespan, fast.makespan), 1e-9);
  EXPECT_GT(sim.makespan, 0);
}

TEST(SimExecutor, ChainMatchesFast) {
  GraphBuilder b(1);
  std::mt19937_64 rng(1);
  uint32_t last = b.compute(0, 1e-6);
  for (int i = 0; i < 5000; ++i) last = b.compute(0, 1e-6 + static_cast<double>(rng() % 1000000) * 1e-12, {last});
  expect_same_timeline(b.build(), on(1));
}

TEST(SimExecutor, DiamondWithZeroDurationsMatchesFast) {
  GraphBuilder b(2);
  const uint32_t a = b.compute(0, 3e-3);
  const uint32_t left = b.compute(0, 1e-3, {a});
  const uint32_t right = b.compute(1, 2.5e-3, {a});
  const uint32_t zero = b.compute(1, 0, {right});
  const uint32_t join = b.compute(0, 0.5e-3, {left, zero});
  b.compute(1, 0, {join});
  expect_same_timeline(b.build(), on(1));
}

TEST(SimExecutor, RandomMultiRankDagMatchesFast) {
  GraphBuilder b(16);
  std::mt19937_64 rng(7);
  std::vector<uint32_t> ids;
  for (int i = 0; i < 20000; ++i) {
    std::vector<uint32_t> deps;
    for (int k = 0; k < 3 && !ids.empty(); ++k) {
      if (rng() % 2 == 0) deps.push_back(ids[ids.size() - 1 - rng() % std::min<size_t>(ids.size(), 50)]);
    }
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    const double seconds = rng() % 10 == 0 ? 0.0 : static_cast<double>(rng() % 500 + 1) * 1e-6;
    ids.push_back(b.compute(static_cast<uint32_t>(rng() % 16), seconds, deps));
  }
  expect_same_timeline(b.build(), on(2));
}

TEST(SimExecutor, RingAcrossTwoNodesMatchesFast) {
  GraphBuilder b(16);
  const uint32_t before = b.compute(1, 2e-3);
  // 0 -> 1 and 8 -> 9 over NVLink, 1 -> 8 and 9 -> 0 over the NICs: each link carries one flow.
  const uint32_t ring = b.comm({0, 1, 8, 9}, CommPattern::kRing, 4.2e-3, 0.21e-3, {before});
  b.compute(9, 1e-3, {ring});
  b.compute(3, 5e-3);  // an unrelated rank, runs in parallel
  expect_same_timeline(b.build(), on(2));
}

TEST(SimExecutor, PeerAcrossNodesMatchesFast) {
  GraphBuilder b(16);
  uint32_t last = b.compute(0, 1e-3);
  for (int i = 0; i < 10; ++i) {
    last = b.comm({0, 8}, CommPattern::kPeer, 1.3e-3 + i * 1e-5, 35e-6, {last});
    last = b.compute(8, 0.7e-3, {last});
    last = b.comm({8, 0}, CommPattern::kPeer, 0.9e-3, 35e-6, {last});
  }
  expect_same_timeline(b.build(), on(2));
}

TEST(SimExecutor, AllToAllMatchesFast) {
  GraphBuilder b(32);
  const uint32_t inter = b.comm({0, 8, 16, 24}, CommPattern::kAllToAll, 3e-3, 0.1e-3);
  const uint32_t intra = b.comm({0, 1, 2, 3, 4, 5, 6, 7}, CommPattern::kAllToAll, 1e-3, 0.05e-3, {inter});
  const uint32_t mixed = b.comm({2, 3, 10, 11}, CommPattern::kAllToAll, 2e-3, 0.05e-3, {intra});
  b.compute(2, 1e-3, {mixed});
  expect_same_timeline(b.build(), on(4));
}

TEST(SimExecutor, ConcurrentCollectivesOnDisjointLinksMatchFast) {
  GraphBuilder b(32);
  for (uint32_t node = 0; node < 4; ++node) {
    std::vector<uint32_t> tp;
    for (uint32_t g = 0; g < 8; ++g) tp.push_back(node * 8 + g);
    uint32_t last = b.compute(node * 8, 1e-4 * node);
    for (int i = 0; i < 5; ++i) {
      last = b.comm(tp, CommPattern::kRing, 1e-3, 0.4e-3, {last});
      last = b.compute(node * 8 + 3, 2e-4, {last});
    }
  }
  const uint32_t dp = b.comm({0, 8, 16, 24}, CommPattern::kRing, 5e-3, 0.2e-3);  // other GPUs' NICs are free
  b.compute(0, 1e-3, {dp});
  b.comm({5}, CommPattern::kRing, 1e-3, 0);  // a group of one sends nothing: a timer
  expect_same_timeline(b.build(), on(4));
}

// Flows are Execs that helper actors make ahead of use (sim_executor.cpp, FlowPool); a burst larger than their
// pools is made by maestro, and the pools grow. Each burst here is 64 nodes x 56 NVLink all-to-all flows plus
// 8 rails x one 8-node ring over the NICs (3,648 flows at once, the pools hold 512 at first), four times.
TEST(SimExecutor, BurstsLargerThanTheFlowPoolsMatchFast) {
  GraphBuilder b(512);
  std::vector<uint32_t> last(512, b.compute(0, 1e-4));
  for (int round = 0; round < 4; ++round) {
    std::vector<uint32_t> next(512);
    for (uint32_t node = 0; node < 64; ++node) {
      std::vector<uint32_t> gpus;
      for (uint32_t g = 0; g < 8; ++g) gpus.push_back(node * 8 + g);
      const uint32_t a2a = b.comm(gpus, CommPattern::kAllToAll, 1e-3 + round * 1e-5, 0.05e-3, {last[node * 8]});
      for (uint32_t r : gpus) next[r] = a2a;
    }
    for (uint32_t g = 0; g < 8; ++g) {
      std::vector<uint32_t> rail;  // GPU g of nodes 8k..8k+7 for one k per round: NICs never shared
      for (uint32_t n = 0; n < 8; ++n) rail.push_back(((round * 8 + n) % 64) * 8 + g);
      const uint32_t ring = b.comm(rail, CommPattern::kRing, 2e-3, 0.1e-3, {next[rail[0]]});
      for (uint32_t r : rail) next[r] = ring;
    }
    last = next;
  }
  expect_same_timeline(b.build(), on(64));
}

TEST(SimExecutor, UserXmlGivesTheSameTimelineAsTheSpec) {
  GraphBuilder b(16);
  const uint32_t ring = b.comm({0, 1, 8, 9}, CommPattern::kRing, 4e-3, 0.2e-3);
  b.compute(0, 1e-3, {ring});
  const graph::TaskGraph g = b.build();
  const std::string path = ::testing::TempDir() + "sim_user.xml";
  std::ofstream(path) << platform::platform_xml(spec(2));
  SimOptions from_xml;
  from_xml.platform_xml_path = path;
  from_xml.gpus_per_node = 8;
  EXPECT_EQ(sim_in_child(g, from_xml).end, sim_in_child(g, on(2)).end);
  SimOptions path_and_spec = on(2);  // the path wins; the spec gives the GPUs per node
  path_and_spec.platform_xml_path = path;
  EXPECT_EQ(sim_in_child(g, path_and_spec).end, sim_in_child(g, on(2)).end);
}

// ---- contention ----

// The platform of spec(nodes) with a shared IB core of twice a NIC's bandwidth: flows between different
// GPUs' NICs now share one link.
SimOptions with_ib_core(int64_t nodes) {
  std::string xml = platform::platform_xml(spec(nodes));
  const std::string zone = "<zone id=\"inter_node\" routing=\"Cluster\">\n";
  xml.insert(xml.find(zone) + zone.size(), "      <backbone id=\"ib_core\" bandwidth=\"50GiBps\" latency=\"0s\"/>\n");
  const std::string path = ::testing::TempDir() + "sim_core.xml";
  std::ofstream(path) << xml;
  SimOptions o;
  o.platform_xml_path = path;
  o.gpus_per_node = 8;
  return o;
}

TEST(SimExecutor, RingsOnDisjointGroupsSharingAnUplinkTakeTwiceAsLong) {
  GraphBuilder one(16);
  one.comm({0, 8}, CommPattern::kRing, 10e-3, 0);
  GraphBuilder two(16);
  two.comm({0, 8}, CommPattern::kRing, 10e-3, 0);
  two.comm({1, 9}, CommPattern::kRing, 10e-3, 0);
  const double alone = sim_in_child(one.build(), with_ib_core(2)).makespan;
  const double shared = sim_in_child(two.build(), with_ib_core(2)).makespan;
  EXPECT_NEAR(alone, 10e-3, 1e-12);  // the core is not the bottleneck of a lone ring
  EXPECT_GE(shared / alone, 1.9);
  EXPECT_LE(shared / alone, 2.1);
  // Without the core the groups share nothing (per-GPU NICs, non-blocking switch).
  EXPECT_NEAR(sim_in_child(two.build(), on(2)).makespan, 10e-3, 1e-12);
}

TEST(SimExecutor, TwoBucketsOnTheSameGroupShareTheNics) {
  GraphBuilder b(32);
  const std::vector<uint32_t> dp = {0, 8, 16, 24};
  b.comm(dp, CommPattern::kRing, 8e-3, 1e-3);
  b.comm(dp, CommPattern::kRing, 8e-3, 1e-3);
  const double makespan = sim_in_child(b.build(), on(4)).makespan;
  EXPECT_NEAR(makespan, 1e-3 + 2 * 7e-3, 1e-9);  // the latency is a timer; the bandwidth part is shared
}

// ---- failures ----

TEST(SimExecutor, CycleIsAnInternalErrorNamingStuckTasks) {
  graph::TaskGraph g;
  g.num_ranks = 1;
  g.global_rank = {0};
  g.names = {"a", "b", "c"};
  for (uint32_t i = 0; i < 3; ++i) {
    graph::Task t;
    t.seconds = 1e-3;
    t.name = i;
    g.tasks.push_back(t);
  }
  g.succ_offsets = {0, 1, 2, 3};  // a -> b -> c -> b
  g.succ = {1, 2, 1};
  g.in_degree = {0, 2, 1};
  const auto child = platform::testing::in_child_process([&] { return encode(run_sim(g, on(1))); });
  EXPECT_FALSE(child.ok);
  EXPECT_EQ(child.value,
            "exception: sim: 2 of 3 tasks never completed (a cycle in the task graph?), e.g. b (#1, never started), "
            "c (#2, never started)");
}

TEST(SimExecutor, SecondRunInOneProcessIsRefused) {
  GraphBuilder b(1);
  b.compute(0, 1e-3);
  const graph::TaskGraph g = b.build();
  const auto child = platform::testing::in_child_process([&] {
    run_sim(g, on(1));
    return encode(run_sim(g, on(1)));
  });
  EXPECT_EQ(child.value, "exception: run_sim: one simulation per process (SimGrid keeps global state)");
}

TEST(SimExecutor, BadUserXmlIsAConfigErrorBeforeSimgrid) {
  GraphBuilder b(16);
  b.comm({0, 8}, CommPattern::kPeer, 1e-3, 0);
  const std::string path = ::testing::TempDir() + "sim_bad.xml";
  std::ofstream(path) << platform::platform_xml(spec(1));  // one node, the job needs two
  SimOptions o;
  o.platform_xml_path = path;
  o.gpus_per_node = 8;
  const auto child = platform::testing::in_child_process([&] { return encode(run_sim(b.build(), o)); });
  EXPECT_NE(child.value.find("too few GPU hosts: world size 16"), std::string::npos) << child.value;
}

}  // namespace
}  // namespace simumax::executor
