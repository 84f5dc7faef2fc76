#include "engine/platform/platform_xml.hpp"

#include <charconv>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"
#include "engine/platform/fabric.hpp"
#include "engine/platform/platform_xml_parts.hpp"

namespace simumax::platform {

namespace detail {

std::string shortest(double v) {
  char buf[400];
  const auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, result.ptr);
}

void append_endpoint(std::string& out, int indent, const std::string& host, const std::string& link,
                     const std::string& bandwidth) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  out += pad + "<host id=\"" + host + "\" speed=\"1Pf\"/>\n";
  out += pad + "<link id=\"" + link + "\" bandwidth=\"" + bandwidth +
         "\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  out += pad + "<host_link id=\"" + host + "\" up=\"" + link + "_UP\" down=\"" + link + "_DOWN\"/>\n";
}

std::string node_comment(int indent, int64_t node, int64_t gpn, int64_t rail) {
  const std::string pad(static_cast<size_t>(indent), ' ');
  if (rail >= 0) {
    return pad + "<!-- node " + std::to_string(node) + ": job rank " + std::to_string(node * gpn + rail) +
           " (GPU " + std::to_string(rail) + ") -->\n";
  }
  return pad + "<!-- node " + std::to_string(node) + ": job ranks " + std::to_string(node * gpn) + ".." +
         std::to_string(node * gpn + gpn - 1) + " -->\n";
}

}  // namespace detail

namespace {

std::string seconds_text(double s) { return detail::shortest(s * 1e6) + " us"; }

std::string summary_line(const PlatformSpec& spec, const FabricLayout& layout) {
  std::string line = std::to_string(spec.nodes) + " node(s) x " + std::to_string(spec.gpus_per_node) +
                     " GPUs = " + std::to_string(spec.gpus()) + " GPUs";
  if (spec.nic_bytes_per_s == 0) return line + ", no inter-node fabric";
  line += std::string(", ") + (spec.nic_per_node ? "one NIC per node" : "one NIC per GPU") + ", " +
          to_string(spec.topology);
  if (spec.topology != Topology::kSingleSwitch) {
    line += " (" + std::to_string(layout.leaves.size()) + " leaf switches of " + std::to_string(layout.ports_per_leaf) +
            " NIC ports, oversubscription " + detail::shortest(spec.oversubscription) + ":1)";
  }
  return line;
}

void append_header(std::string& out, const PlatformSpec& spec, const FabricLayout& layout) {
  const int64_t gpn = spec.gpus_per_node;
  out += "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!--\n";
  out += "  simumax-sim platform: " + summary_line(spec, layout) + ".\n";
  out += "  Generated from " + (spec.source.empty() ? std::string("a PlatformSpec") : spec.source) + ".\n";
  out += R"(
  NAMING CONVENTION (the simulator finds ranks by these names: keep them when you edit):
    node{n}.gpu{g}  GPU g of node n, job rank r = n * )" +
         std::to_string(gpn) + R"( + g. Endpoint of intra-node traffic.
    nic{r}          the NIC of job rank r (the same GPU). Endpoint of inter-node traffic.
  A transfer between two GPUs of one node goes node{n}.gpu{a} -> node{n}.gpu{b}; between nodes it goes
  nic{r} -> nic{s}. Nothing ever goes from a zone to the other, so the outer zone has no routes.

  STRUCTURE (and why):
    * Two endpoints per GPU. SimGrid's nested zones route all of a node's outside traffic through one
      gateway, so they cannot give each GPU its own NIC; a second host per GPU for its NIC can.
    * Few zones, whatever the cluster size (at most one per leaf switch). One zone per node makes SimGrid 3.32
      seal the platform in O(zones x hosts) (13 to 36 s at 16k GPUs).
    * zone "intra_node" (routing Cluster = a star): every GPU has one SPLITDUPLEX link to the star centre,
      <id>_UP towards it and <id>_DOWN back. The centre stands for each node's NVSwitch (or PCIe switch):
      it is non-blocking and only ever carries traffic between GPUs of the same node, so one centre for
      all nodes is exact.
)";
  out += detail::fabric_description(spec, layout);
  out += R"(
  BANDWIDTH: intra-node link = the system config's intra tier; NIC = inter_node gbps / GPUs per node
  (SimuMax's inter-node tier is per node: its p2p formula divides the bandwidth by num_per_node).
  A transfer carries the bytes the cost model priced at these config bandwidths on one non-blocking switch,
  so on the platform as generated a lone transfer takes exactly the cost model's time. Edit a bandwidth
  (halve the inter.* links: "IB halved") and transfers over it take longer; links shared by concurrent
  transfers (oversubscribed uplinks) slow them down.

  LATENCY is 0 on every link on purpose: the cost model's latency is paid by a timer before the
  transfers, because SimGrid's CM02 model shares a link in proportion to 1/(route latency).
  From the system config: intra-node latency )" +
         seconds_text(spec.nvlink_latency_s) + ", inter-node latency " + seconds_text(spec.nic_latency_s) + R"(.
  Host speeds are unused (compute runs as timers).

  simumax-sim checks an edited file before SimGrid reads it (SimGrid aborts on some mistakes) and names
  the line of the first problem.
-->
)";
}

}  // namespace

std::string format_bandwidth(double bytes_per_s) {
  const double gib = bytes_per_s / common::kGiB;  // exact: a power-of-two division
  const std::string in_gib = detail::shortest(gib);
  const std::string in_bytes = detail::shortest(bytes_per_s);
  // Prefer GiBps (how SimuMax configs are written) unless plain bytes are shorter.
  return in_gib.size() <= in_bytes.size() + 2 ? in_gib + "GiBps" : in_bytes + "Bps";
}

std::string platform_xml(const PlatformSpec& spec) {
  if (spec.nodes < 1 || spec.gpus_per_node < 1 || !(spec.nvlink_bytes_per_s > 0) ||
      (spec.nodes > 1 && !(spec.nic_bytes_per_s > 0))) {
    throw common::InternalError("platform_xml: invalid PlatformSpec (nodes " + std::to_string(spec.nodes) +
                                ", gpus_per_node " + std::to_string(spec.gpus_per_node) + ")");
  }
  const FabricLayout layout = fabric_layout(spec);
  const int64_t gpn = spec.gpus_per_node;
  std::string out;
  out.reserve(static_cast<size_t>(spec.gpus()) * 400 + 8192);
  append_header(out, spec, layout);
  out += "<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"None\">\n";
  out += "    <zone id=\"intra_node\" routing=\"Cluster\">\n";
  const std::string nvlink_bw = format_bandwidth(spec.nvlink_bytes_per_s);
  for (int64_t r = 0; r < spec.gpus(); ++r) {
    if (r % gpn == 0) out += detail::node_comment(6, r / gpn, gpn);
    const std::string host = gpu_host_name(r, gpn);
    detail::append_endpoint(out, 6, host, "intra." + host, nvlink_bw);
  }
  out += "    </zone>\n";
  if (spec.nic_bytes_per_s > 0) detail::append_inter_node(out, spec, layout);
  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace simumax::platform
