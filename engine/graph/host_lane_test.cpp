// The host lane (docs/host.md): the same DAG is host-bound or GPU-bound, the step the max of the two; a host
// synchronisation stalls the host; CUDA graphs take the launches off it; the simumax fidelity has no lane.
#include <gtest/gtest.h>

#include <vector>

#include "engine/executor/fast_executor.hpp"
#include "engine/graph/graph_builder.hpp"
#include "engine/graph/lowering.hpp"

namespace simumax::graph {
namespace {

const std::string kShared = SIMUMAX_SHARED_DIR;

// One rank: the host issues two kernels (`host` s each), each kernel takes `gpu` s; `sync`: the host waits for
// the first kernel before it issues the second.
double two_kernels(double host, double gpu, bool sync) {
  TaskGraph g;
  g.num_ranks = 1;
  GraphBuilder b(g);
  b.enable_host_lane();
  Task h, k;
  h.seconds = host;
  k.seconds = gpu;
  for (int i = 0; i < 2; ++i) {
    b.issue(0, h);
    b.append(k);
    if (sync) b.host_waits(0);
  }
  b.finish();
  return executor::run_fast(g).makespan;
}

TEST(HostLane, HostBoundAndGpuBoundStepsAreTheMaxOfTheTwoLanes) {
  // Host-bound: launch, launch, then the last kernel: 10 + 10 + 2 = 22 (the GPU idles between its kernels).
  EXPECT_DOUBLE_EQ(two_kernels(10, 2, false), 22);
  // GPU-bound: the first launch, then the kernels back to back: 1 + 10 + 10 = 21 (the second launch is hidden).
  EXPECT_DOUBLE_EQ(two_kernels(1, 10, false), 21);
}

TEST(HostLane, ASynchronisationStallsTheHost) {
  // The host waits for kernel 1 (ends at 11) before it launches kernel 2 (12), which ends at 22, not 21.
  EXPECT_DOUBLE_EQ(two_kernels(1, 10, true), 22);
}

TEST(HostLane, OffTheGpuTasksIgnoreHostTasks) {
  TaskGraph g;
  g.num_ranks = 1;
  GraphBuilder b(g);
  Task h, k;
  h.seconds = 10;
  k.seconds = 2;
  b.issue(0, h);
  b.append(k);
  b.finish();
  EXPECT_DOUBLE_EQ(executor::run_fast(g).makespan, 10);  // both start at 0: no edge from the host task
}

struct Fixture {
  config::Scenario s;
  Fixture() {
    s = config::load_configs(kShared + "/simumax-configs/models/llama3-8b.json",
                             kShared + "/simumax-configs/strategy/tp1_pp2_dp4_mbs1.json",
                             kShared + "/simumax-configs/system/a100_pcie.json");
    s.model.layer_num = 4;
    s.strategy.fidelity = config::Fidelity::kMegatron;
  }
  cost::StepCost cost() const { return cost::cost_step(s, model::build_step_model(s)); }
  double step(Granularity gr) const {
    const auto m = model::build_step_model(s);
    const auto c = cost::cost_step(s, m);
    return executor::run_fast(lower_step(s, m, c, LoweringOptions{gr, RankScope::kStages})).makespan;
  }
  double host_on_rank0(Granularity gr) const {
    const auto m = model::build_step_model(s);
    const auto c = cost::cost_step(s, m);
    const TaskGraph g = lower_step(s, m, c, LoweringOptions{gr, RankScope::kStages});
    double sum = 0;
    for (uint32_t i = 0; i < g.size(); ++i) {
      const Task t = g.tasks[i];
      if (t.kind == TaskKind::kHost && t.rank == 0) sum += t.seconds;
    }
    return sum;
  }
};

// The layer's host time, by hand: each op pass costs launch_us per kernel it launches (its own, Megatron's
// extra kernels, its collectives) over cpu_speed.
TEST(HostLane, AnOpPassCostsOneLaunchPerKernel) {
  Fixture f;
  f.s.system.host.launch_us = 10;
  f.s.system.host.cpu_speed = 2;
  const auto c = f.cost();
  const auto m = model::build_step_model(f.s);
  const model::Block& layer = m.chunks[0].blocks[1];
  ASSERT_EQ(layer.kind, model::BlockKind::kLayer);
  double expected = 0;
  for (const auto& op : *layer.ops) {
    const bool kernel = op.work[0].flops > 0 || !op.work[0].mem_bytes.empty();
    expected += (kernel ? 1 : 0) + static_cast<double>(op.extra_kernel_bytes[0].size() + op.comm[0].size());
  }
  EXPECT_GT(expected, 5);
  EXPECT_NEAR(c.chunks[0].blocks[1]->host.fwd, expected * 10e-6 / 2, 1e-12);
}

// CUDA graphs: a whole captured layer launches one graph each way; full_iteration none.
TEST(HostLane, CudaGraphsRemoveLaunches) {
  Fixture f;
  f.s.system.host = config::HostConfig{};  // the measured defaults ("host": {})
  const double eager = f.cost().chunks[0].blocks[1]->host.fwd;
  f.s.strategy.cuda_graph_impl = config::CudaGraphImpl::kTransformerEngine;
  const auto layer = f.cost().chunks[0].blocks[1]->host;
  EXPECT_NEAR(layer.fwd, f.s.system.host.launch_us * 1e-6, 1e-12);
  EXPECT_NEAR(layer.bwd, f.s.system.host.launch_us * 1e-6, 1e-12);
  EXPECT_GT(eager, 5 * layer.fwd);
  f.s.strategy.cuda_graph_scope = {"attn"};
  const double attn = f.cost().chunks[0].blocks[1]->host.fwd;
  EXPECT_LT(attn, eager);
  EXPECT_GT(attn, layer.fwd);
  f.s.strategy.cuda_graph_impl = config::CudaGraphImpl::kLocal;
  f.s.strategy.cuda_graph_scope = {"full_iteration"};
  EXPECT_EQ(f.cost().chunks[0].blocks[1]->host.fwd, 0);
}

// A host far slower than the GPU: the step is at least the host lane's time, at every granularity; the simumax
// fidelity (SimuMax's GPU-only model) does not change.
TEST(HostLane, AHostBoundStepIsAtLeastItsHostTime) {
  Fixture f;
  const double gpu_bound = f.step(Granularity::kOp);
  f.s.system.host.launch_us = 10000;
  for (Granularity gr : {Granularity::kChunk, Granularity::kLayer, Granularity::kOp}) {
    const double host = f.host_on_rank0(gr);
    EXPECT_GT(host, 2 * gpu_bound);
    EXPECT_GE(f.step(gr), host);
  }
  f.s.strategy.fidelity = config::Fidelity::kSimuMax;
  const double simumax_slow = f.step(Granularity::kLayer);
  f.s.system.host.launch_us = 0;
  EXPECT_EQ(f.step(Granularity::kLayer), simumax_slow);
  EXPECT_EQ(f.host_on_rank0(Granularity::kLayer), 0);
}

// Megatron's batched p2p (batch_p2p_comm, without overlap_p2p_comm): the host launches each batch's transfers
// and then torch.cuda.synchronize() blocks it until they are done, so the next host task waits for a transfer;
// with overlap_p2p_comm there is neither. The synchronisation only ever lengthens the step.
TEST(HostLane, BatchedP2pLaunchesItsTransfersAndBlocksTheHost) {
  Fixture f;
  f.s.system.host.launch_us = 200;  // host-bound, so the blocking shows
  ASSERT_EQ(f.s.strategy.pp_size, 2);
  auto host_waits_on_transfers = [&] {
    const auto m = model::build_step_model(f.s);
    const auto c = cost::cost_step(f.s, m);
    const TaskGraph g = lower_step(f.s, m, c, LoweringOptions{Granularity::kLayer, RankScope::kStages});
    int waits = 0;
    for (uint32_t i = 0; i < g.size(); ++i) {
      if (g.tasks[i].kind != TaskKind::kPpComm) continue;
      for (uint32_t e = g.succ_offsets[i]; e < g.succ_offsets[i + 1]; ++e) {
        waits += g.tasks[g.succ[e]].kind == TaskKind::kHost;
      }
    }
    return waits;
  };
  const int blocking = host_waits_on_transfers();
  const double blocking_step = f.step(Granularity::kLayer);
  // A forward and a backward transfer per micro-batch, each waited for by the host of both its ranks; only the
  // last one (stage 1's last backward send) reaches stage 1's host through the end of the step instead (its DP
  // gradient reduce follows the transfer, and the host waits for that before it launches the optimizer).
  const auto mbc = static_cast<int>(f.s.strategy.micro_batch_num);
  EXPECT_EQ(blocking, 2 * 2 * mbc - 1);
  f.s.strategy.megatron_overlap_p2p_comm = true;
  EXPECT_EQ(host_waits_on_transfers(), 0);
  EXPECT_GE(blocking_step, f.step(Granularity::kLayer));
}

}  // namespace
}  // namespace simumax::graph
