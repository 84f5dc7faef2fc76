// Scaling smoke tests of the sim executor on 512 GPUs: they print wall times and assert no timing.

#include <chrono>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/executor/fast_executor.hpp"
#include "engine/executor/sim_executor.hpp"
#include "engine/executor/sim_executor_test_util.hpp"

namespace simumax::executor {
namespace {

using namespace testing;  // NOLINT: the helpers of the sim executor tests

// A GPipe-like training step on 64 nodes x 8 GPUs: tp = 8 (a node), pp = 4, dp = 16. Every rank runs
// micro_batches x (fwd_ops + bwd_ops) timer tasks; a TP ring (network) every tp_every ops; optional pipeline
// p2p (network) between stages; two DP ring buckets per (stage, tp rank) at the end.
struct StepShape {
  int micro_batches = 4;
  int fwd_ops = 80;
  int bwd_ops = 160;
  int tp_every = 80;
  bool p2p = false;
};

graph::TaskGraph training_step(const StepShape& shape) {
  constexpr uint32_t kTp = 8, kPp = 4, kDp = 16;
  GraphBuilder b(kTp * kPp * kDp);
  auto rank = [](uint32_t d, uint32_t s, uint32_t t) { return (d * kPp + s) * kTp + t; };
  std::vector<std::vector<uint32_t>> last(kTp * kPp * kDp);
  std::mt19937_64 rng(42);
  auto op = [&](uint32_t r) { last[r] = {b.compute(r, 20e-6 + static_cast<double>(rng() % 500) * 1e-6, last[r])}; };
  auto collective = [&](const std::vector<uint32_t>& members, double seconds, double latency) {
    std::vector<uint32_t> deps;
    for (uint32_t m : members) deps.insert(deps.end(), last[m].begin(), last[m].end());
    const uint32_t id = b.comm(members, CommPattern::kRing, seconds, latency, deps);
    for (uint32_t m : members) last[m] = {id};
  };
  auto phase = [&](uint32_t s, int ops, int next_stage) {
    for (uint32_t d = 0; d < kDp; ++d) {
      std::vector<uint32_t> tp;
      for (uint32_t t = 0; t < kTp; ++t) tp.push_back(rank(d, s, t));
      for (int i = 0; i < ops; ++i) {
        for (uint32_t r : tp) op(r);
        if ((i + 1) % shape.tp_every == 0) collective(tp, 150e-6, 30e-6);
      }
      if (next_stage < 0 || !shape.p2p) continue;
      for (uint32_t t = 0; t < kTp; ++t) {
        const uint32_t src = rank(d, s, t), dst = rank(d, static_cast<uint32_t>(next_stage), t);
        const uint32_t id = b.comm({src, dst}, CommPattern::kPeer, 300e-6, 35e-6, last[src]);
        last[src] = {id};
        last[dst].push_back(id);
      }
    }
  };
  for (int m = 0; m < shape.micro_batches; ++m) {
    for (uint32_t s = 0; s < kPp; ++s) phase(s, shape.fwd_ops, s + 1 < kPp ? static_cast<int>(s) + 1 : -1);
  }
  for (int m = 0; m < shape.micro_batches; ++m) {
    for (uint32_t s = kPp; s-- > 0;) phase(s, shape.bwd_ops, s > 0 ? static_cast<int>(s) - 1 : -1);
  }
  for (int bucket = 0; bucket < 2; ++bucket) {
    for (uint32_t s = 0; s < kPp; ++s) {
      for (uint32_t t = 0; t < kTp; ++t) {
        std::vector<uint32_t> dp;
        for (uint32_t d = 0; d < kDp; ++d) dp.push_back(rank(d, s, t));
        collective(dp, 20e-3, 1e-3);
      }
    }
  }
  return b.build();
}

void run_and_report(const StepShape& shape, const char* label) {
  const graph::TaskGraph g = training_step(shape);
  size_t network = 0;
  for (const graph::Task& t : g.tasks) network += t.network ? 1 : 0;
  const auto child = platform::testing::in_child_process([&] {
    const auto t0 = std::chrono::steady_clock::now();
    const Timeline tl = run_sim(g, on(64));
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return std::to_string(wall) + " " + std::to_string(tl.makespan);
  });
  ASSERT_TRUE(child.ok) << child.value;
  const double wall = std::stod(child.value);
  const double fast_makespan = run_fast(g).makespan;
  std::printf(
      "[ scale    ] %s: 512 GPUs, %zu tasks (%zu network): sim %.3f s wall, %.0f tasks/s; makespan sim %s s, "
      "fast %.9f s\n",
      label, g.size(), network, wall, static_cast<double>(g.size()) / wall,
      child.value.substr(child.value.find(' ') + 1).c_str(), fast_makespan);
}

TEST(SimExecutorScale, Gpus512HalfMillionTimersAndRings) { run_and_report(StepShape{}, "500k timers + rings"); }

TEST(SimExecutorScale, Gpus512OneMillionTimersAndThousandsOfNetworkTasks) {
  run_and_report(StepShape{8, 80, 160, 40, true}, "1M timers + TP/PP/DP flows");
}

}  // namespace
}  // namespace simumax::executor
