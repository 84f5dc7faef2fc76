// The sim executor on fat-tree, rail and per-node-NIC platforms: idle collectives equal the cost model on every
// topology, shared uplinks slow concurrent collectives down, edited bandwidths change times, and the per-link
// report. Each simulation runs in its own process.
#include <cmath>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/executor/fast_executor.hpp"
#include "engine/executor/sim_executor.hpp"
#include "engine/executor/sim_executor_test_util.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/platform/temp_file_test_util.hpp"

namespace simumax::executor {
namespace {

using namespace testing;  // NOLINT: the helpers of the sim executor tests
using platform::Topology;

platform::PlatformSpec fabric(int64_t nodes, Topology t, double oversubscription, int64_t nodes_per_leaf,
                              bool nic_per_node = false) {
  platform::PlatformSpec s = spec(nodes);
  s.topology = t;
  s.oversubscription = oversubscription;
  s.nodes_per_leaf = nodes_per_leaf;
  s.nic_per_node = nic_per_node;
  return s;
}

// The platform of `generated` (or `xml` when given) as a user file; flows sized on spec(nodes), the system
// config's fabric, as `run` does.
SimOptions on_platform(const platform::PlatformSpec& generated, const std::string& name, std::string xml = "") {
  if (xml.empty()) xml = platform::platform_xml(generated);
  SimOptions o;
  o.platform_xml_path = platform::testing::write_file(name + ".xml", xml);
  o.spec = spec(generated.nodes);
  return o;
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(a), std::abs(b)); }

// One after the other: a ring over 5 nodes of 3 leaves, a peer across leaves, a 4-way all-to-all across
// leaves, a ring inside a node.
graph::TaskGraph idle_collectives() {
  GraphBuilder b(96);
  uint32_t last = b.comm({0, 8, 24, 40, 88}, CommPattern::kRing, 6e-3, 0.3e-3);
  last = b.comm({3, 67}, CommPattern::kPeer, 2e-3, 35e-6, {last});
  last = b.comm({1, 33, 65, 81}, CommPattern::kAllToAll, 4e-3, 0.2e-3, {last});
  b.comm({16, 17, 18, 19}, CommPattern::kRing, 1e-3, 0.1e-3, {last});
  return b.build();
}

TEST(SimFabric, IdleCollectivesEqualTheCostModelOnEveryTopology) {
  const graph::TaskGraph g = idle_collectives();
  const Timeline fast = run_fast(g);
  const struct {
    const char* name;
    platform::PlatformSpec spec;
  } cases[] = {
      {"single_switch", spec(12)},
      {"fat_tree_full", fabric(12, Topology::kFatTree, 1, 4)},
      {"fat_tree_2to1", fabric(12, Topology::kFatTree, 2, 4)},
      {"fat_tree_4to1", fabric(12, Topology::kFatTree, 4, 4)},
      {"rail_2to1", fabric(12, Topology::kRail, 2, 4)},
  };
  for (const auto& c : cases) {
    const Timeline sim = sim_in_child(g, on_platform(c.spec, c.name));
    ASSERT_EQ(sim.end.size(), g.size()) << c.name;
    for (size_t t = 0; t < g.size(); ++t) {
      EXPECT_LE(rel(sim.end[t] - sim.start[t], g.tasks[t].seconds), 1e-9) << c.name << " task " << t;
      EXPECT_LE(rel(sim.end[t], fast.end[t]), 1e-9) << c.name << " task " << t;
    }
  }
}

// With one NIC per node, a lone GPU gets the whole node's bandwidth; when every GPU of the node sends (as the
// 8 DP groups of a tp = 8 job do), each gets its share and the cost model's time again.
TEST(SimFabric, PerNodeNicsGiveTheCostModelWhenEveryGpuOfTheNodeSends) {
  GraphBuilder lone(32);
  lone.comm({0, 8, 16, 24}, CommPattern::kRing, 8e-3, 0.5e-3);
  GraphBuilder all(32);
  for (uint32_t gpu = 0; gpu < 8; ++gpu) all.comm({gpu, 8 + gpu, 16 + gpu, 24 + gpu}, CommPattern::kRing, 8e-3, 0.5e-3);
  const SimOptions o = on_platform(fabric(4, Topology::kFatTree, 1, 2, true), "per_node");
  EXPECT_NEAR(sim_in_child(lone.build(), o).makespan, 0.5e-3 + 7.5e-3 / 8, 1e-12);
  EXPECT_NEAR(sim_in_child(all.build(), o).makespan, 8e-3, 1e-12);
}

// ---- contention: DP rings of 2 ranks on nodes 0 and 2, under two leaves of 2 nodes each ----

graph::TaskGraph dp_rings(int groups) {
  GraphBuilder b(32);
  for (uint32_t gpu = 0; gpu < static_cast<uint32_t>(groups); ++gpu) {
    b.comm({gpu, 16 + gpu}, CommPattern::kRing, 20e-3, 1e-3);
  }
  return b.build();
}

TEST(SimFabric, TwoDpGroupsCrossingOneSharedUplinkTakeTwiceAsLong) {
  // 16 NIC ports per leaf at 16:1: each leaf's uplink carries one NIC's worth.
  const SimOptions thin = on_platform(fabric(4, Topology::kFatTree, 16, 2), "thin_uplink");
  const double one = sim_in_child(dp_rings(1), thin).makespan;
  const double two = sim_in_child(dp_rings(2), thin).makespan;
  EXPECT_NEAR(one, 20e-3, 1e-12);  // a lone ring fits the uplink
  std::printf("[ fabric   ] one DP group %.6f ms, two sharing the uplink %.6f ms: %.4fx\n", one * 1e3, two * 1e3,
              two / one);
  EXPECT_GE(two / one, 1.9);
  EXPECT_LE(two / one, 2.1);
}

// Rings that start one after another over a thin uplink (each joins the ones in flight), then an all-to-all
// over 2:1 links, and a ring that runs alone after the others.
graph::TaskGraph staggered_flows() {
  GraphBuilder b(32);
  std::vector<uint32_t> ends;
  for (uint32_t gpu = 0; gpu < 4; ++gpu) {
    const uint32_t wait = b.compute(gpu, gpu * 4e-3);
    ends.push_back(b.comm({gpu, 16 + gpu}, CommPattern::kRing, 20e-3, 1e-3, {wait}));
  }
  const uint32_t wait = b.compute(5, 9e-3);
  ends.push_back(b.comm({5, 13, 21, 29}, CommPattern::kAllToAll, 6e-3, 0.2e-3, {wait}));
  b.comm({6, 22}, CommPattern::kRing, 5e-3, 0.5e-3, ends);
  return b.build();
}

// A flow alone on its links runs as a timer and goes to SimGrid, with the bytes it has left, when another flow
// joins one of them (SimOptions::flow_timers): every task starts and ends when SimGrid alone has it.
TEST(SimFabric, FlowTimersGiveTheTimesOfSimGridAlone) {
  const graph::TaskGraph g = staggered_flows();
  const struct {
    const char* name;
    platform::PlatformSpec spec;
  } cases[] = {
      {"timers_thin", fabric(4, Topology::kFatTree, 16, 2)},
      {"timers_rail", fabric(4, Topology::kRail, 2, 2)},
      {"timers_full", fabric(4, Topology::kFatTree, 1, 2)},
  };
  for (const auto& c : cases) {
    SimOptions with = on_platform(c.spec, c.name);
    SimOptions without = with;
    without.flow_timers = false;
    const Timeline a = sim_in_child(g, with), b = sim_in_child(g, without);
    ASSERT_EQ(a.end.size(), g.size()) << c.name;
    ASSERT_EQ(b.end.size(), g.size()) << c.name;
    for (size_t t = 0; t < g.size(); ++t) {
      EXPECT_LE(std::abs(a.start[t] - b.start[t]), 1e-9 * b.start[t]) << c.name << " task " << t;
      EXPECT_LE(std::abs(a.end[t] - b.end[t]), 1e-9 * b.end[t]) << c.name << " task " << t;
    }
  }
  // The thin uplink makes the rings share it (the case the hand-over is for): slower than alone.
  EXPECT_GT(sim_in_child(g, on_platform(fabric(4, Topology::kFatTree, 16, 2), "timers_thin")).end[1], 21e-3);
}

TEST(SimFabric, FullBisectionRemovesTheSlowdown) {
  const SimOptions full = on_platform(fabric(4, Topology::kFatTree, 1, 2), "full_bisection");
  const double one = sim_in_child(dp_rings(1), full).makespan;
  const double eight = sim_in_child(dp_rings(8), full).makespan;
  std::printf("[ fabric   ] full bisection: one DP group %.6f ms, eight %.6f ms: %.4fx\n", one * 1e3, eight * 1e3,
              eight / one);
  EXPECT_LE(eight / one, 1.05);
}

TEST(SimFabric, RailKeepsSameRailTrafficOffTheSpine) {
  // The same 8 rings on a rail fabric at 16:1: each stays on its rail switch.
  const SimOptions rail = on_platform(fabric(4, Topology::kRail, 16, 4), "rail_thin");
  EXPECT_NEAR(sim_in_child(dp_rings(8), rail).makespan, 20e-3, 1e-12);
}

// ---- edited bandwidths ----

TEST(SimFabric, HalvedNicsDoubleTheBandwidthPartOfAnInterNodeTransfer) {
  std::string xml = platform::platform_xml(spec(2));
  for (size_t at = 0; (at = xml.find("bandwidth=\"25GiBps\"", at)) != std::string::npos;) {
    xml.replace(at, 19, "bandwidth=\"12.5GiBps\"");
  }
  GraphBuilder b(16);
  b.comm({2, 10}, CommPattern::kPeer, 3e-3, 0.1e-3);
  EXPECT_NEAR(sim_in_child(b.build(), on_platform(spec(2), "ib_half", xml)).makespan, 0.1e-3 + 2 * 2.9e-3, 1e-10);
}

// ---- per-link report ----

std::string encode_links(const Timeline& tl) {
  std::ostringstream out;
  out.precision(17);
  for (const LinkUsage& l : tl.links) {
    out << l.name << ' ' << l.bandwidth_bytes_per_s << ' ' << l.bytes << ' ' << l.flows << ' ' << l.busy_seconds
        << ' ' << l.utilisation << '\n';
  }
  return out.str();
}

TEST(SimFabric, LinksReportBytesBusyTimeAndUtilisationBusiestFirst) {
  GraphBuilder b(32);
  const uint32_t ring = b.comm({0, 16}, CommPattern::kRing, 10e-3, 1e-3);
  b.compute(0, 10e-3, {ring});  // the step lasts 20 ms; the links are busy for the 9 ms of flows
  const SimOptions o = on_platform(fabric(4, Topology::kFatTree, 16, 2), "links");
  const auto child = platform::testing::in_child_process([&] { return encode_links(run_sim(b.build(), o)); });
  ASSERT_TRUE(child.ok) << child.value;
  const double bytes = std::floor(9e-3 * 25 * kGiB);
  std::istringstream in(child.value);
  std::string name;
  double bandwidth = 0, carried = 0, busy = 0, utilisation = 0;
  uint64_t flows = 0;
  std::vector<std::string> names;
  while (in >> name >> bandwidth >> carried >> flows >> busy >> utilisation) {
    names.push_back(name);
    EXPECT_EQ(carried, bytes) << name;
    EXPECT_EQ(flows, 1u) << name;
    EXPECT_NEAR(busy, 9e-3, 1e-9) << name;
    EXPECT_NEAR(utilisation, bytes / (bandwidth * 20e-3), 1e-12) << name;
  }
  // The NIC links (25 GiB/s) are fuller than the uplinks (16 x 25 / 16 = 25 GiB/s too: then by name).
  EXPECT_EQ(names, (std::vector<std::string>{"inter.nic0_DOWN", "inter.nic0_UP", "inter.nic16_DOWN", "inter.nic16_UP",
                                             "leaf0.uplink_DOWN", "leaf0.uplink_UP", "leaf1.uplink_DOWN",
                                             "leaf1.uplink_UP"}));
}

}  // namespace
}  // namespace simumax::executor
