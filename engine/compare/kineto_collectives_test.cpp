// NCCL kernels typed by the CPU op that launched them: the spellings PyTorch versions use, and every NCCL kernel
// of the four real traces against tests/data/compare/nccl_collectives.json, an independent count
// (tests/data/compare/nccl_reference.py: brute-force containment, a hand-written spelling table).
#include "engine/compare/kineto_collectives.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "engine/compare/kineto_trace.hpp"

namespace simumax::compare {
namespace {

struct Spelling {
  const char* name;
  const char* type;  // "" : not a collective
};

TEST(KinetoCollectives, CpuOpNamesOfEveryPyTorchVersion) {
  const Spelling ops[] = {
      {"nccl:all_reduce", "all_reduce"},         {"c10d::allreduce_", "all_reduce"},
      {"nccl:_all_gather_base", "all_gather"},   {"c10d::_allgather_base_", "all_gather"},
      {"c10d::allgather_into_tensor_coalesced_", "all_gather"},
      {"nccl:_reduce_scatter_base", "reduce_scatter"}, {"c10d::reduce_scatter_tensor_coalesced_", "reduce_scatter"},
      {"nccl:all_to_all", "all_to_all"},         {"c10d::alltoall_base_", "all_to_all"},
      {"nccl:broadcast", "broadcast"},           {"c10d::send", "send"},
      {"c10d::recv_", "recv"},                   {"c10d::barrier", "barrier"},
      {"record_param_comms", ""},                {"aten::mm", ""},
      {"c10d::wait_", ""},                       {"nccl:", ""},
      {"ncclKernel_AllReduce", ""},
  };
  for (const auto& s : ops) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(collective_of_op(s.name).value_or(""), s.type);
  }
  const Spelling args[] = {{"allreduce", "all_reduce"},      {"_allgather_base", "all_gather"},
                           {"all_gather_into_tensor", "all_gather"}, {"reduce_scatter_tensor", "reduce_scatter"},
                           {"all_to_allv", "all_to_all"},     {"all_to_all_single", "all_to_all"},
                           {"wait", ""},                     {"", ""}};
  for (const auto& s : args) {
    SCOPED_TRACE(s.name);
    EXPECT_EQ(collective_of_arg(s.name).value_or(""), s.type);
  }
}

// The chain of CPU ops around a launch: nested ops, a sibling that ended before it, another thread's op.
TEST(KinetoCollectives, CpuOpIndexFindsTheInnermostEnclosingOpAndItsAncestors) {
  const std::vector<CpuOp> ops = {
      {0, 100, 1, 1, 1, 0, 0, 0},   // 0: outer
      {10, 40, 1, 1, 2, 0, 0, 0},   // 1: a sibling that ends before 50
      {45, 90, 1, 1, 3, 0, 0, 0},   // 2: holds the launch
      {50, 60, 1, 1, 4, 0, 0, 0},   // 3: innermost
      {50, 60, 1, 2, 5, 0, 0, 0},   // 4: another thread
      {45, 90, 2, 1, 6, 0, 0, 0},   // 5: another process
  };
  const CpuOpIndex index(ops);
  EXPECT_EQ(index.innermost(1, 1, 52, 3), 3);
  EXPECT_EQ(index.parent(3), 2);
  EXPECT_EQ(index.parent(2), 0);
  EXPECT_EQ(index.parent(0), -1);
  EXPECT_EQ(index.innermost(1, 1, 58, 5), 2);  // runs past op 3's end
  EXPECT_EQ(index.innermost(1, 1, 42, 1), 0);  // after the sibling, before op 2
  EXPECT_EQ(index.innermost(1, 1, 150, 1), -1);
  EXPECT_EQ(index.innermost(1, 3, 52, 1), -1);
  EXPECT_EQ(index.innermost(1, 2, 52, 1), 4);
  EXPECT_EQ(index.innermost(2, 1, 52, 1), 5);
}

std::map<std::string, int64_t> counts(const nlohmann::json& j) {
  std::map<std::string, int64_t> m;
  for (const auto& [k, v] : j.items()) m[k] = v.get<int64_t>();
  return m;
}

TEST(KinetoCollectives, EveryNcclKernelOfTheRealTracesMatchesTheIndependentCount) {
  const auto table = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  std::ifstream in(SIMUMAX_SOURCE_DIR "/tests/data/compare/nccl_collectives.json");
  const auto expected = nlohmann::json::parse(in);
  ASSERT_EQ(expected.size(), 4u);
  for (const auto& [file, want] : expected.items()) {
    SCOPED_TRACE(file);
    const KinetoProfile p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/" + file, table);
    EXPECT_EQ(p.collectives.by_cpu_type, counts(want["typed_by_cpu"]));
    int64_t from_name = 0;
    for (const auto& [type, n] : p.collectives.by_name_type) from_name += n;
    EXPECT_EQ(from_name, want["from_name"].get<int64_t>());
  }
}

// The 16-GPU trace's NCCL kernels are all named ncclKernel_SendRecv; the CPU says what 75 of them are.
TEST(KinetoCollectives, SendRecvKernelsAreRetypedAndStepsCountTheCpuType) {
  const auto table = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  const KinetoProfile p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/train_16gpu_rank0.json.gz", table);
  EXPECT_EQ(p.collectives.retyped, 75);
  EXPECT_EQ(p.collectives.by_name_type, (std::map<std::string, int64_t>{{"send_recv", 5}}));
  for (const auto& s : p.steps) EXPECT_EQ(s.comm_kernels.count("send_recv"), 0u) << s.label;
}

// A user table that never names all_to_all still gets the CPU's type.
TEST(KinetoCollectives, ATableWithoutTheSubclassGainsIt) {
  const auto table = KernelClassTable::parse(
      R"({"classes": [{"name": "k", "kind": "compute"}, {"name": "comm", "kind": "comm"}], "default_class": "k",
          "rules": [{"class": "comm", "contains": ["nccl"]}]})",
      "mini.json");
  const KinetoProfile p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz", table);
  EXPECT_EQ(p.collectives.by_cpu_type, (std::map<std::string, int64_t>{{"all_reduce", 18}, {"all_to_all", 42}}));
  EXPECT_EQ(p.steps.front().comm_kernels, (std::map<std::string, int64_t>{{"all_reduce", 3}, {"all_to_all", 7}}));
}

TEST(KinetoCollectives, ElementBytesOfRecordedTypes) {
  EXPECT_EQ(element_bytes("float"), 4);
  EXPECT_EQ(element_bytes("Float"), 4);
  EXPECT_EQ(element_bytes("c10::BFloat16"), 2);
  EXPECT_EQ(element_bytes("BFloat16"), 2);
  EXPECT_EQ(element_bytes("long"), 8);
  EXPECT_EQ(element_bytes("signed char"), 1);
  EXPECT_FALSE(element_bytes("TensorList"));
  EXPECT_FALSE(element_bytes(""));
}

// Messages from the kernel's own args (resnet: PyTorch 2.x, group 2) and from the nccl:/c10d:: ops' Input Dims
// (8-GPU: nccl:all_reduce [[45310188]] floats; no group recorded, so the world's 8).
TEST(KinetoCollectives, MessagesOfTheRealTraces) {
  const auto table = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  KinetoProfile p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/resnet_2gpu_rank0.json.gz", table);
  ASSERT_FALSE(p.collective_calls.empty());
  for (const auto& c : p.collective_calls) {
    EXPECT_EQ(c.group, 2);
    EXPECT_FALSE(c.group_is_world);
    EXPECT_GT(c.bytes, 0) << c.type;
  }
  p = load_kineto_trace(SIMUMAX_SHARED_DIR "/traces/kineto/train_8gpu_rank3.json.gz", table);
  EXPECT_EQ(p.collective_calls.size(), 60u);
  int64_t largest = 0;
  for (const auto& c : p.collective_calls) {
    EXPECT_EQ(c.group, 8);
    EXPECT_TRUE(c.group_is_world);
    if (c.type == "all_reduce" && c.bytes == 45310188.0 * 4) ++largest;
  }
  EXPECT_EQ(largest, 6);
}

}  // namespace
}  // namespace simumax::compare
