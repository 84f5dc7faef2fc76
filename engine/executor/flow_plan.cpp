#include "engine/executor/flow_plan.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include <simgrid/s4u.hpp>

#include "engine/common/error.hpp"

namespace simumax::executor::detail {

namespace sg4 = simgrid::s4u;

uint32_t LinkTracker::index_of(sg4::Link* link) {
  auto [it, inserted] = index_.try_emplace(link, static_cast<uint32_t>(links_.size()));
  if (inserted) {
    links_.push_back(link);
    stats_.emplace_back();
    fatpipe_.push_back(link->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE);
    bandwidth_.push_back(link->get_bandwidth());
  }
  return it->second;
}

void LinkTracker::cover(double t) {
  while (t >= bucket_s_ * kSeriesBuckets) {
    for (Stats& s : stats_) {
      for (std::vector<double>* v : {&s.busy_s, &s.bytes_moved}) {
        if (v->empty()) continue;
        for (size_t b = 0; b < kSeriesBuckets / 2; ++b) (*v)[b] = (*v)[2 * b] + (*v)[2 * b + 1];
        std::fill(v->begin() + kSeriesBuckets / 2, v->end(), 0.0);
      }
    }
    bucket_s_ *= 2;
  }
}

void LinkTracker::spread(std::vector<double>& series, double t0, double t1, double amount) const {
  const auto bucket = [this](double t) {
    return std::min(kSeriesBuckets - 1, static_cast<size_t>(std::max(0.0, t) / bucket_s_));
  };
  if (!(t1 > t0)) {
    series[bucket(t0)] += amount;
    return;
  }
  const double rate = amount / (t1 - t0);
  for (size_t b = bucket(t0), last = bucket(t1); b <= last; ++b) {
    const double lo = std::max(t0, static_cast<double>(b) * bucket_s_);
    const double hi = std::min(t1, static_cast<double>(b + 1) * bucket_s_);
    if (hi > lo) series[b] += rate * (hi - lo);
  }
}

void LinkTracker::flow_started(std::span<const uint32_t> links, double bytes, double now) {
  for (uint32_t link : links) {
    Stats& s = stats_[link];
    s.bytes += bytes;
    ++s.flows;
    if (s.active++ == 0) s.busy_since = now;
    if (s.busy_s.empty()) {
      s.busy_s.assign(kSeriesBuckets, 0.0);
      s.bytes_moved.assign(kSeriesBuckets, 0.0);
    }
  }
}

void LinkTracker::flow_ended(std::span<const uint32_t> links, double bytes, double started, double now) {
  cover(now);
  for (uint32_t link : links) {
    Stats& s = stats_[link];
    spread(s.bytes_moved, std::min(started, now), now, bytes);
    if (--s.active == 0) {
      s.busy_seconds += now - s.busy_since;
      spread(s.busy_s, s.busy_since, now, now - s.busy_since);
    }
  }
}

std::vector<LinkUsage> LinkTracker::usage(double makespan) const {
  std::vector<LinkUsage> out;
  std::vector<size_t> of;  // out[k] is link of[k]
  for (size_t i = 0; i < links_.size(); ++i) {
    const Stats& s = stats_[i];
    if (s.flows == 0) continue;
    LinkUsage u;
    u.name = links_[i]->get_name();
    u.bandwidth_bytes_per_s = links_[i]->get_bandwidth();
    u.bytes = s.bytes;
    u.flows = s.flows;
    u.busy_seconds = s.busy_seconds;
    u.utilisation = makespan > 0 ? s.bytes / (u.bandwidth_bytes_per_s * makespan) : 0;
    out.push_back(std::move(u));
    of.push_back(i);
  }
  std::vector<size_t> order(out.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::sort(order.begin(), order.end(), [&out](size_t a, size_t b) {
    return out[a].utilisation != out[b].utilisation ? out[a].utilisation > out[b].utilisation : out[a].name < out[b].name;
  });
  std::vector<LinkUsage> sorted;
  sorted.reserve(out.size());
  const size_t buckets = std::min(kSeriesBuckets, static_cast<size_t>(std::ceil(makespan / bucket_s_)));
  for (size_t k = 0; k < order.size(); ++k) {
    LinkUsage u = std::move(out[order[k]]);
    const Stats& s = stats_[of[order[k]]];
    if (k < kSeriesLinks && !s.busy_s.empty()) {
      for (size_t b = 0; b < buckets; ++b) {
        u.busy_series.push_back(s.busy_s[b] / bucket_s_);
        u.utilisation_series.push_back(s.bytes_moved[b] / (u.bandwidth_bytes_per_s * bucket_s_));
      }
    }
    sorted.push_back(std::move(u));
  }
  return sorted;
}

namespace {

std::pair<sg4::Host*, sg4::Host*> endpoints(const RankHosts& h, uint32_t a, uint32_t b) {
  if (h.node[a] == h.node[b]) return {h.gpu[a], h.gpu[b]};
  if (h.nic[a] == nullptr || h.nic[b] == nullptr) {
    throw common::InternalError("sim: ranks on different nodes but the platform has no NIC host for them");
  }
  return {h.nic[a], h.nic[b]};
}

std::vector<std::pair<uint32_t, uint32_t>> rank_pairs(const std::vector<uint32_t>& m, graph::CommPattern pattern) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  const size_t n = m.size();
  if (pattern == graph::CommPattern::kRing && n >= 2) {
    for (size_t i = 0; i < n; ++i) pairs.emplace_back(m[i], m[(i + 1) % n]);
  } else if (pattern == graph::CommPattern::kAllToAll) {
    // Every ordered pair: per-pair flows are what makes an all-to-all contend like one (n-1 flows on each
    // NIC). Cheaper stand-ins (one shifted ring carrying everything) load each link the same on an idle
    // star, but under sharing they get 1 share where the real exchange gets n-1.
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < n; ++j) {
        if (i != j) pairs.emplace_back(m[i], m[j]);
      }
    }
  } else if (pattern == graph::CommPattern::kPeer && n >= 2) {
    pairs.emplace_back(m[0], m[1]);
  }
  return pairs;
}

// The flows all start together with equal sizes, so max-min sharing gives every flow at least min over links
// of bandwidth / (its flows): those on the most loaded link end last, exactly then.
double idle_share(const std::unordered_map<const sg4::Link*, uint32_t>& load) {
  double share = std::numeric_limits<double>::infinity();
  for (const auto& [link, flows] : load) {
    const bool fatpipe = link->get_sharing_policy() == sg4::Link::SharingPolicy::FATPIPE;
    share = std::min(share, link->get_bandwidth() / (fatpipe ? 1 : flows));
  }
  return share;
}

// The same on the reference fabric: each GPU's NVLink (within a node) or NIC (across nodes), up and down.
double reference_share(const std::vector<std::pair<uint32_t, uint32_t>>& pairs, const RankHosts& h,
                       const platform::PlatformSpec& spec) {
  std::unordered_map<uint64_t, uint32_t> load;  // (rank, across nodes, receiving) -> flows
  for (const auto& [a, b] : pairs) {
    const uint64_t across = h.node[a] == h.node[b] ? 0 : 2;
    ++load[uint64_t{a} << 2 | across];
    ++load[uint64_t{b} << 2 | across | 1];
  }
  double share = std::numeric_limits<double>::infinity();
  for (const auto& [key, flows] : load) {
    const double bandwidth = (key & 2) != 0 ? spec.nic_bytes_per_s : spec.nvlink_bytes_per_s;
    share = std::min(share, bandwidth / flows);
  }
  return share;
}

}  // namespace

FlowPlan build_plan(const graph::TaskGraph& g, const graph::Task& t, const RankHosts& hosts,
                    const std::optional<platform::PlatformSpec>& reference, LinkTracker& tracker) {
  std::vector<std::pair<uint32_t, uint32_t>> pairs = rank_pairs(g.groups.at(t.group), t.pattern);
  std::erase_if(pairs, [&](const auto& p) {  // SimGrid aborts on a transfer to itself
    const auto [src, dst] = endpoints(hosts, p.first, p.second);
    return src == dst;
  });
  FlowPlan plan;
  std::unordered_map<const sg4::Link*, uint32_t> load;  // flows of this plan on each link
  std::vector<sg4::Link*> route;
  for (const auto& [a, b] : pairs) {
    const auto [src, dst] = endpoints(hosts, a, b);
    route.clear();
    double latency = 0;
    src->route_to(dst, route, &latency);
    if (route.empty()) {
      throw common::ConfigError(hosts.platform, src->get_name() + " -> " + dst->get_name(),
                                "no link between these hosts");
    }
    double lone = std::numeric_limits<double>::infinity();
    for (sg4::Link* link : route) {
      ++load[link];
      plan.links.push_back(tracker.index_of(link));
      lone = std::min(lone, link->get_bandwidth());
    }
    plan.lone_bytes_per_s.push_back(lone);
    plan.link_offsets.push_back(static_cast<uint32_t>(plan.links.size()));
    plan.route_latency_s = std::max(plan.route_latency_s, latency);
    plan.flows.emplace_back(src, dst);
  }
  plan.share_bytes_per_s = reference ? reference_share(pairs, hosts, *reference) : 0;
  // A spec without the tier a flow needs (it cannot price it) leaves the platform to size the flows.
  if (!(plan.share_bytes_per_s > 0) || !std::isfinite(plan.share_bytes_per_s)) plan.share_bytes_per_s = idle_share(load);
  return plan;
}

}  // namespace simumax::executor::detail
