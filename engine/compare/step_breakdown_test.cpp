// report::Interval arithmetic and one step's breakdown on small cases worked out by hand.
#include "engine/compare/step_breakdown.hpp"

#include <gtest/gtest.h>

#include "engine/report/interval_set.hpp"

namespace simumax::compare {
namespace {

TEST(IntervalSet, MergeJoinsOverlappingAndTouchingAndDropsEmpty) {
  const auto m = report::merge_intervals({{5, 8}, {0, 2}, {2, 3}, {7, 10}, {4, 4}, {12, 11}});
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0], report::Interval(0, 3));
  EXPECT_EQ(m[1], report::Interval(5, 10));
  EXPECT_DOUBLE_EQ(report::covered_length(m), 8);
}

TEST(IntervalSet, UncoveredLengthIsWhatTheSecondSetLeavesBare) {
  const auto a = report::merge_intervals({{0, 10}, {20, 30}});
  EXPECT_DOUBLE_EQ(report::uncovered_length(a, report::merge_intervals({})), 20);
  EXPECT_DOUBLE_EQ(report::uncovered_length(a, report::merge_intervals({{2, 4}, {6, 25}})), 2 + 2 + 5);
  EXPECT_DOUBLE_EQ(report::uncovered_length(a, report::merge_intervals({{-5, 40}})), 0);
  EXPECT_DOUBLE_EQ(report::uncovered_length(a, report::merge_intervals({{10, 20}})), 20);
  // One interval of b covering the end of one interval of a and the start of the next.
  EXPECT_DOUBLE_EQ(report::uncovered_length(report::merge_intervals({{0, 10}, {12, 20}}), report::merge_intervals({{8, 14}})), 8 + 6);
}

KernelClassTable table() {
  return KernelClassTable::parse(R"({"classes": [{"name": "gemm", "kind": "compute"}, {"name": "attention",
    "kind": "compute"}, {"name": "comm", "kind": "comm"}, {"name": "memcpy", "kind": "memory"}],
    "default_class": "gemm", "rules": [{"class": "attention", "contains": ["attn"]},
    {"class": "comm", "subclass": "all_reduce", "contains": ["allreduce"]},
    {"class": "comm", "subclass": "send_recv", "contains": ["sendrecv"]}, {"class": "memcpy", "cat": "memcpy"}]})",
                                 "t.json");
}

TEST(StepBreakdown, ExposedCommIsCommWithNoComputeOnAnyStream) {
  const auto t = table();
  const auto ev = [&](double s, double e, const char* cat, const char* name) {
    return TimedEvent{s, e, t.classify(cat, name)};
  };
  // Window [0, 25) µs: gemm [0,10) and attention [5,15) on two streams; all-reduce [12,20) overlapped by the
  // attention until 15; send/recv [18,19) inside the all-reduce; a copy [20,22) (copies hide nothing); idle 22..25.
  const std::vector<TimedEvent> events = {ev(0, 10, "kernel", "gemm_a"), ev(5, 15, "kernel", "attn_b"),
                                          ev(12, 20, "kernel", "allreduce"), ev(18, 19, "kernel", "sendrecv"),
                                          ev(20, 22, "memcpy", "copy")};
  const StepBreakdown s = break_down_step(events, events, 0, 25, t);
  EXPECT_DOUBLE_EQ(s.total_ms, 0.025);
  EXPECT_DOUBLE_EQ(s.compute_ms, 0.015);
  EXPECT_DOUBLE_EQ(s.class_ms[0], 0.010);  // gemm
  EXPECT_DOUBLE_EQ(s.class_ms[1], 0.010);  // attention
  EXPECT_DOUBLE_EQ(s.comm_ms, 0.008);
  EXPECT_DOUBLE_EQ(s.exposed_comm_ms, 0.005);
  EXPECT_DOUBLE_EQ(s.memory_ms, 0.002);
  EXPECT_NEAR(s.idle_ms, 0.003, 1e-15);
  EXPECT_DOUBLE_EQ(s.comm_ms_by_type.at("all_reduce"), 0.008);
  EXPECT_DOUBLE_EQ(s.comm_ms_by_type.at("send_recv"), 0.001);
  EXPECT_EQ(s.kernels, 5);
  EXPECT_EQ(s.comm_kernels.at("all_reduce"), 1);
  EXPECT_EQ(s.comm_kernels.at("send_recv"), 1);
}

TEST(StepBreakdown, TimesAreClippedToTheWindowButCountsComeFromTheStepsOwnEvents) {
  const auto t = table();
  const std::vector<TimedEvent> timed = {{-5, 5, t.classify("kernel", "gemm")},
                                         {8, 30, t.classify("kernel", "allreduce")}};
  const std::vector<TimedEvent> owned = {timed[1]};
  const StepBreakdown s = break_down_step(timed, owned, 0, 10, t);
  EXPECT_DOUBLE_EQ(s.compute_ms, 0.005);
  EXPECT_DOUBLE_EQ(s.comm_ms, 0.002);
  EXPECT_DOUBLE_EQ(s.exposed_comm_ms, 0.002);
  EXPECT_DOUBLE_EQ(s.idle_ms, 0.003);
  EXPECT_EQ(s.kernels, 1);
}

}  // namespace
}  // namespace simumax::compare
