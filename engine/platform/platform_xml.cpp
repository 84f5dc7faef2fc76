#include "engine/platform/platform_xml.hpp"

#include <charconv>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"

namespace simumax::platform {

namespace {

// The shortest fixed-point spelling of v that reads back bit-exactly ("900", "11.641532182693481").
std::string shortest(double v) {
  char buf[400];
  const auto result = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed);
  return std::string(buf, result.ptr);
}

std::string seconds_text(double s) { return shortest(s * 1e6) + " us"; }

void append_header(std::string& out, const PlatformSpec& spec) {
  const int64_t gpn = spec.gpus_per_node;
  out += "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n<!--\n";
  out += "  simumax-sim platform: " + std::to_string(spec.nodes) + " node(s) x " + std::to_string(gpn) +
         " GPUs = " + std::to_string(spec.gpus()) + " GPUs.\n";
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
    * Three zones in all, whatever the cluster size. One zone per node makes SimGrid 3.32 seal the
      platform in O(zones x hosts) (13 to 36 s at 16k GPUs); one zone per fabric loads 16k GPUs in ~0.4 s.
    * zone "intra_node" (routing Cluster = a star): every GPU has one SPLITDUPLEX link to the star centre,
      <id>_UP towards it and <id>_DOWN back. The centre stands for each node's NVSwitch (or PCIe switch):
      it is non-blocking and only ever carries traffic between GPUs of the same node, so one centre for
      all nodes is exact.
    * zone "inter_node" (Cluster): every NIC has one SPLITDUPLEX link to a single non-blocking IB switch.
      To model an oversubscribed switch, add to that zone, e.g.
        <backbone id="ib_core" bandwidth="400GiBps" latency="0s"/>
      (every inter-node transfer then also crosses that shared link).

  BANDWIDTH: intra-node link = the system config's intra tier; NIC = inter_node gbps / GPUs per node
  (SimuMax's inter-node tier is per node: its p2p formula divides the bandwidth by num_per_node).
  On an idle network a task always takes the time of the cost model: the executor sizes each transfer
  from the task's time and the bottleneck of its links, so bandwidths here decide how concurrent
  transfers share links (contention), not how long a lone transfer takes.

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

// One host, its link and the host_link tying them, on three lines.
void append_endpoint(std::string& out, const std::string& host, const std::string& link, const std::string& bw) {
  out += "      <host id=\"" + host + "\" speed=\"1Pf\"/>\n";
  out += "      <link id=\"" + link + "\" bandwidth=\"" + bw + "\" latency=\"0s\" sharing_policy=\"SPLITDUPLEX\"/>\n";
  out += "      <host_link id=\"" + host + "\" up=\"" + link + "_UP\" down=\"" + link + "_DOWN\"/>\n";
}

std::string node_comment(int64_t node, int64_t gpn) {
  return "      <!-- node " + std::to_string(node) + ": job ranks " + std::to_string(node * gpn) + ".." +
         std::to_string(node * gpn + gpn - 1) + " -->\n";
}

}  // namespace

std::string format_bandwidth(double bytes_per_s) {
  const double gib = bytes_per_s / common::kGiB;  // exact: a power-of-two division
  const std::string in_gib = shortest(gib);
  const std::string in_bytes = shortest(bytes_per_s);
  // Prefer GiBps (how SimuMax configs are written) unless plain bytes are shorter.
  return in_gib.size() <= in_bytes.size() + 2 ? in_gib + "GiBps" : in_bytes + "Bps";
}

std::string platform_xml(const PlatformSpec& spec) {
  if (spec.nodes < 1 || spec.gpus_per_node < 1 || !(spec.nvlink_bytes_per_s > 0) ||
      (spec.nodes > 1 && !(spec.nic_bytes_per_s > 0))) {
    throw common::InternalError("platform_xml: invalid PlatformSpec (nodes " + std::to_string(spec.nodes) +
                                ", gpus_per_node " + std::to_string(spec.gpus_per_node) + ")");
  }
  const int64_t gpn = spec.gpus_per_node;
  std::string out;
  out.reserve(static_cast<size_t>(spec.gpus()) * 400 + 4096);
  append_header(out, spec);
  out += "<platform version=\"4.1\">\n  <zone id=\"cluster\" routing=\"None\">\n";
  out += "    <zone id=\"intra_node\" routing=\"Cluster\">\n";
  const std::string nvlink_bw = format_bandwidth(spec.nvlink_bytes_per_s);
  for (int64_t r = 0; r < spec.gpus(); ++r) {
    if (r % gpn == 0) out += node_comment(r / gpn, gpn);
    const std::string host = gpu_host_name(r, gpn);
    append_endpoint(out, host, "intra." + host, nvlink_bw);
  }
  out += "    </zone>\n";
  if (spec.nic_bytes_per_s > 0) {
    out += "    <zone id=\"inter_node\" routing=\"Cluster\">\n";
    const std::string nic_bw = format_bandwidth(spec.nic_bytes_per_s);
    for (int64_t r = 0; r < spec.gpus(); ++r) {
      if (r % gpn == 0) out += node_comment(r / gpn, gpn);
      const std::string host = nic_host_name(r);
      append_endpoint(out, host, "inter." + host, nic_bw);
    }
    out += "    </zone>\n";
  }
  out += "  </zone>\n</platform>\n";
  return out;
}

}  // namespace simumax::platform
