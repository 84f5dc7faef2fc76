#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <simgrid/s4u.hpp>

#include "engine/common/error.hpp"
#include "engine/config/system_config.hpp"
#include "engine/platform/platform_check.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/platform/simgrid_units.hpp"
#include "engine/platform/subprocess_test_util.hpp"
#include "engine/platform/platform_test_util.hpp"

namespace simumax::platform {
namespace {

namespace sg4 = simgrid::s4u;
using namespace testing;  // NOLINT: the helpers of the platform tests

TEST(PlatformFromSystem, NodesAndPerGpuBandwidthsFollowTheTiers) {
  const PlatformSpec s = platform_from_system(b200_like(), 20);
  EXPECT_EQ(s.nodes, 3);
  EXPECT_EQ(s.gpus_per_node, 8);
  EXPECT_EQ(s.nvlink_bytes_per_s, 900 * kGiB);
  EXPECT_EQ(s.nic_bytes_per_s, 200 * kGiB / 8);  // SimuMax's inter-node tier is per node
  EXPECT_DOUBLE_EQ(s.nvlink_latency_s, 35e-6);
  EXPECT_DOUBLE_EQ(s.nic_latency_s, 35e-6);
}

TEST(PlatformFromSystem, PcieSystemsUseThe8xTier) {
  config::SystemConfig s;
  s.sys_name = "a100_pcie";
  s.intra_with_pcie = true;
  s.networks["intra_node_pcie_8x"].bandwidth = {30, 0.5, 10, 0, {}};
  s.networks["inter_node"].bandwidth = {25, 0.6, 40, 0, {}};
  const PlatformSpec p = platform_from_system(s, 16);
  EXPECT_EQ(p.nvlink_bytes_per_s, 30 * kGiB);
  EXPECT_EQ(p.nic_bytes_per_s, 25 * kGiB / 8);
}

TEST(PlatformFromSystem, MissingTierIsAConfigError) {
  config::SystemConfig s = b200_like();
  s.networks.erase("inter_node");
  EXPECT_NO_THROW(platform_from_system(s, 8));  // one node never needs the inter-node tier
  try {
    platform_from_system(s, 16);
    FAIL() << "expected ConfigError";
  } catch (const common::ConfigError& e) {
    EXPECT_STREQ(e.what(), "b200: /networks/inter_node: missing: the platform needs this network tier");
  }
}

TEST(PlatformXml, BandwidthSpellingReadsBackExactly) {
  for (double bw : {900 * kGiB, 25 * kGiB, 200 * kGiB / 3, 1e6, 12.5e9, 3.0}) {
    const std::string text = format_bandwidth(bw);
    std::string error;
    const auto back = parse_quantity(Quantity::kBandwidth, text, &error);
    ASSERT_TRUE(back) << error;
    EXPECT_EQ(*back, bw) << text;
  }
  EXPECT_EQ(format_bandwidth(900 * kGiB), "900GiBps");
  EXPECT_EQ(format_bandwidth(1e6), "1000000Bps");
}

TEST(SimgridUnits, ParseLikeSimgrid) {
  std::string error;
  EXPECT_EQ(*parse_quantity(Quantity::kBandwidth, "100Gbps", &error), 100e9 / 8);
  EXPECT_EQ(*parse_quantity(Quantity::kBandwidth, "2KiBps", &error), 2048);
  EXPECT_EQ(*parse_quantity(Quantity::kTime, "35us", &error), 35e-6);
  EXPECT_EQ(*parse_quantity(Quantity::kSpeed, "1Pf", &error), 1e15);
  EXPECT_FALSE(parse_quantity(Quantity::kBandwidth, "2KBps", &error));  // SimGrid spells it kBps
  EXPECT_FALSE(parse_quantity(Quantity::kBandwidth, "12", &error));
  EXPECT_EQ(error,
            "\"12\" has no unit (SimGrid units: Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, "
            "or the same with bps for bits)");
  EXPECT_FALSE(parse_quantity(Quantity::kTime, "nan s", &error));
}

TEST(PlatformXml, GeneratedPlatformsPassTheCheck) {
  for (int64_t nodes : {1, 2, 64}) {
    const std::string xml = platform_xml(spec_of(nodes));
    EXPECT_EQ(check_error(xml, nodes * 8), "") << nodes;
    EXPECT_EQ(check_error(xml, 1), "") << nodes;  // a smaller job fits too
  }
}

TEST(PlatformXml, OneNodeHasNoInterNodeZoneWithoutTheTier) {
  config::SystemConfig s = b200_like();
  s.networks.erase("inter_node");
  const std::string xml = platform_xml(platform_from_system(s, 8));
  EXPECT_EQ(xml.find("inter_node\" routing"), std::string::npos);
  EXPECT_EQ(check_error(xml, 8), "");
}

// Loads `xml` in a child process; returns "hosts links | intra route | inter route" or the failure.
std::string load_in_child(const std::string& path, int64_t gpus) {
  const auto child = testing::in_child_process([&] {
    int argc = 2;
    char arg0[] = "platform_test", arg1[] = "--log=root.thres:critical";
    char* argv[] = {arg0, arg1, nullptr};
    sg4::Engine engine(&argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    engine.load_platform(path);
    engine.seal_platform();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ platform ] %lld GPUs: loaded in %.3f s\n", static_cast<long long>(gpus), s);
    auto describe = [&](const std::string& a, const std::string& b) {
      std::vector<sg4::Link*> links;
      double latency = 0;
      engine.host_by_name(a)->route_to(engine.host_by_name(b), links, &latency);
      std::string out;
      for (const sg4::Link* l : links) out += l->get_name() + "@" + std::to_string(l->get_bandwidth() / kGiB) + " ";
      return out + "lat=" + std::to_string(latency);
    };
    std::string out = std::to_string(engine.get_host_count()) + " " + std::to_string(engine.get_link_count());
    if (gpus > 1) out += " | " + describe("node0.gpu0", "node0.gpu1");
    if (gpus > 8) out += " | " + describe("nic0", "nic" + std::to_string(gpus - 1));
    return out;
  });
  return child.ok ? child.value : "FAILED: " + child.value;
}

TEST(PlatformXml, LoadsInSimgridWithTheExpectedRoutes) {
  EXPECT_EQ(load_in_child(write_file("p1.xml", platform_xml(spec_of(1))), 8),
            "16 33 | intra.node0.gpu0_UP@900.000000 intra.node0.gpu1_DOWN@900.000000 lat=0.000000");
  EXPECT_EQ(load_in_child(write_file("p2.xml", platform_xml(spec_of(2))), 16),
            "32 65 | intra.node0.gpu0_UP@900.000000 intra.node0.gpu1_DOWN@900.000000 lat=0.000000"
            " | inter.nic0_UP@25.000000 inter.nic15_DOWN@25.000000 lat=0.000000");
  const std::string r64 = load_in_child(write_file("p64.xml", platform_xml(spec_of(64))), 512);
  EXPECT_EQ(r64.substr(0, 10), "1024 2049 ") << r64;
}

TEST(PlatformXml, LargePlatformsLoadQuickly) {
  for (int64_t nodes : {512, 2048}) {
    const std::string xml = platform_xml(spec_of(nodes));
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(check_error(xml, nodes * 8), "");
    const double check_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::printf("[ platform ] %lld GPUs: %.2f MB of XML, checked in %.3f s\n", static_cast<long long>(nodes * 8),
                static_cast<double>(xml.size()) / 1e6, check_s);
    const std::string r = load_in_child(write_file("big.xml", xml), nodes * 8);
    EXPECT_EQ(r.substr(0, r.find(' ')), std::to_string(nodes * 16)) << r;
  }
}

// ---- broken platforms: one-line errors with the element and its line ----

TEST(PlatformCheck, DuplicateLinkName) {
  const std::string xml = platform_xml(spec_of(1));
  const std::string bad = replace_once(xml, "<link id=\"intra.node0.gpu1\"", "<link id=\"intra.node0.gpu0\"");
  const int first = line_of(xml, "<link id=\"intra.node0.gpu0\"");
  const int second = line_of(xml, "<link id=\"intra.node0.gpu1\"");
  EXPECT_EQ(check_error(bad, 8), "p.xml: line " + std::to_string(second) +
                                     ": <link id=\"intra.node0.gpu0\">: duplicate link name \"intra.node0.gpu0\": "
                                     "already used by <link id=\"intra.node0.gpu0\"> at line " +
                                     std::to_string(first));
}

TEST(PlatformCheck, ZeroBandwidth) {
  const std::string xml = platform_xml(spec_of(2));
  const std::string bad =
      replace_once(xml, "<link id=\"inter.nic3\" bandwidth=\"25GiBps\"", "<link id=\"inter.nic3\" bandwidth=\"0GBps\"");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<link id=\"inter.nic3\"")) +
                                      ": <link id=\"inter.nic3\">: bandwidth \"0GBps\" is outside [1kBps, 1EBps]");
}

// 1e-300Bps parsed, passed, and left 2163 of 2403 tasks unfinished (exit 3): refused as the user's error.
TEST(PlatformCheck, AbsurdlySmallBandwidth) {
  const std::string xml = platform_xml(spec_of(2));
  const std::string bad = replace_once(xml, "<link id=\"inter.nic3\" bandwidth=\"25GiBps\"",
                                       "<link id=\"inter.nic3\" bandwidth=\"1e-300Bps\"");
  EXPECT_EQ(check_error(bad, 16), "p.xml: line " + std::to_string(line_of(xml, "<link id=\"inter.nic3\"")) +
                                      ": <link id=\"inter.nic3\">: bandwidth \"1e-300Bps\" is outside [1kBps, 1EBps]");
}

// 500 nested zones passed our check and then crashed SimGrid's parser (SIGSEGV).
TEST(PlatformCheck, DeepNestingIsRefusedBeforeSimGridSeesIt) {
  std::string xml = "<?xml version='1.0'?>\n<platform version=\"4.1\">\n";
  for (int i = 0; i < 500; ++i) xml += "<zone id=\"z" + std::to_string(i) + "\" routing=\"Full\">\n";
  for (int i = 0; i < 500; ++i) xml += "</zone>\n";
  xml += "</platform>\n";
  EXPECT_EQ(check_error(xml, 2), "p.xml: line 66: <zone id=\"z63\">: nested deeper than 64 elements (SimGrid's parser "
                                 "fails on deep nesting)");
}

TEST(PlatformCheck, UnknownBandwidthUnit) {
  const std::string xml = platform_xml(spec_of(1));
  const std::string bad = replace_once(xml, "bandwidth=\"900GiBps\"", "bandwidth=\"12 furlongs\"");
  EXPECT_EQ(check_error(bad, 8),
            "p.xml: line " + std::to_string(line_of(xml, "bandwidth=\"900GiBps\"")) +
                ": <link id=\"intra.node0.gpu0\">: bandwidth: unknown unit \" furlongs\" in \"12 furlongs\" (SimGrid "
                "units: Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, or the same with bps for bits; no "
                "space between number and unit)");
}

const char* kFullZone = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Full">
    <host id="node0.gpu0" speed="1Pf"/>
    <host id="node0.gpu1" speed="1Pf"/>
    <link id="l01" bandwidth="100GBps" latency="0s"/>
    <link id="l10" bandwidth="100GBps" latency="0s"/>
    <route src="node0.gpu0" dst="node0.gpu1" symmetrical="NO"><link_ctn id="l01"/></route>
    <route src="node0.gpu1" dst="node0.gpu0" symmetrical="NO">
      <link_ctn id="l10"/>
    </route>
  </zone>
</platform>
)";

TEST(PlatformCheck, HandWrittenFullZoneIsAccepted) {
  EXPECT_EQ(check_error(kFullZone, 2, 2), "");
  EXPECT_EQ(load_in_child(write_file("full.xml", kFullZone), 2), "2 3 | l01@93.132257 lat=0.000000");
}

TEST(PlatformCheck, RouteNamingAnUnknownLink) {
  const std::string bad = replace_once(kFullZone, "<link_ctn id=\"l10\"/>", "<link_ctn id=\"l11\"/>");
  EXPECT_EQ(check_error(bad, 2, 2),
            "p.xml: line 11: <link_ctn id=\"l11\">: unknown link \"l11\" (did you mean \"l01\"?)");
}

TEST(PlatformCheck, MissingOrDuplicateRoutesInRoutedZones) {
  const std::string one_way = replace_once(kFullZone, "<link_ctn id=\"l10\"/>", "");
  EXPECT_EQ(check_error(one_way, 2, 2),
            "p.xml: line 10: <route src=\"node0.gpu1\">: a route needs at least one <link_ctn>");
  const std::string missing = replace_once(
      kFullZone,
      "<route src=\"node0.gpu1\" dst=\"node0.gpu0\" symmetrical=\"NO\">\n      <link_ctn id=\"l10\"/>\n    </route>",
      "");
  EXPECT_EQ(
      check_error(missing, 2, 2),
      "p.xml: line 6: <host id=\"node0.gpu1\">: no route from node0.gpu1 to node0.gpu0 in <zone id=\"world\"> (these "
      "hosts exchange data; SimGrid aborts on a missing route)");
  const std::string twice = replace_once(kFullZone, "dst=\"node0.gpu1\" symmetrical=\"NO\"", "dst=\"node0.gpu1\"");
  EXPECT_EQ(
      check_error(twice, 2, 2),
      "p.xml: line 10: <route src=\"node0.gpu1\">: a route from node0.gpu1 to node0.gpu0 already exists (line 9; "
      "routes are symmetrical unless symmetrical=\"NO\")");
}

TEST(PlatformCheck, FloydZoneThroughARouterIsAccepted) {
  const std::string floyd = R"(<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="world" routing="Floyd">
    <host id="node0.gpu0" speed="1Pf"/>
    <host id="node0.gpu1" speed="1Pf"/>
    <router id="switch"/>
    <link id="a" bandwidth="100GBps" latency="0s"/>
    <link id="b" bandwidth="50GBps" latency="0s"/>
    <route src="node0.gpu0" dst="switch"><link_ctn id="a"/></route>
    <route src="switch" dst="node0.gpu1"><link_ctn id="b"/></route>
  </zone>
</platform>
)";
  EXPECT_EQ(check_error(floyd, 2, 2), "");
  EXPECT_EQ(load_in_child(write_file("floyd.xml", floyd), 2), "2 3 | a@93.132257 b@46.566129 lat=0.000000");
  const std::string one_way = replace_once(floyd, "dst=\"switch\">", "dst=\"switch\" symmetrical=\"NO\">");
  EXPECT_EQ(check_error(one_way, 2, 2),
            "p.xml: line 6: <host id=\"node0.gpu1\">: no route from node0.gpu1 to node0.gpu0 in <zone id=\"world\"> "
            "(these hosts exchange data; SimGrid aborts on a missing route)");
}

TEST(PlatformCheck, TooFewHosts) {
  EXPECT_EQ(check_error(platform_xml(spec_of(1)), 12),
            "p.xml: line " + std::to_string(line_of(platform_xml(spec_of(1)), "<platform")) +
                ": <platform>: too few GPU hosts: world size 12 (8 GPUs per node) needs node0.gpu0 .. node1.gpu3; "
                "4 missing, the first is node1.gpu0");
}

TEST(PlatformCheck, MalformedTag) {
  const std::string xml = platform_xml(spec_of(1));
  const int line = line_of(xml, "<host id=\"node0.gpu3\"");
  EXPECT_EQ(check_error(
                replace_once(xml, "<host id=\"node0.gpu3\" speed=\"1Pf\"/>", "<host id=\"node0.gpu3\" speed=1Pf/>"), 8),
            "p.xml: line " + std::to_string(line) + ": <host>: the value of attribute speed must be quoted");
  EXPECT_EQ(
      check_error(replace_once(xml, "<host id=\"node0.gpu3\" speed=\"1Pf\"/>", "<host id=\"node0.gpu3\" speed=\"1Pf\""),
                  8),
      "p.xml: line " + std::to_string(line) + ": <host>: tag is not closed by '>' or '/>'");
  EXPECT_EQ(check_error(replace_once(xml, "</zone>\n  </zone>", "</zone>\n  </zon>"), 8),
            "p.xml: line " + std::to_string(line_of(xml, "  </zone>\n</platform>")) +
                ": </zon>: does not match <zone id=\"cluster\"> opened at line " +
                std::to_string(line_of(xml, "<zone id=\"cluster\"")));
}

TEST(PlatformCheck, OtherMistakesNameTheElement) {
  const std::string xml = platform_xml(spec_of(2));
  const int nic3 = line_of(xml, "<host_link id=\"nic3\"");
  EXPECT_EQ(check_error(replace_once(xml, "up=\"inter.nic3_UP\"", "up=\"inter.nic3\""), 16),
            "p.xml: line " + std::to_string(nic3) +
                ": <host_link id=\"nic3\">: link \"inter.nic3\" is SPLITDUPLEX: name one direction, "
                "\"inter.nic3_UP\" or \"inter.nic3_DOWN\"");
  EXPECT_EQ(
      check_error(replace_once(xml, "<host_link id=\"nic3\" up=\"inter.nic3_UP\" down=\"inter.nic3_DOWN\"/>", ""), 16),
      "p.xml: line " + std::to_string(line_of(xml, "<host id=\"nic3\"")) +
          ": <host id=\"nic3\">: has no <host_link>: in a Cluster zone a host without one has no route "
          "(SimGrid aborts)");
  EXPECT_EQ(check_error(replace_once(xml, "<host id=\"nic3\" speed", "<host id=\"nic3\" sped"), 16),
            "p.xml: line " + std::to_string(line_of(xml, "<host id=\"nic3\"")) +
                ": <host id=\"nic3\">: unknown attribute sped (did you mean \"speed\"?) (allowed: id, speed, core, "
                "coordinates, pstate)");
  EXPECT_EQ(check_error(replace_once(xml, "900GiBps\" latency=\"0s\"", "900GiBps\" latency=\"-1us\""), 16),
            "p.xml: line " + std::to_string(line_of(xml, "900GiBps\" latency=\"0s\"")) +
                ": <link id=\"intra.node0.gpu0\">: latency \"-1us\" is < 0");
  EXPECT_EQ(check_error(replace_once(xml, "<host id=\"node1.gpu2\"", "<host id=\"node1.gpu1\""), 16),
            "p.xml: line " + std::to_string(line_of(xml, "<host id=\"node1.gpu2\"")) +
                ": <host id=\"node1.gpu1\">: duplicate name \"node1.gpu1\": already used by <host "
                "id=\"node1.gpu1\"> at line " +
                std::to_string(line_of(xml, "<host id=\"node1.gpu1\"")));
}

TEST(PlatformCheck, DoctypeIsRequired) {
  const std::string xml = platform_xml(spec_of(1));
  const std::string doctype = "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">";
  const std::string expected = "p.xml: line " + std::to_string(line_of(xml, "<platform")) +
                               ": <platform>: the file must start with " + doctype + " (SimGrid's parser requires it)";
  EXPECT_EQ(check_error(replace_once(xml, doctype, ""), 8), expected);
  EXPECT_EQ(check_error(replace_once(xml, "simgrid.dtd\"", "other.dtd\""), 8), expected);
  EXPECT_EQ(check_error(replace_once(xml, "<?xml version='1.0'?>", "<?xml versio='1.0'?>"), 8),
            "p.xml: line 1: <?xml: malformed XML declaration (write <?xml version='1.0'?>)");
}

// Whatever the check accepts, SimGrid must load without aborting, with a route between the hosts that talk.
TEST(PlatformCheck, EveryAcceptedMutantLoadsInSimgrid) {
  PlatformSpec small = spec_of(2);
  small.gpus_per_node = 2;
  std::string base = platform_xml(small);
  base.erase(base.find("<!--\n"), base.find("-->\n") + 4 - base.find("<!--\n"));  // mutate elements, not prose
  const char* snippets[] = {"<",
                            ">",
                            "/>",
                            "\"",
                            "=",
                            " ",
                            "_UP",
                            "zone",
                            "0",
                            "GBps",
                            "</zone>",
                            "&",
                            "<route src=\"nic0\" dst=\"nic1\"/>",
                            "<backbone id=\"b\" bandwidth=\"1GBps\" latency=\"0s\"/>"};
  std::mt19937_64 rng(2024);
  int accepted = 0;
  for (int i = 0; i < 1500; ++i) {
    std::string x = base;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const size_t at = rng() % x.size();
      switch (rng() % 3) {
        case 0:
          x.erase(at, 1 + rng() % 8);
          break;
        case 1:
          x.insert(at, snippets[rng() % std::size(snippets)]);
          break;
        default:
          x.insert(at, x.substr(rng() % x.size(), rng() % 60));
          break;
      }
    }
    if (!check_error(x, 4, 2).empty()) continue;
    ++accepted;
    const std::string path = write_file("mutant.xml", x);
    const auto child = testing::in_child_process([&] {
      int argc = 2;
      char arg0[] = "platform_test", arg1[] = "--log=root.thres:critical";
      char* argv[] = {arg0, arg1, nullptr};
      sg4::Engine engine(&argc, argv);
      engine.load_platform(path);
      engine.seal_platform();
      for (const auto& [a, b] :
           {std::pair{"node0.gpu0", "node0.gpu1"}, {"node1.gpu1", "node1.gpu0"}, {"nic0", "nic3"}}) {
        std::vector<sg4::Link*> links;
        double latency = 0;
        engine.host_by_name(a)->route_to(engine.host_by_name(b), links, &latency);
        if (links.empty()) return std::string("no route ") + a + " -> " + b;
      }
      return std::string("ok");
    });
    EXPECT_EQ(child.value, "ok") << x;
  }
  EXPECT_GT(accepted, 20);
}

TEST(PlatformCheck, MissingFileIsAConfigError) {
  try {
    check_platform_xml("/nonexistent/p.xml", 8, 8);
    FAIL();
  } catch (const common::ConfigError& e) {
    EXPECT_STREQ(e.what(), "/nonexistent/p.xml: cannot open the platform file");
  }
}

}  // namespace
}  // namespace simumax::platform
