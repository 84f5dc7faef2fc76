// The real trace's top kernels, per-op table, launch statistics and idle split, on the 8-GPU trace (which has
// Input Dims) against tests/data/compare/gemm_reference.py, an independent brute-force count.
#include "engine/compare/kineto_insight.hpp"

#include <gtest/gtest.h>

#include "engine/compare/kineto_trace.hpp"

namespace simumax::compare {
namespace {

const KernelClassTable& table() {
  static const KernelClassTable t = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  return t;
}

TEST(KinetoInsight, EveryShapedGemmCallOfThe8GpuTraceGetsItsShape) {
  const KinetoProfile p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz", table(), 5);
  const TraceInsight& t = p.insight;
  EXPECT_EQ(t.steps, 6);
  EXPECT_TRUE(t.shapes_recorded);
  EXPECT_EQ(t.gemm_calls, 1776);
  EXPECT_EQ(t.gemm_calls_shaped, 1776);
  int64_t gemm_kernels = 0;
  for (const auto& r : t.ops) {
    if (r.cls.starts_with("gemm")) gemm_kernels += r.kernels;
    EXPECT_EQ(r.call_us.size(), static_cast<size_t>(r.calls));
    if (r.gemm) {
      ASSERT_TRUE(r.median_tflops.has_value());
      EXPECT_NEAR(*r.median_tflops, r.gemm->flops() / r.median_us * 1e-6, 1e-9);
    }
  }
  EXPECT_EQ(gemm_kernels, 2388);
  for (size_t i = 1; i < t.ops.size(); ++i) EXPECT_GE(t.ops[i - 1].total_ms, t.ops[i].total_ms);
  ASSERT_EQ(t.top_kernels.size(), 5u);
  for (size_t i = 1; i < t.top_kernels.size(); ++i) EXPECT_GE(t.top_kernels[i - 1].total_ms, t.top_kernels[i].total_ms);
}

// The launching thread of tests/data/compare/make_calibrate_traces.py's host trace: 120 aten::add ops of 12, 12
// and 13 us in turn (1 us, the launch call's advance of 10, 10 and 11 us, 1 us), their launches inside them.
TEST(KinetoInsight, TheLaunchingThreadsBusyTimeIsTheUnionOfItsOperators) {
  const KinetoProfile p = load_kineto_trace(SIMUMAX_SOURCE_DIR "/tests/data/compare/calibrate_host_launches.json",
                                            table());
  const HostThread& h = p.insight.host;
  EXPECT_EQ(h.pid, 100);
  EXPECT_EQ(h.tid, 100);
  EXPECT_DOUBLE_EQ(h.launches, 120);
  EXPECT_NEAR(h.busy_ms, 40 * (12 + 12 + 13) * 1e-3, 1e-9);
  EXPECT_GT(h.step_ms, h.busy_ms);
}

TEST(KinetoInsight, IdleSplitAddsUpAndLaunchStatisticsAreOrdered) {
  for (const char* f : {"train_8gpu_rank3.json.gz", "train_16gpu_rank0.json.gz", "resnet_2gpu_rank0.json.gz",
                        "train_128gpu_rank0_sampled.json.gz"}) {
    SCOPED_TRACE(f);
    const KinetoProfile p = load_kineto_trace(std::string(SIMUMAX_SHARED_DIR "/traces/kineto/") + f, table());
    const IdleSplit& s = p.insight.idle;
    EXPECT_GT(s.idle_ms, 0);
    EXPECT_NEAR(s.host_bound_ms + s.other_stream_ms + s.other_ms, s.idle_ms, 1e-9);
    for (double v : {s.host_bound_ms, s.other_stream_ms, s.other_ms}) EXPECT_GE(v, -1e-9);
    const LaunchStats& l = p.insight.launch;
    EXPECT_GT(l.kernels, 0);
    EXPECT_LE(l.median_delay_us, l.p90_delay_us);
    EXPECT_LE(l.p90_delay_us, l.max_delay_us);
    EXPECT_GE(l.median_delay_us, 0);
  }
}

}  // namespace
}  // namespace simumax::compare
