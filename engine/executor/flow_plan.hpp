// The flows of a network task on the platform (which hosts, over which links, sized how), and the per-link
// traffic they leave behind. Internal to the sim executor; SimGrid types are only forward-declared here.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "engine/executor/link_usage.hpp"
#include "engine/graph/task_graph.hpp"
#include "engine/platform/platform_spec.hpp"

namespace simgrid::s4u {
class Host;
class Link;
}  // namespace simgrid::s4u

namespace simumax::executor::detail {

// Where each graph rank sends from: its GPU host within a node, its NIC host across nodes.
struct RankHosts {
  std::string platform;  // the file, for errors
  std::vector<simgrid::s4u::Host*> gpu;
  std::vector<simgrid::s4u::Host*> nic;  // nullptr where the platform has no NIC (single-node platforms)
  std::vector<int64_t> node;
};

// Per-link bytes and busy time, accumulated as flows start and end, in total and over time: in buckets of one
// width for every link, which doubles (neighbours merged) whenever the run outgrows kSeriesBuckets, so memory is
// bounded (2 x kSeriesBuckets doubles per link used) and the series is the same whatever the run's length.
class LinkTracker {
 public:
  static constexpr size_t kSeriesBuckets = 128;
  static constexpr size_t kSeriesLinks = 20;  // the busiest links that get their series in usage()

  uint32_t index_of(simgrid::s4u::Link* link);
  size_t size() const { return stats_.size(); }
  uint32_t active(uint32_t link) const { return stats_[link].active; }  // flows on the link now
  bool fatpipe(uint32_t link) const { return fatpipe_[link]; }           // its flows never share its bandwidth
  double bandwidth(uint32_t link) const { return bandwidth_[link]; }
  void flow_started(std::span<const uint32_t> links, double bytes, double now);
  // A flow that started at `started` with `bytes` ended: its bytes are spread evenly over [started, now].
  void flow_ended(std::span<const uint32_t> links, double bytes, double started, double now);
  // Every link that carried a flow, highest utilisation first (then by name); the first kSeriesLinks with
  // busy_series / utilisation_series over ceil(makespan / series_bucket_seconds()) buckets.
  std::vector<LinkUsage> usage(double makespan) const;
  double series_bucket_seconds() const { return bucket_s_; }

 private:
  struct Stats {
    double bytes = 0;
    uint64_t flows = 0;
    uint32_t active = 0;
    double busy_since = 0;
    double busy_seconds = 0;
    std::vector<double> busy_s;       // per bucket, allocated at the link's first flow
    std::vector<double> bytes_moved;  // per bucket
  };
  void cover(double t);  // widens the buckets until t is inside them
  void spread(std::vector<double>& series, double t0, double t1, double amount) const;

  std::unordered_map<const simgrid::s4u::Link*, uint32_t> index_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<Stats> stats_;
  std::vector<bool> fatpipe_;
  std::vector<double> bandwidth_;
  double bucket_s_ = 1e-6;
};

// The flows of one (group, pattern), shared by every task over that group: tasks differ only in bytes.
struct FlowPlan {
  std::vector<std::pair<simgrid::s4u::Host*, simgrid::s4u::Host*>> flows;
  std::vector<uint32_t> link_offsets = {0};  // the links of flow i: links[link_offsets[i] .. link_offsets[i + 1])
  std::vector<uint32_t> links;               // LinkTracker indices
  std::vector<double> lone_bytes_per_s;  // flow i's rate alone on the platform: its slowest link's bandwidth
  double share_bytes_per_s = 0;  // the rate a flow is sized with: on the reference fabric when there is one
  double route_latency_s = 0;    // the largest route latency (0 on platform_xml's links)

  std::span<const uint32_t> links_of(size_t flow) const {
    return {links.data() + link_offsets[flow], links.data() + link_offsets[flow + 1]};
  }
};

// The flows of task `t` (CommPattern::kRing: one per ring edge, kAllToAll: one per ordered pair, kPeer:
// members[0] -> members[1]; never from a host to itself) with their routes. share_bytes_per_s is what each
// flow gets on its most loaded link when nothing else runs: with `reference`, on the fabric the cost model
// prices (a per-GPU NVLink and NIC link at the spec's bandwidths, one non-blocking switch), so that bytes
// are the same whatever platform runs them; without, on the platform itself.
// Throws common::ConfigError when the platform has no route between two of the hosts.
FlowPlan build_plan(const graph::TaskGraph& g, const graph::Task& t, const RankHosts& hosts,
                    const std::optional<platform::PlatformSpec>& reference, LinkTracker& tracker);

}  // namespace simumax::executor::detail
