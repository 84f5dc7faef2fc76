// SimuMax's system config (system/*.json) as a plain struct: accelerator tables and network tiers.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>

namespace simumax::config {

struct ComputeOpConfig {
  double tflops = 0;                                   // decimal TFLOP/s peak
  double efficient_factor = 0;                         // fallback efficiency
  std::unordered_map<std::string, double> accurate_efficient_factor;  // exact shape key -> efficiency (hashed:
                                                                     // looked up for every GEMM of every candidate)
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

enum class AcceleratorMode { kRoofline, kOnlyCompute };

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
};

}  // namespace simumax::config
