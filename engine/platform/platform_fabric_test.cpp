// Fat-tree, rail and per-node-NIC platforms: their layout, their XML (checked, loaded, routed), one broken
// element per topology, mutants, and the <cluster> tag.
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/platform/fabric.hpp"
#include "engine/platform/platform_test_util.hpp"
#include "engine/platform/platform_xml.hpp"

namespace simumax::platform {
namespace {

using namespace testing;  // NOLINT: the helpers of the platform tests

PlatformSpec fabric(int64_t nodes, Topology t, double oversubscription = 1, int64_t nodes_per_leaf = 0) {
  PlatformSpec s = spec_of(nodes);
  s.topology = t;
  s.oversubscription = oversubscription;
  s.nodes_per_leaf = nodes_per_leaf;
  return s;
}

TEST(FabricLayout, FatTreeLeavesHoldWholeNodesAndUplinksFollowTheOversubscription) {
  const FabricLayout f = fabric_layout(fabric(10, Topology::kFatTree, 2));
  EXPECT_EQ(f.nodes_per_leaf, 4);  // 32 ports / 8 NICs per node
  EXPECT_EQ(f.ports_per_leaf, 32);
  ASSERT_EQ(f.leaves.size(), 3u);
  EXPECT_EQ(f.leaves[2].name, "leaf2");
  EXPECT_EQ(f.leaves[2].nodes, (std::vector<int64_t>{8, 9}));  // the last leaf is partly filled
  EXPECT_EQ(f.leaves[2].uplink_bytes_per_s, 32 * 25 * kGiB / 2);  // same switch, same uplinks
}

TEST(FabricLayout, RailLeavesHoldOneGpuOfEveryNodeOfAPod) {
  const FabricLayout f = fabric_layout(fabric(6, Topology::kRail, 4, 4));
  ASSERT_EQ(f.leaves.size(), 16u);  // 2 pods x 8 rails
  EXPECT_EQ(f.leaves[11].name, "pod1.rail3");
  EXPECT_EQ(f.leaves[11].rail, 3);
  EXPECT_EQ(f.leaves[11].nodes, (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(f.ports_per_leaf, 4);
  EXPECT_EQ(f.leaves[0].uplink_bytes_per_s, 4 * 25 * kGiB / 4);
  EXPECT_EQ(fabric_layout(fabric(64, Topology::kRail)).nodes_per_leaf, 32);
}

TEST(FabricLayout, PerNodeNicsMakeOnePortPerNode) {
  PlatformSpec s = fabric(8, Topology::kFatTree);
  s.nic_per_node = true;
  const FabricLayout f = fabric_layout(s);
  EXPECT_EQ(f.nodes_per_leaf, 32);
  EXPECT_EQ(f.port_bytes_per_s, 200 * kGiB);
  EXPECT_EQ(f.leaves.size(), 1u);
}

// A generated fabric, host pairs and the routes SimGrid gives them ("|" between pairs).
struct RouteCase {
  PlatformSpec spec;
  HostPairs pairs;
  std::string routes;
};

// Each case's XML passes the check (for its whole size and for a 9-GPU job) and routes as expected.
void expect_checked_and_routed(const std::vector<RouteCase>& cases, const std::string& file) {
  for (const auto& c : cases) {
    const std::string xml = platform_xml(c.spec);
    EXPECT_EQ(check_error(xml, c.spec.gpus()), "");
    EXPECT_EQ(check_error(xml, 9), "");  // a smaller job fits too
    EXPECT_EQ(routes_in_child(write_file(file, xml), c.pairs), c.routes);
  }
}

TEST(FabricXml, GeneratedFabricsPassTheCheckAndRouteAsDescribed) {
  PlatformSpec per_node = spec_of(3);
  per_node.nic_per_node = true;
  PlatformSpec fat_per_node = fabric(3, Topology::kFatTree, 2, 2);
  fat_per_node.nic_per_node = true;
  expect_checked_and_routed({
      {fabric(3, Topology::kFatTree, 2, 2),
       {{"nic0", "nic9"}, {"nic0", "nic20"}},
       "inter.nic0_UP@25.000000 inter.nic9_DOWN@25.000000 | inter.nic0_UP@25.000000 leaf0.uplink_UP@200.000000 "
       "leaf1.uplink_DOWN@200.000000 inter.nic20_DOWN@25.000000"},
      {fabric(3, Topology::kRail, 4, 2),
       {{"nic1", "nic9"}, {"nic1", "nic17"}, {"nic1", "nic10"}},
       "inter.nic1_UP@25.000000 inter.nic9_DOWN@25.000000 | inter.nic1_UP@25.000000 pod0.rail1.uplink_UP@12.500000 "
       "pod1.rail1.uplink_DOWN@12.500000 inter.nic17_DOWN@25.000000 | inter.nic1_UP@25.000000 "
       "pod0.rail1.uplink_UP@12.500000 pod0.rail2.uplink_DOWN@12.500000 inter.nic10_DOWN@25.000000"},
      {per_node, {{"nic0", "nic9"}}, "inter.node0_UP@200.000000 inter.node1_DOWN@200.000000"},
      {fat_per_node,
       {{"nic3", "nic20"}},
       "inter.node0_UP@200.000000 leaf0.uplink_UP@200.000000 leaf1.uplink_DOWN@200.000000 inter.node2_DOWN@200.000000"},
      },
      "fabric.xml");
}

TEST(FabricXml, LargeFabricsLoadQuickly) {
  for (Topology t : {Topology::kFatTree, Topology::kRail}) {
    const PlatformSpec spec = fabric(512, t, 2);
    const std::string xml = platform_xml(spec);
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(check_error(xml, spec.gpus()), "");
    const double check_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto t1 = std::chrono::steady_clock::now();
    const std::string routes = routes_in_child(write_file("big.xml", xml), {{"nic0", "nic4095"}});
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
    EXPECT_EQ(routes.find("FAILED"), std::string::npos) << routes;
    std::printf("[ platform ] %s, 4096 GPUs: %.2f MB of XML, checked in %.3f s, loaded in a child in %.3f s\n",
                to_string(t), static_cast<double>(xml.size()) / 1e6, check_s, load_s);
  }
}

// ---- one deliberately broken element per topology: a one-line error naming the element and its line ----

TEST(FabricCheck, SingleSwitchWithAMisspeltNicLink) {
  const std::string xml = platform_xml(spec_of(2));
  const std::string bad = replace_once(xml, "down=\"inter.nic5_DOWN\"", "down=\"inter.nic5_DWN\"");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<host_link id=\"nic5\"")) +
                                      ": <host_link id=\"nic5\">: unknown link \"inter.nic5_DWN\" (did you mean "
                                      "\"inter.nic5_DOWN\"?)");
}

TEST(FabricCheck, FatTreeWithAZeroUplink) {
  const std::string xml = platform_xml(fabric(8, Topology::kFatTree, 2));
  const std::string bad = replace_once(xml, "<link id=\"leaf1.uplink\" bandwidth=\"400GiBps\"",
                                       "<link id=\"leaf1.uplink\" bandwidth=\"0GiBps\"");
  EXPECT_EQ(check_error(bad, 64), "p.xml: line " + std::to_string(line_of(xml, "<link id=\"leaf1.uplink\"")) +
                                      ": <link id=\"leaf1.uplink\">: bandwidth \"0GiBps\" is outside [1kBps, 1EBps]");
}

TEST(FabricCheck, FatTreeWithAMissingZoneRoute) {
  const std::string xml = platform_xml(fabric(8, Topology::kFatTree, 2));
  const std::string route = "<zoneRoute src=\"leaf1\" dst=\"spine\" gw_src=\"leaf1.switch\" gw_dst=\"spine.switch\">"
                            "<link_ctn id=\"leaf1.uplink\" direction=\"UP\"/></zoneRoute>";
  EXPECT_EQ(check_error(replace_once(xml, route, ""), 64),
            "p.xml: line " + std::to_string(line_of(xml, "<host id=\"nic32\"")) +
                ": <host id=\"nic32\">: no route between nic0 (in <zone id=\"leaf0\">) and nic32 (in <zone "
                "id=\"leaf1\">): no <zoneRoute> path from <zone id=\"leaf0\"> to <zone id=\"leaf1\"> in <zone "
                "id=\"inter_node\"> (SimGrid aborts on a missing route)");
}

TEST(FabricCheck, RailWithAGatewayThatIsNotInItsZone) {
  const std::string xml = platform_xml(fabric(4, Topology::kRail, 1, 2));
  const std::string bad = replace_once(xml, "gw_src=\"pod1.rail2.switch\"", "gw_src=\"pod1.rail3.switch\"");
  EXPECT_EQ(check_error(bad, 32), "p.xml: line " + std::to_string(line_of(xml, "<zoneRoute src=\"pod1.rail2\"")) +
                                      ": <zoneRoute src=\"pod1.rail2\">: gw_src \"pod1.rail3.switch\" must be a "
                                      "<router> directly inside <zone id=\"pod1.rail2\"> (did you mean "
                                      "\"pod1.rail2.switch\"?)");
}

TEST(FabricCheck, PerNodeNicWithAHostLinkToAnUndeclaredLink) {
  PlatformSpec s = fabric(2, Topology::kFatTree, 1, 1);
  s.nic_per_node = true;
  const std::string xml = platform_xml(s);
  const std::string bad = replace_once(xml, "<link id=\"inter.node1\"", "<link id=\"inter.node01\"");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<host_link id=\"nic8\"")) +
                                      ": <host_link id=\"nic8\">: unknown link \"inter.node1_UP\" (did you mean "
                                      "\"inter.node01_UP\"?)");
}

TEST(FabricCheck, ZoneRouteInsideACluster) {
  const std::string xml = platform_xml(fabric(8, Topology::kFatTree));
  const std::string bad = replace_once(xml, "<zone id=\"inter_node\" routing=\"Floyd\">",
                                       "<zone id=\"inter_node\" routing=\"Cluster\">");
  EXPECT_EQ(check_error(bad, 64),
            "p.xml: line " + std::to_string(line_of(xml, "<zoneRoute src=\"leaf0\"")) +
                ": <zoneRoute src=\"leaf0\">: <zoneRoute> is not allowed in a zone with routing=\"Cluster\" (a "
                "Cluster zone connects each host with <host_link>)");
}

TEST(FabricCheck, AcceptedMutantsOfFabricsLoadInSimgrid) {
  for (Topology t : {Topology::kFatTree, Topology::kRail}) {
    PlatformSpec s = fabric(2, t, 2, 1);
    s.gpus_per_node = 2;
    const int accepted = check_accepted_mutants(
        platform_xml(s), 4, 2, {{"node0.gpu0", "node0.gpu1"}, {"node1.gpu1", "node1.gpu0"}, {"nic0", "nic3"}, {"nic3", "nic1"}},
        {"<", ">", "/>", "\"", " ", "_UP", "zone", "0", "1", "GBps", "</zone>", "leaf", "spine", "rail",
         "<router id=\"r\"/>", "<zoneRoute src=\"leaf0\" dst=\"leaf1\" gw_src=\"leaf0.switch\" gw_dst=\"leaf1.switch\">",
         "<link_ctn id=\"leaf0.uplink\"/>", "routing=\"Full\"", "routing=\"Cluster\""},
        1200, t == Topology::kRail ? 7 : 11);
    EXPECT_GT(accepted, 20) << to_string(t);
  }
}

// ---- leaf blocks: up to 8 leaves in one zone (the default past kMaxLeafZones leaves; forced here) ----

PlatformSpec blocks_of(PlatformSpec s, int64_t leaves_per_zone) {
  s.leaves_per_zone = leaves_per_zone;
  return s;
}

TEST(FabricBlocks, ZonePerLeafUpToKMaxLeafZonesLeavesThenBlocks) {
  PlatformSpec rail = fabric(1, Topology::kRail);
  rail.nodes = static_cast<int64_t>(kMaxLeafZones) / 8 * 32;  // 1,024 rail switches
  EXPECT_EQ(zone_leaves(rail, fabric_layout(rail)), 1);
  EXPECT_TRUE(leaf_blocks(rail, fabric_layout(rail)).empty());
  rail.nodes += 1;  // a 129th pod
  const FabricLayout more = fabric_layout(rail);
  EXPECT_EQ(zone_leaves(rail, more), kLeavesPerBlock);
  const auto blocks = leaf_blocks(rail, more);
  ASSERT_EQ(blocks.size(), 8u * 17);  // 8 rails x ceil(129 pods / 8)
  EXPECT_EQ(blocks[0].name, "rail0.block0");
  EXPECT_EQ(blocks[0].leaves, (std::vector<size_t>{0, 8, 16, 24, 32, 40, 48, 56}));  // rail 0 of pods 0..7
  EXPECT_EQ(blocks[16].name, "rail0.block16");
  EXPECT_EQ(blocks[16].leaves, (std::vector<size_t>{128 * 8}));
  EXPECT_EQ(blocks[17].name, "rail1.block0");
  PlatformSpec fat = fabric(16, Topology::kFatTree);
  fat.leaves_per_zone = 3;
  const auto fat_blocks = leaf_blocks(fat, fabric_layout(fat));  // 4 leaves
  ASSERT_EQ(fat_blocks.size(), 2u);
  EXPECT_EQ(fat_blocks[1].name, "block1");
  EXPECT_EQ(fat_blocks[1].leaves, (std::vector<size_t>{3}));
}

// The same links on every route as with a zone per leaf, plus the source block's spine_up and the destination
// block's spine_down, each twice its block's uplinks together (fat-tree: 2 x 200, 2 x 100; rail: 2 x 25).
TEST(FabricBlocks, GeneratedBlocksPassTheCheckAndRouteOverTheSameLinks) {
  PlatformSpec fat_per_node = fabric(3, Topology::kFatTree, 2, 1);
  fat_per_node.nic_per_node = true;
  expect_checked_and_routed({
      {blocks_of(fabric(3, Topology::kFatTree, 2, 1), 2),
       {{"nic0", "nic9"}, {"nic0", "nic20"}},
       "inter.nic0_UP@25.000000 leaf0.uplink_UP@100.000000 leaf1.uplink_DOWN@100.000000 inter.nic9_DOWN@25.000000 | "
       "leaf2.uplink_DOWN@100.000000 inter.nic20_DOWN@25.000000 inter.nic0_UP@25.000000 leaf0.uplink_UP@100.000000 "
       "block0.spine_up@400.000000 block1.spine_down@200.000000"},
      {blocks_of(fabric(3, Topology::kRail, 4, 2), 8),
       {{"nic1", "nic9"}, {"nic1", "nic17"}, {"nic1", "nic10"}},
       "inter.nic1_UP@25.000000 inter.nic9_DOWN@25.000000 | inter.nic1_UP@25.000000 pod0.rail1.uplink_UP@12.500000 "
       "pod1.rail1.uplink_DOWN@12.500000 inter.nic17_DOWN@25.000000 | pod0.rail2.uplink_DOWN@12.500000 "
       "inter.nic10_DOWN@25.000000 inter.nic1_UP@25.000000 pod0.rail1.uplink_UP@12.500000 "
       "rail1.block0.spine_up@50.000000 rail2.block0.spine_down@50.000000"},
      {blocks_of(fat_per_node, 8),
       {{"nic3", "nic20"}},
       "inter.node0_UP@200.000000 leaf0.uplink_UP@100.000000 leaf2.uplink_DOWN@100.000000 inter.node2_DOWN@200.000000"},
      },
      "blocks.xml");
}

TEST(FabricBlocks, FatTreeWithAMissingRouteToTheBlocksGateway) {
  const std::string xml = platform_xml(blocks_of(fabric(8, Topology::kFatTree, 2), 8));
  const std::string route = "<route src=\"leaf1.switch\" dst=\"block0.gw\"><link_ctn id=\"leaf1.uplink\" "
                            "direction=\"UP\"/></route>";
  EXPECT_EQ(check_error(replace_once(xml, route, ""), 64),
            "p.xml: line " + std::to_string(line_of(xml, "<host id=\"nic0\"")) +
                ": <host id=\"nic0\">: no route from nic0 to nic32 in <zone id=\"block0\"> (these hosts exchange data; "
                "SimGrid aborts on a missing route)");
}

TEST(FabricBlocks, RailWithAGatewayThatIsNotInItsZone) {
  const std::string xml = platform_xml(blocks_of(fabric(4, Topology::kRail, 1, 2), 8));
  const std::string bad = replace_once(xml, "gw_src=\"rail2.block0.gw\"", "gw_src=\"rail3.block0.gw\"");
  EXPECT_EQ(check_error(bad, 32), "p.xml: line " + std::to_string(line_of(xml, "<zoneRoute src=\"rail2.block0\"")) +
                                      ": <zoneRoute src=\"rail2.block0\">: gw_src \"rail3.block0.gw\" must be a "
                                      "<router> directly inside <zone id=\"rail2.block0\"> (did you mean "
                                      "\"rail2.block0.gw\"?)");
}

TEST(FabricBlocks, PerNodeNicWithARouteOverAnUndeclaredLink) {
  PlatformSpec s = blocks_of(fabric(2, Topology::kFatTree, 1, 1), 8);
  s.nic_per_node = true;
  const std::string xml = platform_xml(s);
  const std::string bad = replace_once(xml, "<link id=\"inter.node1\"", "<link id=\"inter.node01\"");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<link_ctn id=\"inter.node1\"")) +
                                      ": <link_ctn id=\"inter.node1\">: unknown SPLITDUPLEX link \"inter.node1\" (did "
                                      "you mean \"inter.node0\"?)");
}

TEST(FabricBlocks, AcceptedMutantsOfBlocksLoadInSimgrid) {
  for (Topology t : {Topology::kFatTree, Topology::kRail}) {
    PlatformSpec s = blocks_of(fabric(2, t, 2, 1), 8);
    s.gpus_per_node = 2;
    const int accepted = check_accepted_mutants(
        platform_xml(s), 4, 2, {{"node0.gpu0", "node0.gpu1"}, {"node1.gpu1", "node1.gpu0"}, {"nic0", "nic3"}, {"nic3", "nic1"}},
        {"<", ">", "/>", "\"", " ", "_UP", "zone", "0", "1", "GBps", "</zone>", "leaf", "spine", "rail", "block",
         "<router id=\"r\"/>", "<link_ctn id=\"leaf0.uplink\"/>", "<route src=\"leaf0.switch\" dst=\"block0.gw\">",
         "routing=\"Full\"", "routing=\"Cluster\"", "routing=\"Floyd\"", "FATPIPE"},
        1200, t == Topology::kRail ? 7 : 11);
    EXPECT_GT(accepted, 20) << to_string(t);
  }
}

// Found by the mutant test: SimGrid's parser rejects "--" inside a comment (XML forbids it).
TEST(FabricCheck, DoubleDashInsideACommentIsRejected) {
  const std::string xml = platform_xml(fabric(2, Topology::kFatTree, 2, 1));
  const std::string bad = replace_once(xml, "<!-- node 1: job ranks 8..15 -->", "<!-- node 1 -- job ranks 8..15 --->");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<!-- node 1: job ranks 8..15 -->")) +
                                      ": <!--: \"--\" inside a comment (XML allows it only in the closing -->)");
}

// ---- the <cluster> tag ----

std::string cluster_platform(const std::string& cluster) {
  return R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="None">
    <zone id="intra_node" routing="Cluster">
      <host id="node0.gpu0" speed="1Pf"/><link id="g0" bandwidth="900GiBps" latency="0s"/>
      <host_link id="node0.gpu0" up="g0" down="g0"/>
      <host id="node1.gpu0" speed="1Pf"/><link id="g1" bandwidth="900GiBps" latency="0s"/>
      <host_link id="node1.gpu0" up="g1" down="g1"/>
      <host id="node2.gpu0" speed="1Pf"/><link id="g2" bandwidth="900GiBps" latency="0s"/>
      <host_link id="node2.gpu0" up="g2" down="g2"/>
      <host id="node3.gpu0" speed="1Pf"/><link id="g3" bandwidth="900GiBps" latency="0s"/>
      <host_link id="node3.gpu0" up="g3" down="g3"/>
    </zone>
    )" + cluster + R"(
  </zone>
</platform>
)";
}

TEST(ClusterTag, FatTreeAndFlatClustersOfNicsAreAcceptedAndRoute) {
  const std::string fat_tree = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3" speed="1Pf" bw="25GiBps" lat="0s" topology="FAT_TREE" topo_parameters="2;2,2;1,2;1,1"/>)");
  EXPECT_EQ(check_error(fat_tree, 4, 1), "");
  const std::string routes = routes_in_child(write_file("ft.xml", fat_tree), {{"nic0", "nic3"}});
  EXPECT_EQ(std::count(routes.begin(), routes.end(), '@'), 4) << routes;  // host -> leaf -> spine -> leaf -> host
  const std::string flat = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3" speed="1Pf" bw="25GiBps" lat="0s" bb_bw="50GiBps"/>)");
  EXPECT_EQ(check_error(flat, 4, 1), "");
  EXPECT_EQ(routes_in_child(write_file("flat.xml", flat), {{"nic0", "nic3"}}),
            "ib_link_0_UP@25.000000 ib_backbone@50.000000 ib_link_3_DOWN@25.000000");
}

TEST(ClusterTag, FatTreeParametersThatDoNotMatchTheHosts) {
  const std::string bad = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3" speed="1Pf" bw="25GiBps" lat="0s" topology="FAT_TREE" topo_parameters="2;4,2;1,2;1,1"/>)");
  EXPECT_EQ(check_error(bad, 4, 1),
            "p.xml: line 15: <cluster id=\"ib\">: topo_parameters \"2;4,2;1,2;1,1\" has 8 hosts (the product of the "
            "children counts) but radical \"0-3\" names 4");
  const std::string levels = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3" speed="1Pf" bw="25GiBps" lat="0s" topology="FAT_TREE" topo_parameters="2;4;1,2;1,1"/>)");
  EXPECT_EQ(check_error(levels, 4, 1),
            "p.xml: line 15: <cluster id=\"ib\">: topo_parameters \"2;4;1,2;1,1\": 2 levels but 1 values in part 2");
}

TEST(ClusterTag, RadicalsAndTopologyAreCheckedLikeSimgrid) {
  const std::string few = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-2" speed="1Pf" bw="25GiBps" lat="0s"/>)");
  EXPECT_EQ(check_error(few, 4, 1),
            "p.xml: line 3: <platform>: too few NIC hosts: world size 4 (1 GPUs per node) needs nic0 .. nic3; 1 "
            "missing, the first is nic3");
  const std::string junk = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3x" speed="1Pf" bw="25GiBps" lat="0s"/>)");
  EXPECT_EQ(check_error(junk, 4, 1),
            "p.xml: line 15: <cluster id=\"ib\">: radical \"0-3x\": \"0-3x\" is not a number or a range such as 0-7");
  const std::string torus = cluster_platform(
      R"(<cluster id="ib" prefix="nic" suffix="" radical="0-3" speed="1Pf" bw="25GiBps" lat="0s" topology="TORUS" topo_parameters="2,2"/>)");
  EXPECT_EQ(check_error(torus, 4, 1),
            "p.xml: line 15: <cluster id=\"ib\">: topology \"TORUS\" is not supported (use FLAT or FAT_TREE)");
}

}  // namespace
}  // namespace simumax::platform
