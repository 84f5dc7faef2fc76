#include "engine/config/system_config.hpp"

#include <gtest/gtest.h>

#include "engine/config/config_test_util.hpp"
#include "engine/config/scenario.hpp"

namespace simumax::config {
namespace {

using testing::expect_config_error;
using testing::Json;
using testing::system_file;
using testing::TempDir;

TEST(SystemConfig, ReadsB200Tables) {
  const SystemConfig s = load_system_file(system_file("b200_bf16_ceperm.json"));
  EXPECT_EQ(s.num_per_node, 8);
  EXPECT_EQ(s.mode, AcceleratorMode::kRoofline);
  EXPECT_FALSE(s.intra_with_pcie);
  EXPECT_DOUBLE_EQ(s.op.at("matmul").tflops, 2250.0);
  EXPECT_DOUBLE_EQ(s.op.at("matmul").efficient_factor, 0.48780765792034037);
  EXPECT_EQ(s.op.at("matmul").accurate_efficient_factor.size(), 514U);
  EXPECT_EQ(s.op.at("group_matmul").accurate_efficient_factor.size(), 108U);
  EXPECT_DOUBLE_EQ(s.op.at("fp8_matmul").efficient_factor, 0.0);
  EXPECT_DOUBLE_EQ(s.bandwidth.at("default").gbps, 8000.0);
  EXPECT_DOUBLE_EQ(s.bandwidth.at("ce_fusion").efficient_factor, 0.2795145022199592);
  EXPECT_EQ(s.networks.size(), 3U);
  const NetOpConfig& a2a = s.networks.at("high_intra_node").op.at("all2all");
  EXPECT_EQ(a2a.fixed_latency_us_by_comm_num, (std::map<int64_t, double>{{2, 51.0578}, {4, 19.2102}, {8, 0.0}}));
  EXPECT_EQ(a2a.fixed_latency_us, 0.0);
  EXPECT_DOUBLE_EQ(*a2a.efficient_factor, 0.5968);
  const NetOpConfig& inter = s.networks.at("inter_node").op.at("all_reduce");
  EXPECT_DOUBLE_EQ(inter.scale, 2);
  EXPECT_DOUBLE_EQ(inter.offset, -1);
  EXPECT_EQ(inter.efficient_factor, std::nullopt);
  EXPECT_EQ(inter.latency_us, std::nullopt);
  EXPECT_DOUBLE_EQ(s.networks.at("inter_node").bandwidth.gbps, 200);
}

TEST(SystemConfig, ReadsA100PcieTables) {
  const SystemConfig s = load_system_file(system_file("a100_pcie.json"));
  EXPECT_EQ(s.sys_name, "a100_pcie_bf16");
  EXPECT_TRUE(s.intra_with_pcie);
  EXPECT_FALSE(s.fc8);
  EXPECT_DOUBLE_EQ(s.mem_gbs,
                   testing::read_json(system_file("a100_pcie.json"))["accelerator"]["mem_gbs"].get<double>());
  const auto& pcie8 = s.networks.at("intra_node_pcie_8x");
  EXPECT_EQ(pcie8.op.at("reduce_scatter").dp_fixed_bw, (std::map<int64_t, double>{{2, 3.9}, {4, 7}}));
  EXPECT_EQ(pcie8.op.at("all_gather").dp_fixed_bw, (std::map<int64_t, double>{{2, 4}, {4, 7.65}}));
  EXPECT_TRUE(pcie8.op.at("all_reduce").dp_fixed_bw.empty());
  EXPECT_DOUBLE_EQ(*pcie8.op.at("all_reduce").latency_us, 8.98);
  EXPECT_DOUBLE_EQ(pcie8.bandwidth.gbps, 30);
  EXPECT_DOUBLE_EQ(pcie8.bandwidth.fixed_latency, 0);
  EXPECT_EQ(s.op.at("sdp_fwd").accurate_efficient_factor.size(), 12U);
}

// The shipped a100 file with `patch` applied (RFC 7386 merge patch; null deletes a key).
std::string write_patched(const TempDir& dir, const std::string& patch) {
  Json j = testing::read_json(system_file("a100_pcie.json"));
  j.merge_patch(Json::parse(patch));
  return dir.write("system.json", j);
}

TEST(SystemConfig, ReadsMeasuredCollectives) {
  TempDir dir;
  const std::string path = write_patched(
      dir, R"({"measured_collectives": {"inter_node": {"all_reduce": {"8": {"2097152": 0.25, "1048576": 0.125}}}}})");
  const SystemConfig s = load_system_file(path);
  const auto& curve = s.measured_collectives.at("inter_node").at("all_reduce").at(8);
  EXPECT_EQ(curve, (std::map<int64_t, double>{{1048576, 0.125}, {2097152, 0.25}}));
}

TEST(SystemConfig, ReadsWorkspacesOnlyWhereGiven) {
  EXPECT_FALSE(load_system_file(system_file("a100_pcie.json")).workspaces.has_value());
  TempDir dir;
  const SystemConfig s = load_system_file(
      write_patched(dir, R"({"workspaces": {"torch_cublas_bytes": 8519680, "te_cublas_bytes": 4194304}})"));
  ASSERT_TRUE(s.workspaces.has_value());
  EXPECT_EQ(s.workspaces->torch_cublas_bytes, 8519680);
  EXPECT_EQ(s.workspaces->te_cublas_bytes, 4194304);
}

// Without "host" the lane costs nothing (launch_us 0); "host": {} takes the measured defaults; given fields win.
TEST(SystemConfig, ReadsTheHostWithItsDefaults) {
  EXPECT_EQ(load_system_file(system_file("a100_pcie.json")).host.launch_us, 0);
  TempDir dir;
  EXPECT_EQ(load_system_file(write_patched(dir, R"({"host": {}})")).host, HostConfig{});
  const HostConfig h = load_system_file(write_patched(dir, R"({"host": {"op_us": 150, "cpu_speed": 2}})")).host;
  EXPECT_EQ(h.launch_us, HostConfig::kDefaultLaunchUs);
  EXPECT_EQ(h.op_us, 150);
  EXPECT_EQ(h.cpu_speed, 2);
}

TEST(SystemConfig, NullAccurateEfficiencyIsAbsent) {
  TempDir dir;
  Json j = testing::read_json(system_file("a100_pcie.json"));
  j["accelerator"]["op"]["matmul"]["accurate_efficient_factor"]["shape x"] = nullptr;
  j["accelerator"]["op"]["default"]["accurate_efficient_factor"] = nullptr;
  const SystemConfig s = load_system_file(dir.write("system.json", j));
  EXPECT_EQ(s.op.at("matmul").accurate_efficient_factor.count("shape x"), 0U);
  EXPECT_EQ(s.op.at("matmul").accurate_efficient_factor.size(), 183U);
}

TEST(SystemConfig, WarnsOnKeysSimuMaxIgnores) {
  testing::CapturedLog log;
  TempDir dir;
  const std::string path = write_patched(dir, R"({"vendor": "nv", "networks": {"inter_node": {"note": 1}},
                                                  "accelerator": {"op": {"matmull": {"tflops": 1, "efficient_factor": 1}}}})");
  load_system_file(path);
  EXPECT_NE(log.text().find("warning: " + path + ": /vendor: unknown field, ignored (SimuMax ignores it too)\n"),
            std::string::npos);
  EXPECT_NE(log.text().find("warning: " + path + ": /networks/inter_node/note: unknown field, ignored"),
            std::string::npos);
  EXPECT_NE(log.text().find("warning: " + path +
                            ": /accelerator/op/matmull: never looked up (SimuMax ignores it "
                            "too); did you mean 'matmul'?"),
            std::string::npos);
}

struct SystemErrorCase {
  const char* name;
  const char* patch;
  const char* expected;  // message after "<file>: "
};

class SystemError : public ::testing::TestWithParam<SystemErrorCase> {};

TEST_P(SystemError, ReportsFieldAndExpectation) {
  TempDir dir;
  const std::string path = write_patched(dir, GetParam().patch);
  const auto e = expect_config_error([&] { load_system_file(path); });
  EXPECT_EQ(std::string(e.what()), path + ": " + GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    SystemConfig, SystemError,
    ::testing::Values(
        SystemErrorCase{"op_typo", R"({"accelerator": {"op": {"matmul": {"tflop": 1}}}})",
                        "/accelerator/op/matmul/tflop: unknown field; did you mean 'tflops'?"},
        SystemErrorCase{"net_op_unsupported",
                        R"({"networks": {"inter_node": {"op": {"p2p": {"latency_us_by_comm_num": {}}}}}})",
                        "/networks/inter_node/op/p2p/latency_us_by_comm_num: unknown field; did you mean "
                        "'fixed_latency_us_by_comm_num'?"},
        SystemErrorCase{"no_default", R"({"accelerator": {"op": {"default": null}}})",
                        "/accelerator/op/default: required: the compute entry used for unlisted ops"},
        SystemErrorCase{"no_default_bw", R"({"accelerator": {"bandwidth": {"default": null}}})",
                        "/accelerator/bandwidth/default: required: the memory bandwidth used for unlisted ops"},
        SystemErrorCase{"missing_all2all", R"({"networks": {"inter_node": {"op": {"all2all": null}}}})",
                        "/networks/inter_node/op/all2all: required: every network tier must define all of "
                        "all_reduce, all_gather, reduce_scatter, p2p, all2all"},
        SystemErrorCase{"comm_num_key", R"({"networks": {"inter_node": {"op": {"p2p": {"dp_fixed_bw": {"two": 3}}}}}})",
                        "/networks/inter_node/op/p2p/dp_fixed_bw/two: expected a group size as the key (a positive "
                        "integer as a string, e.g. \"8\")"},
        SystemErrorCase{"gbps_string", R"({"networks": {"inter_node": {"bandwidth": {"gbps": "25"}}}})",
                        "/networks/inter_node/bandwidth/gbps: expected a positive number, got \"25\""},
        SystemErrorCase{"tflops_zero", R"({"accelerator": {"op": {"default": {"tflops": 0}}}})",
                        "/accelerator/op/default/tflops: expected a positive number, got 0"},
        SystemErrorCase{"gbps_absurd", R"({"networks": {"inter_node": {"bandwidth": {"gbps": 1e-300}}}})",
                        "/networks/inter_node/bandwidth/gbps: expected GiB/s in [0.001, 10000000], got 1e-300"},
        SystemErrorCase{"bf16_op_above_default_peak", R"({"accelerator": {"op": {"default": {"tflops": 5}}}})",
                        "/accelerator/op/group_matmul/tflops: expected at most 5 TFLOP/s (/accelerator/op/default/tflops, "
                        "the dense bf16 peak MFU is measured against), got 312"},
        SystemErrorCase{"tflops_absurd", R"({"accelerator": {"op": {"default": {"tflops": 1e300}}}})",
                        "/accelerator/op/default/tflops: expected TFLOP/s in [0.001, 10000000], got 1e+300"},
        // Issue 32: every number has a physical range at reading (1e-300 printed a 301-digit step time, 1e308
        // latencies ran to exit 3 with "-nan ms", mem_gbs 1e308 wrote a null that report refused).
        SystemErrorCase{"efficiency_tiny", R"({"accelerator": {"op": {"default": {"efficient_factor": 1e-300}}}})",
                        "/accelerator/op/default/efficient_factor: expected an efficiency (or 0: not measured) in "
                        "[1e-09, 2], got 1e-300"},
        SystemErrorCase{"shape_efficiency_huge",
                        R"({"accelerator": {"op": {"matmul": {"accurate_efficient_factor": {"m=1": 7}}}}})",
                        "/accelerator/op/matmul/accurate_efficient_factor/m=1: expected an efficiency in [1e-09, 2], "
                        "got 7"},
        SystemErrorCase{"mem_gbs_huge", R"({"accelerator": {"mem_gbs": 1e308}})",
                        "/accelerator/mem_gbs: expected GB in [0.001, 1000000], got 1e+308"},
        SystemErrorCase{"latency_huge", R"({"networks": {"inter_node": {"op": {"p2p": {"latency_us": 1e308}}}}})",
                        "/networks/inter_node/op/p2p/latency_us: expected microseconds in [0, 1000000], got 1e+308"},
        SystemErrorCase{"scale_huge", R"({"networks": {"inter_node": {"op": {"all_reduce": {"scale": 1e308}}}}})",
                        "/networks/inter_node/op/all_reduce/scale: expected a factor in [0, 1000], got 1e+308"},
        SystemErrorCase{"fixed_latency_by_comm_num_huge",
                        R"({"networks": {"inter_node": {"op": {"p2p": {"fixed_latency_us_by_comm_num": {"8": 1e300}}}}}})",
                        "/networks/inter_node/op/p2p/fixed_latency_us_by_comm_num/8: expected microseconds in [0, "
                        "1000000], got 1e+300"},
        SystemErrorCase{"bandwidth_latency_huge", R"({"accelerator": {"bandwidth": {"default": {"latency_us": 1e308}}}})",
                        "/accelerator/bandwidth/default/latency_us: expected microseconds in [0, 1000000], got 1e+308"},
        SystemErrorCase{"derate_out_of_range", R"({"calibration": {"compute_derate": 0.6}})",
                        "/calibration/compute_derate: expected a fraction in [-0.2, 0.5] (a slow-down of compute "
                        "kernels), got 0.6"},
        SystemErrorCase{"kernel_floor_out_of_range", R"({"calibration": {"kernel_floor_us": 1e300}})",
                        "/calibration/kernel_floor_us: expected microseconds in [0, 500] (the time of a kernel's "
                        "launch), got 1e+300"},
        SystemErrorCase{"workspace_missing", R"({"workspaces": {"torch_cublas_bytes": 1}})",
                        "/workspaces/te_cublas_bytes: required field is missing"},
        SystemErrorCase{"workspace_huge", R"({"workspaces": {"torch_cublas_bytes": 2000000000, "te_cublas_bytes": 0}})",
                        "/workspaces/torch_cublas_bytes: expected bytes in [0, 1073741824] (a cuBLAS workspace), got "
                        "2000000000"},
        SystemErrorCase{"workspace_typo", R"({"workspaces": {"torch_cublas_bytes": 1, "te_cublas_bytes": 1, "te": 2}})",
                        "/workspaces/te: unknown field; valid names: te_cublas_bytes, torch_cublas_bytes"},
        SystemErrorCase{"host_launch_negative", R"({"host": {"launch_us": -1}})",
                        "/host/launch_us: expected a non-negative number, got -1"},
        SystemErrorCase{"host_op_huge", R"({"host": {"op_us": 20000}})",
                        "/host/op_us: expected microseconds in [0, 10000] (host time of a launch or an op), got 20000"},
        SystemErrorCase{"host_cpu_speed", R"({"host": {"cpu_speed": 1000}})",
                        "/host/cpu_speed: expected a factor in [0.01, 100] (the host's speed against the measured x86 "
                        "hosts), got 1000"},
        SystemErrorCase{"host_not_object", R"({"host": 6})", "/host: expected a JSON object {...}, got 6"},
        SystemErrorCase{"host_typo", R"({"host": {"launch": 6}})",
                        "/host/launch: unknown field; did you mean 'launch_us'?"},
        SystemErrorCase{"calibration_typo", R"({"calibration": {"kernel_floor": 5}})",
                        "/calibration/kernel_floor: unknown field; did you mean 'kernel_floor_us'?"},
        SystemErrorCase{"mode", R"({"accelerator": {"mode": "rooflin"}})",
                        "/accelerator/mode: expected one of \"roofline\", \"only_compute\", got \"rooflin\"; did you "
                        "mean 'roofline'?"},
        SystemErrorCase{"npn", R"({"num_per_node": 0})", "/num_per_node: expected a positive integer, got 0"},
        SystemErrorCase{"pcie_flag", R"({"networks": {"intra_with_pcie": "yes"}})",
                        "/networks/intra_with_pcie: expected true or false, got \"yes\""},
        SystemErrorCase{"net_not_object", R"({"networks": {"nvlink": 5}})",
                        "/networks/nvlink: expected a JSON object {...}, got 5"},
        SystemErrorCase{"missing_name", R"({"sys_name": null})", "/sys_name: required field is missing"},
        SystemErrorCase{"measured_tier", R"({"measured_collectives": {"inter_nod": {}}})",
                        "/measured_collectives/inter_nod: not a tier of /networks; did you mean 'inter_node'?"},
        SystemErrorCase{"measured_coll", R"({"measured_collectives": {"inter_node": {"allreduce": {}}}})",
                        "/measured_collectives/inter_node/allreduce: not a collective; did you mean 'all_reduce'?"},
        SystemErrorCase{"measured_ranks", R"({"measured_collectives": {"inter_node": {"all_reduce": {"08": {}}}}})",
                        "/measured_collectives/inter_node/all_reduce/08: expected a group size as the key (a "
                        "positive integer as a string)"},
        SystemErrorCase{"measured_eff",
                        R"({"measured_collectives": {"inter_node": {"all_reduce": {"8": {"1048576": 0}}}}})",
                        "/measured_collectives/inter_node/all_reduce/8/1048576: expected a positive number, got 0"}),
    [](const auto& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace simumax::config
