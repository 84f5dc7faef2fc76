// The inter-node part of platform_xml: NIC hosts on one switch, or under fat-tree / rail leaf switches.
#include <algorithm>
#include <string>
#include <vector>

#include "engine/platform/platform_xml.hpp"
#include "engine/platform/platform_xml_parts.hpp"

namespace simumax::platform::detail {

namespace {

// The NIC links of `node` (all its NICs', or only GPU `rail`'s; with one NIC per node, the node's one link).
void append_node_links(std::string& out, int indent, const PlatformSpec& spec, int64_t node, int64_t rail,
                       const std::string& bandwidth) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  auto link = [&](const std::string& id) {
    out += pad + "<link id=\"" + id + "\" bandwidth=\"" + bandwidth +
           "\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  };
  const int64_t gpn = spec.gpus_per_node;
  if (spec.nic_per_node) return link("inter.node" + std::to_string(node));
  for (int64_t g = rail >= 0 ? rail : 0; g < (rail >= 0 ? rail + 1 : gpn); ++g) {
    link("inter." + nic_host_name(node * gpn + g));
  }
}

// The NIC hosts of `node` (all of them, or only GPU `rail`'s), indented, each tied by a <host_link> to its link
// of append_node_links (the single switch). With one NIC per node, its GPUs' NIC hosts share one link: the
// simulator keeps one NIC endpoint per rank, whatever the hardware.
void append_node_hosts(std::string& out, int indent, const PlatformSpec& spec, int64_t node, int64_t rail) {
  const int64_t gpn = spec.gpus_per_node;
  const std::string pad(static_cast<size_t>(indent), ' ');
  out += node_comment(indent, node, gpn, rail);
  for (int64_t g = rail >= 0 ? rail : 0; g < (rail >= 0 ? rail + 1 : gpn); ++g) {
    const std::string host = nic_host_name(node * gpn + g);
    const std::string link = spec.nic_per_node ? "inter.node" + std::to_string(node) : "inter." + host;
    out += pad + "<host id=\"" + host + "\" speed=\"1Pf\"/>\n";
    out += pad + "<host_link id=\"" + host + "\" up=\"" + link + "_UP\" down=\"" + link + "_DOWN\"/>\n";
  }
}

// The NIC hosts of `node` (all of them, or only GPU `rail`'s) inside a block's zone, then (`routes`) each one's
// <route> to its leaf switch `sw` over its link of append_node_links: SimGrid wants a zone's routes after all
// its hosts. With one NIC per node, its GPUs' NIC hosts share one link.
void append_block_hosts(std::string& out, const PlatformSpec& spec, int64_t node, int64_t rail, const std::string& sw,
                        bool routes) {
  const int64_t gpn = spec.gpus_per_node;
  if (!routes) out += node_comment(8, node, gpn, rail);
  for (int64_t g = rail >= 0 ? rail : 0; g < (rail >= 0 ? rail + 1 : gpn); ++g) {
    const std::string host = nic_host_name(node * gpn + g);
    const std::string link = spec.nic_per_node ? "inter.node" + std::to_string(node) : "inter." + host;
    if (!routes) {
      out += "        <host id=\"" + host + "\" speed=\"1Pf\"/>\n";
    } else {
      out += "        <route src=\"" + host + "\" dst=\"" + sw + "\"><link_ctn id=\"" + link +
             "\" direction=\"UP\"/></route>\n";
    }
  }
}

// The comment that opens a leaf's part of the XML.
std::string leaf_comment(const FabricLayout& layout, const Leaf& leaf, const std::string& what) {
  return "      <!-- leaf switch \"" + leaf.name + "\": node" + (leaf.nodes.size() > 1 ? "s " : " ") +
         std::to_string(leaf.nodes.front()) +
         (leaf.nodes.size() > 1 ? ".." + std::to_string(leaf.nodes.back()) : std::string()) +
         (leaf.rail >= 0 ? ", GPU " + std::to_string(leaf.rail) + " of each" : std::string()) + "; " +
         std::to_string(layout.ports_per_leaf) + " NIC ports, " + what + " -->\n";
}

// A leaf's NIC links sit in zone "inter_node", before the leaf's Cluster zone, which holds only its router and
// NIC hosts: SimGrid 3.32 looks every name up zone by zone (creating a link or host checks that the name is
// new, a <host_link> finds its host and links), so links inside 512 leaves made the load quadratic.
void append_leaf(std::string& out, const PlatformSpec& spec, const FabricLayout& layout, const Leaf& leaf,
                 const std::string& bandwidth) {
  out += leaf_comment(layout, leaf, "their links, then its zone");
  for (int64_t node : leaf.nodes) append_node_links(out, 6, spec, node, leaf.rail, bandwidth);
  out += "      <zone id=\"" + leaf.name + "\" routing=\"Cluster\">\n";
  out += "        <router id=\"" + leaf.name + ".switch\"/>\n";
  for (int64_t node : leaf.nodes) append_node_hosts(out, 8, spec, node, leaf.rail);
  out += "      </zone>\n";
}

// A block (fabric.hpp's leaf_blocks, past kMaxLeafZones leaves) as one DijkstraCache zone: each leaf a router
// "<leaf>.switch" with its NIC hosts routed to it and its uplink trunk routed to the block's gateway "<block>.gw",
// which reaches the spine over "<block>.spine_up" and is reached from it over "<block>.spine_down". SimGrid 3.32
// loads and seals a platform in O(zones x hosts) (docs/simgrid.md): a zone per leaf made 131,072 GPUs unloadable;
// blocks are kLeavesPerBlock times fewer, with the same links on every route. Links sit in "inter_node" before
// the zone: SimGrid looks names up zone by zone.
void append_block(std::string& out, const PlatformSpec& spec, const FabricLayout& layout, const LeafBlock& block,
                  const std::string& bandwidth) {
  const std::string& name = block.name;
  double uplinks_bytes_per_s = 0;
  for (size_t index : block.leaves) {
    const Leaf* leaf = &layout.leaves[index];
    out += leaf_comment(layout, *leaf, "their links and its uplink trunk");
    for (int64_t node : leaf->nodes) append_node_links(out, 6, spec, node, leaf->rail, bandwidth);
    out += "      <link id=\"" + leaf->name + ".uplink\" bandwidth=\"" + format_bandwidth(leaf->uplink_bytes_per_s) +
           "\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    uplinks_bytes_per_s += leaf->uplink_bytes_per_s;
  }
  // Twice the block's uplinks together: every flow on it also crosses its leaf's uplink, so their sum stays at
  // half of it or less and it never limits. SHARED, not FATPIPE: SimGrid's solver rescans a FATPIPE link's
  // every flow each time it fixes one of them (quadratic in a block's flows). One link each way: a starting or
  // ending flow re-solves every flow that shares a link with it, and one link for both directions would chain
  // all the blocks' flows together.
  for (const char* way : {"up", "down"}) {
    out += "      <link id=\"" + name + ".spine_" + way + "\" bandwidth=\"" +
           format_bandwidth(2 * uplinks_bytes_per_s) + "\" latency=\"0s\"/>\n";
  }
  out += "      <zone id=\"" + name + "\" routing=\"DijkstraCache\">\n";
  out += "        <router id=\"" + name + ".gw\"/>\n";
  for (bool routes : {false, true}) {
    for (size_t index : block.leaves) {
      const Leaf* leaf = &layout.leaves[index];
      const std::string sw = leaf->name + ".switch";
      if (!routes) out += "        <router id=\"" + sw + "\"/>\n";
      for (int64_t node : leaf->nodes) append_block_hosts(out, spec, node, leaf->rail, sw, routes);
      if (routes) {
        out += "        <route src=\"" + sw + "\" dst=\"" + name + ".gw\"><link_ctn id=\"" + leaf->name +
               ".uplink\" direction=\"UP\"/></route>\n";
      }
    }
  }
  out += "      </zone>\n";
}

void append_leaves(std::string& out, const PlatformSpec& spec, const FabricLayout& layout,
                   const std::string& bandwidth) {
  out += "    <zone id=\"inter_node\" routing=\"Floyd\">\n";
  // First: SimGrid's parser reads a zone that opens with a <link> as a zone of hosts, and then refuses <zone>.
  out += "      <!-- the spine tier, non-blocking: traffic between leaves is limited by their uplinks -->\n";
  out += "      <zone id=\"spine\" routing=\"Cluster\">\n        <router id=\"spine.switch\"/>\n      </zone>\n";
  const std::vector<LeafBlock> blocks = leaf_blocks(spec, layout);
  if (blocks.empty()) {  // a zone per leaf
    for (const Leaf& leaf : layout.leaves) append_leaf(out, spec, layout, leaf, bandwidth);
    out += "      <!-- each leaf's uplinks to all spine switches as one trunk: " +
           std::to_string(layout.ports_per_leaf) +
           " ports x " + bandwidth + " / oversubscription " + shortest(spec.oversubscription) + " -->\n";
    for (const Leaf& leaf : layout.leaves) {
      out += "      <link id=\"" + leaf.name + ".uplink\" bandwidth=\"" + format_bandwidth(leaf.uplink_bytes_per_s) +
             "\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
    }
    for (const Leaf& leaf : layout.leaves) {
      out += "      <zoneRoute src=\"" + leaf.name + "\" dst=\"spine\" gw_src=\"" + leaf.name +
             ".switch\" gw_dst=\"spine.switch\"><link_ctn id=\"" + leaf.name +
             ".uplink\" direction=\"UP\"/></zoneRoute>\n";
    }
  }
  for (const LeafBlock& block : blocks) append_block(out, spec, layout, block, bandwidth);
  for (const LeafBlock& block : blocks) {
    out += "      <zoneRoute src=\"" + block.name + "\" dst=\"spine\" gw_src=\"" + block.name +
           ".gw\" gw_dst=\"spine.switch\" symmetrical=\"NO\"><link_ctn id=\"" + block.name +
           ".spine_up\"/></zoneRoute>\n";
    out += "      <zoneRoute src=\"spine\" dst=\"" + block.name + "\" gw_src=\"spine.switch\" gw_dst=\"" +
           block.name + ".gw\" symmetrical=\"NO\"><link_ctn id=\"" + block.name + ".spine_down\"/></zoneRoute>\n";
  }
  out += "    </zone>\n";
}

// The XML header's paragraph on a zone per leaf switch.
std::string per_leaf_description(const PlatformSpec& spec, const FabricLayout& layout) {
  std::string text;
  text += std::string("    * zone \"inter_node\" (routing Floyd, over ") + std::to_string(layout.leaves.size() + 1) +
          " zones): one Cluster zone per leaf switch, holding its NIC hosts\n" +
          (spec.topology == Topology::kRail
               ? "      (rail-optimised: leaf \"pod{p}.rail{g}\" holds NIC g of every node of pod p, " +
                     std::to_string(layout.nodes_per_leaf) + " nodes per pod)"
               : "      (fat-tree: leaf \"leaf{k}\" holds every NIC of nodes " + std::to_string(layout.nodes_per_leaf) +
                     "k .. " + std::to_string(layout.nodes_per_leaf) + "k+" +
                     std::to_string(layout.nodes_per_leaf - 1) + ")") +
          R"(, each with its own SPLITDUPLEX link
      (declared in "inter_node" just before the leaf's zone: SimGrid 3.32 looks names up zone by zone, so links
      inside hundreds of leaves make loading quadratic), and a router "<leaf>.switch" through which traffic leaves the leaf. Zone "spine" holds one router
      for the whole spine tier. Each leaf reaches it through one <zoneRoute> over its trunk "<leaf>.uplink":
      all the leaf's uplinks to all spine switches as one link, since ECMP spreads flows over them (one link
      per spine with a fixed spine per pair of leaves would pile a ring's flows onto one cable).
      Two NICs under one leaf use only their own links; between leaves a transfer also crosses the source
      leaf's uplink (_UP) and the destination leaf's (_DOWN).
    * Uplink bandwidth = NIC ports per leaf x NIC bandwidth / oversubscription. Lower it to oversubscribe
      a leaf, raise it for full bisection; the spine tier itself never limits.
)";
  return text;
}

}  // namespace

void append_inter_node(std::string& out, const PlatformSpec& spec, const FabricLayout& layout) {
  const std::string bandwidth = format_bandwidth(layout.port_bytes_per_s);
  if (spec.topology != Topology::kSingleSwitch) return append_leaves(out, spec, layout, bandwidth);
  out += "    <zone id=\"inter_node\" routing=\"Cluster\">\n";
  for (int64_t node = 0; node < spec.nodes; ++node) {
    append_node_links(out, 6, spec, node, -1, bandwidth);
    append_node_hosts(out, 6, spec, node, -1);
  }
  out += "    </zone>\n";
}

std::string fabric_description(const PlatformSpec& spec, const FabricLayout& layout) {
  if (spec.nic_bytes_per_s == 0) return "";
  std::string text;
  if (spec.nic_per_node) {
    text += R"(    * One NIC per node: the nic{r} hosts of a node all use that node's link "inter.node{n}", so its
      GPUs share the node's bandwidth (gpus per node x the per-GPU share of the system config).
)";
  }
  if (spec.topology == Topology::kSingleSwitch) {
    return text + R"(    * zone "inter_node" (Cluster): every NIC has one SPLITDUPLEX link to a single non-blocking IB switch.
      To model an oversubscribed switch, add to that zone, e.g.
        <backbone id="ib_core" bandwidth="400GiBps" latency="0s"/>
      (every inter-node transfer then also crosses that shared link), or generate a fat-tree.
)";
  }
  const size_t blocks = leaf_blocks(spec, layout).size();
  if (blocks == 0) return text + per_leaf_description(spec, layout);
  text += std::string("    * zone \"inter_node\" (routing Floyd, over ") +
          std::to_string(blocks + 1) + " zones): the leaf switches in blocks of up to " +
          std::to_string(kLeavesPerBlock) + ", one DijkstraCache zone each\n" +
          (spec.topology == Topology::kRail
               ? "      (rail-optimised: leaf \"pod{p}.rail{g}\" holds NIC g of every node of pod p, " +
                     std::to_string(layout.nodes_per_leaf) + " nodes per pod; block \"rail{g}.block{j}\" holds rail g\n"
                     "      of pods 8j .. 8j+7)"
               : "      (fat-tree: leaf \"leaf{k}\" holds every NIC of nodes " + std::to_string(layout.nodes_per_leaf) +
                     "k .. " + std::to_string(layout.nodes_per_leaf) + "k+" +
                     std::to_string(layout.nodes_per_leaf - 1) + "; block \"block{j}\" holds leaves 8j .. 8j+7)") +
          R"(. In its block a leaf is a router "<leaf>.switch";
      each of its NIC hosts has its own SPLITDUPLEX link and a <route> to the switch over it, and the
      switch a <route> to the block's gateway "<block>.gw" over its trunk "<leaf>.uplink": all the leaf's
      uplinks to all spine switches as one link, since ECMP spreads flows over them (one link per spine
      with a fixed spine per pair of leaves would pile a ring's flows onto one cable). Zone "spine" holds
      one router for the whole spine tier; a block reaches it through a <zoneRoute> over "<block>.spine_up"
      and is reached from it through one over "<block>.spine_down", each as fast as twice the block's
      uplinks together: every flow on them also crosses its leaf's uplink, so they never limit (SimGrid
      refuses an empty route). Two NICs under one leaf use only their own links; between leaves a transfer
      also crosses the source leaf's uplink (_UP) and the destination leaf's (_DOWN).
    * Why blocks, not a zone per leaf: SimGrid 3.32 loads and seals a platform in O(zones x hosts), and 4,096
      leaf zones made 131,072 GPUs unloadable. Rail blocks hold one rail so that rail-aligned traffic stays
      apart in SimGrid's solver. Links are declared in "inter_node", before their block's zone, because
      SimGrid looks names up zone by zone.
    * Uplink bandwidth = NIC ports per leaf x NIC bandwidth / oversubscription. Lower it to oversubscribe
      a leaf, raise it for full bisection; the spine tier itself never limits.
)";
  return text;
}

}  // namespace simumax::platform::detail
