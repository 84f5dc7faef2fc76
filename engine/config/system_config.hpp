// SimuMax's system config (system/*.json) as a plain struct: accelerator tables and network tiers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace simumax::config {

// A measured shape of an efficiency table, for the megatron fidelity's nearest-shape fallback: the log2 of its
// key's numeric fields, and its efficiency.
struct ShapePoint {
  std::vector<double> log2_dims;
  double efficiency = 0;
};

// Splits a SimuMax shape key ("b=1, m=4096, k=8192, n=10240, layout=TN, ...") into its kind (the field names
// and the non-numeric values: layout, dtypes, stage) and the log2 of its numeric fields. Returns false when
// the key has no numeric field or one that is not positive.
bool parse_shape_key(const std::string& key, std::string& kind, std::vector<double>& log2_dims);

// A low-precision GEMM entry ("fp8_matmul", "mxfp8_group_matmul", "nvfp4_matmul", ...): its peak may exceed the
// bf16 peak, and at the megatron fidelity an unmeasured one borrows the bf16 entry's efficiencies.
bool is_low_precision_op(const std::string& name);

struct ComputeOpConfig {
  double tflops = 0;                                   // decimal TFLOP/s peak
  double efficient_factor = 0;                         // fallback efficiency
  std::unordered_map<std::string, double> accurate_efficient_factor;  // exact shape key -> efficiency (hashed:
                                                                     // looked up for every GEMM of every candidate)
  // The table's parseable keys by kind (parse_shape_key), each list in key order (a deterministic fallback).
  std::unordered_map<std::string, std::vector<ShapePoint>> shapes;
};

struct BandwidthConfig {
  double gbps = 0;                   // GiB/s
  double efficient_factor = 1;
  double latency_us = 0;
  double fixed_latency = 0;
  std::map<int64_t, double> fixed_latency_us_by_comm_num;
};

struct NetOpConfig {
  double scale = 1;
  double offset = 0;
  std::optional<double> efficient_factor;
  std::optional<double> latency_us;
  std::optional<double> fixed_latency_us;
  std::map<int64_t, double> fixed_latency_us_by_comm_num;
  std::map<int64_t, double> dp_fixed_bw;  // GiB/s by group size (PCIe dense DP only)
};

struct NetworkConfig {
  double processor_usage = 0;  // fraction of the SMs its collectives take (compute slow-down when overlapped)
  BandwidthConfig bandwidth;
  std::map<std::string, NetOpConfig> op;  // all_reduce, all_gather, reduce_scatter, p2p, all2all
};

// Ours, beyond SimuMax's schema (system key "calibration", docs/accuracy.md): the machine parameters that
// `simumax-sim calibrate` fits from real runs. Used at megatron fidelity only.
struct Calibration {
  // Kernels with FLOPs (GEMMs, attention) take 1/(1 - derate) of their table time: the tables are one GPU's
  // back-to-back timings; a training job runs at sustained clocks and waits for the slowest GPU.
  double compute_derate = kDefaultComputeDerate;
  // The time floor of each kernel SimuMax omits; absent: the "default" bandwidth entry's latency_us.
  std::optional<double> kernel_floor_us;
  static constexpr double kDefaultComputeDerate = 0.0;
  // Beyond these the tables, not the clock, are wrong (negative: the tables were timed below the job's clock).
  static constexpr double kMinComputeDerate = -0.2;
  static constexpr double kMaxComputeDerate = 0.5;
  static constexpr double kMaxKernelFloorUs = 500;  // a launch gap of half a millisecond is no kernel floor
  bool operator==(const Calibration&) const = default;
};

// Ours, beyond SimuMax's schema (system key "host", docs/host.md): the CPU thread that issues a rank's kernels,
// a lane of the DAG beside its GPU streams (megatron fidelity only). A kernel starts only after its launch.
struct HostConfig {
  // Host time of one kernel launch: the cudaLaunchKernel call, median 4, 6, 7 and 8.9 us on the four PyTorch
  // profiler traces of ../shared/traces/kineto (docs/host.md). TransformerEngine launches most of a module's
  // kernels from C++, so the ATen operator around a lone launch (19 to 20.5 us there) is not charged per kernel.
  double launch_us = kDefaultLaunchUs;
  // Host time of one pass of an op of the op list beyond its launches: the Python of a TransformerEngine module
  // and its autograd node. No Megatron trace measured it: 0 until `calibrate` fits it.
  double op_us = 0;
  // Host times are divided by it (a CPU faster than the traces' x86 hosts: > 1).
  double cpu_speed = 1;
  static constexpr double kDefaultLaunchUs = 6;
  static constexpr double kMaxUs = 10000;  // 10 ms of host time per launch or op is no dispatch cost
  static constexpr double kMinCpuSpeed = 0.01, kMaxCpuSpeed = 100;
  bool operator==(const HostConfig&) const = default;
};

enum class AcceleratorMode { kRoofline, kOnlyCompute };

// Ours, beyond SimuMax's schema (top-level key "measured_collectives", docs/measure.md; SimuMax ignores unknown
// top-level keys): a measured collective's bandwidth efficiency at each message size, so the engine gives back the
// measured times where the two-parameter line (efficient_factor, latency_us) cannot.
// tier -> collective -> group size -> message bytes (SimuMax's size argument) -> efficiency.
using MeasuredCollectives =
    std::map<std::string, std::map<std::string, std::map<int64_t, std::map<int64_t, double>>>>;

// Ours, beyond SimuMax's schema (system key "workspaces", docs/accuracy.md): the cuBLAS workspaces PyTorch and
// TransformerEngine allocate through PyTorch's caching allocator on this GPU, held for the whole run. Used at
// megatron fidelity only; absent (SimuMax's own configs): none modelled.
struct Workspaces {
  // PyTorch's default cuBLAS workspace per (cuBLAS handle, stream) when CUBLAS_WORKSPACE_CONFIG is unset
  // (ATen CublasHandlePool.cpp parseChosenWorkspaceSize: ":4096:2:16:8" = 8.125 MiB; 32 MiB on Hopper, and on
  // Blackwell in the PyTorch versions that carry pytorch/pytorch#153556 or #175344).
  int64_t torch_cublas_bytes = 0;
  // TransformerEngine's one cuBLAS workspace per device (TE pytorch/cpp_extensions/gemm.py
  // get_cublas_workspace_size_bytes: 4 MiB before Hopper, 32 MiB from Hopper on, + 1 KiB of alignment from TE 2.10).
  int64_t te_cublas_bytes = 0;
  static constexpr int64_t kMaxBytes = int64_t{1} << 30;  // 1 GiB: beyond it the figure is no workspace
  bool operator==(const Workspaces&) const = default;
};

struct SystemConfig {
  std::string sys_name;
  int64_t num_per_node = 8;
  bool fc8 = false;                       // JSON "FC8"
  std::string backend;                    // accelerator.backend
  double mem_gbs = 0;                     // accelerator.mem_gbs: GPU memory, GiB
  AcceleratorMode mode = AcceleratorMode::kRoofline;
  std::map<std::string, ComputeOpConfig> op;          // must contain "default"
  std::map<std::string, BandwidthConfig> bandwidth;   // must contain "default"
  bool intra_with_pcie = false;
  std::map<std::string, NetworkConfig> networks;      // by tier name
  Calibration calibration;
  MeasuredCollectives measured_collectives;
  std::optional<Workspaces> workspaces;  // "workspaces"; absent: no framework workspace is modelled
  HostConfig host;                       // "host"; absent: the defaults with launch_us 0 (no lane)
  bool host_given = false;               // the config has a "host" object
  // Where `calibration` came from: "system config" (its "calibration" key), "shipped: <evidence>" (ours for its
  // sys_name, shipped_calibration.hpp), or "none" (the defaults).
  std::string calibration_source = "none";
};

}  // namespace simumax::config
