#include "engine/config/system_config.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "engine/common/logging.hpp"
#include "engine/config/config_parsers.hpp"
#include "engine/config/shipped_calibration.hpp"

namespace simumax::config::detail {
namespace {

// The names SimuMax looks up; other names load but are never used, which is most likely a typo.
// Ours beyond them: the block-scaled recipes' GEMM entries (docs/low-precision.md).
const std::vector<std::string> kComputeOps = {"default",           "matmul",       "fp8_matmul",
                                              "group_matmul",      "fp8_group_matmul", "sdp_fwd",
                                              "sdp_bwd",           "mxfp8_matmul", "mxfp8_group_matmul",
                                              "nvfp4_matmul",      "nvfp4_group_matmul"};
const std::vector<std::string> kBandwidthNames = {"default",          "permute_fwd", "permute_bwd", "ce",
                                                  "ce_fusion",        "matmul",      "fp8_matmul",  "group_matmul",
                                                  "fp8_group_matmul", "sdp_fwd",     "sdp_bwd",
                                                  "mxfp8_matmul", "mxfp8_group_matmul", "nvfp4_matmul",
                                                  "nvfp4_group_matmul"};
const std::vector<std::string> kNetOps = {"all_reduce", "all_gather", "reduce_scatter", "p2p", "all2all"};

bool contains(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

void warn_unused_name(const ObjectReader& table, const std::string& name, const std::vector<std::string>& used) {
  if (contains(used, name)) return;
  const FieldLocation at = table.where(name);
  common::logger("config")->warn("{}: {}: never looked up (SimuMax ignores it too);{}", at.file, at.pointer,
                                 name_suggestion(name, used));
}

// Beyond these a config describes no machine: the run would print times of 1e300 ms or MFU in the hundreds.
// Compute efficiencies reach 1.2 in SimuMax's own attention tables (FLOPs counted without the causal mask); a tiny
// GEMM learnt from a trace runs below 0.001 of its peak: [1e-9, 2] is accepted, 1e-300 is not (a 301-digit step
// time).
constexpr double kMinGbps = 1e-3, kMaxGbps = 1e7, kMinTflops = 1e-3, kMaxTflops = 1e7;
constexpr double kMinEfficiency = 1e-9, kMaxEfficiency = 2;
// A collective's efficiency is against its tier's nominal bandwidth, which a measurement may beat several times
// (calibrate learnt 2.6 for an all2all over PCIe): up to 100, for a bandwidth entry too (one reader for both).
constexpr double kMaxNetEfficiency = 100;
constexpr double kMaxLatencyUs = 1e6;         // a second per call
constexpr double kMinMemGb = 1e-3, kMaxMemGb = 1e6;
constexpr double kMaxAlgorithmFactor = 1e3;   // a net op's scale and |offset|

double in_range(ObjectReader& r, const std::string& key, double v, double lo, double hi, const char* unit) {
  if (v < lo || v > hi) r.fail(key, fmt::format("expected {} in [{}, {}], got {}", unit, lo, hi, v));
  return v;
}

std::optional<double> in_range(ObjectReader& r, const std::string& key, std::optional<double> v, double lo, double hi,
                               const char* unit) {
  if (v) in_range(r, key, *v, lo, hi, unit);
  return v;
}

// Keys are group sizes written as strings ("8"): SimuMax looks them up with str(group_size). Values in [lo, hi].
std::map<int64_t, double> read_by_comm_num(ObjectReader& r, const std::string& key, Sign value_sign, double lo,
                                           double hi, const char* unit) {
  auto table = r.optional_object(key);
  if (!table) return {};
  std::map<int64_t, double> out;
  for (const auto& name : table->keys()) {
    const bool canonical = !name.empty() && name.size() <= 9 && name[0] != '0' &&
                           std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!canonical) table->fail(name, "expected a group size as the key (a positive integer as a string, e.g. \"8\")");
    if (const auto v = in_range(*table, name, table->optional_number(name, value_sign), lo, hi, unit)) {
      out[std::stoll(name)] = *v;
    }
  }
  return out;
}

BandwidthConfig read_bandwidth(ObjectReader r) {
  BandwidthConfig b;
  b.gbps = in_range(r, "gbps", r.required_number("gbps", Sign::kPositive), kMinGbps, kMaxGbps, "GiB/s");
  b.efficient_factor = in_range(r, "efficient_factor", r.required_number("efficient_factor", Sign::kPositive),
                                kMinEfficiency, kMaxNetEfficiency, "an efficiency");
  b.latency_us = in_range(r, "latency_us", r.required_number("latency_us", Sign::kNonNegative), 0, kMaxLatencyUs,
                          "microseconds");
  b.fixed_latency = in_range(r, "fixed_latency", r.number_or("fixed_latency", 0.0, Sign::kNonNegative), 0,
                             kMaxLatencyUs, "microseconds");
  b.fixed_latency_us_by_comm_num = read_by_comm_num(r, "fixed_latency_us_by_comm_num", Sign::kNonNegative, 0,
                                                    kMaxLatencyUs, "microseconds");
  r.finish(UnknownKeys::kError);
  return b;
}

ComputeOpConfig read_compute_op(ObjectReader r) {
  ComputeOpConfig op;
  op.tflops = in_range(r, "tflops", r.required_number("tflops", Sign::kPositive), kMinTflops, kMaxTflops, "TFLOP/s");
  // Zero is allowed: b200's fp8 entries ship with 0 (an fp8 run there is flagged by check_scenario).
  op.efficient_factor = r.required_number("efficient_factor", Sign::kNonNegative);
  if (op.efficient_factor != 0) {
    in_range(r, "efficient_factor", op.efficient_factor, kMinEfficiency, kMaxEfficiency,
             "an efficiency (or 0: not measured)");
  }
  if (auto table = r.optional_object("accurate_efficient_factor")) {
    for (const auto& key : table->keys()) {
      // A null entry is a shape that was not measured: SimuMax falls back to efficient_factor.
      if (const auto eff = in_range(*table, key, table->optional_number(key, Sign::kPositive), kMinEfficiency,
                                    kMaxEfficiency, "an efficiency")) {
        op.accurate_efficient_factor[key] = *eff;
      }
    }
  }
  for (const auto& [key, eff] : std::map<std::string, double>(op.accurate_efficient_factor.begin(),
                                                               op.accurate_efficient_factor.end())) {
    std::string kind;
    ShapePoint p;
    if (!parse_shape_key(key, kind, p.log2_dims)) continue;
    p.efficiency = eff;
    op.shapes[kind].push_back(std::move(p));
  }
  r.finish(UnknownKeys::kError);
  return op;
}

NetOpConfig read_net_op(ObjectReader r) {
  NetOpConfig op;
  op.scale = in_range(r, "scale", r.required_number("scale", Sign::kNonNegative), 0, kMaxAlgorithmFactor, "a factor");
  op.offset = in_range(r, "offset", r.required_number("offset", Sign::kAny), -kMaxAlgorithmFactor, kMaxAlgorithmFactor,
                       "ranks");
  op.efficient_factor = in_range(r, "efficient_factor", r.optional_number("efficient_factor", Sign::kPositive),
                                 kMinEfficiency, kMaxNetEfficiency, "an efficiency");
  op.latency_us = in_range(r, "latency_us", r.optional_number("latency_us", Sign::kNonNegative), 0, kMaxLatencyUs,
                           "microseconds");
  op.fixed_latency_us = in_range(r, "fixed_latency_us", r.optional_number("fixed_latency_us", Sign::kNonNegative), 0,
                                 kMaxLatencyUs, "microseconds");
  op.fixed_latency_us_by_comm_num = read_by_comm_num(r, "fixed_latency_us_by_comm_num", Sign::kNonNegative, 0,
                                                     kMaxLatencyUs, "microseconds");
  op.dp_fixed_bw = read_by_comm_num(r, "dp_fixed_bw", Sign::kPositive, kMinGbps, kMaxGbps, "GiB/s");
  r.finish(UnknownKeys::kError);
  return op;
}

NetworkConfig read_network(ObjectReader r) {
  NetworkConfig net;
  // SimuMax reads it and never uses it; we take it as the default SM slow-down of overlapped compute.
  net.processor_usage =
      in_range(r, "processor_usage", r.optional_number("processor_usage", Sign::kNonNegative).value_or(0.0), 0, 1,
               "a fraction");
  net.bandwidth = read_bandwidth(r.object("bandwidth"));
  ObjectReader ops = r.object("op");
  for (const auto& name : ops.keys()) {
    warn_unused_name(ops, name, kNetOps);
    net.op[name] = read_net_op(ops.object(name));
  }
  for (const auto& name : kNetOps) {
    if (net.op.count(name) == 0)
      ops.fail(name,
               "required: every network tier must define all of all_reduce, "
               "all_gather, reduce_scatter, p2p, all2all");
  }
  r.finish(UnknownKeys::kWarn);
  return net;
}

void read_accelerator(ObjectReader r, SystemConfig& sys) {
  sys.backend = r.required_string("backend");
  sys.mem_gbs = in_range(r, "mem_gbs", r.required_number("mem_gbs", Sign::kPositive), kMinMemGb, kMaxMemGb, "GB");
  const std::string mode = r.optional_choice("mode", {"roofline", "only_compute"}).value_or("");
  if (mode.empty()) r.fail("mode", "required field is missing: \"roofline\" or \"only_compute\"");
  sys.mode = mode == "only_compute" ? AcceleratorMode::kOnlyCompute : AcceleratorMode::kRoofline;
  ObjectReader ops = r.object("op");
  for (const auto& name : ops.keys()) {
    warn_unused_name(ops, name, kComputeOps);
    sys.op[name] = read_compute_op(ops.object(name));
  }
  if (sys.op.count("default") == 0) ops.fail("default", "required: the compute entry used for unlisted ops");
  // MFU is measured against default's tflops, the dense bf16 peak (as SimuMax does): a bf16 op with a higher peak
  // makes MFU meaningless (default 5 beside a 2250 TFLOP/s matmul gave MFU 165). fp8 peaks may exceed it.
  const double peak_tflops = sys.op.at("default").tflops;
  for (const auto& name : ops.keys()) {
    if (is_low_precision_op(name) || sys.op.at(name).tflops <= peak_tflops) continue;
    ops.object(name).fail("tflops", fmt::format("expected at most {} TFLOP/s (/accelerator/op/default/tflops, the "
                                                "dense bf16 peak MFU is measured against), got {}",
                                                peak_tflops, sys.op.at(name).tflops));
  }
  ObjectReader bandwidths = r.object("bandwidth");
  for (const auto& name : bandwidths.keys()) {
    warn_unused_name(bandwidths, name, kBandwidthNames);
    sys.bandwidth[name] = read_bandwidth(bandwidths.object(name));
  }
  if (sys.bandwidth.count("default") == 0) {
    bandwidths.fail("default", "required: the memory bandwidth used for unlisted ops");
  }
  r.finish(UnknownKeys::kWarn);
}

Calibration read_calibration(ObjectReader r) {
  Calibration c;
  c.compute_derate = r.number_or("compute_derate", Calibration::kDefaultComputeDerate, Sign::kAny);
  if (c.compute_derate < Calibration::kMinComputeDerate || c.compute_derate > Calibration::kMaxComputeDerate) {
    r.fail("compute_derate", fmt::format("expected a fraction in [{}, {}] (a slow-down of compute kernels), got {}",
                                         Calibration::kMinComputeDerate, Calibration::kMaxComputeDerate,
                                         c.compute_derate));
  }
  c.kernel_floor_us = r.optional_number("kernel_floor_us", Sign::kNonNegative);
  if (c.kernel_floor_us && *c.kernel_floor_us > Calibration::kMaxKernelFloorUs) {
    r.fail("kernel_floor_us", fmt::format("expected microseconds in [0, {}] (the time of a kernel's launch), got {}",
                                          Calibration::kMaxKernelFloorUs, *c.kernel_floor_us));
  }
  r.finish(UnknownKeys::kError);
  return c;
}

// "measured_collectives": {tier: {collective: {"<group size>": {"<bytes>": efficiency}}}}.
MeasuredCollectives read_measured_collectives(ObjectReader r, const SystemConfig& sys) {
  MeasuredCollectives out;
  auto positive_key = [](ObjectReader& table, const std::string& name, const char* what) {
    const bool canonical = !name.empty() && name.size() <= 15 && name[0] != '0' &&
                           std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!canonical) table.fail(name, std::string("expected ") + what + " as the key (a positive integer as a string)");
    return std::stoll(name);
  };
  for (const auto& tier : r.keys()) {
    if (!tier.empty() && tier[0] == '_') continue;
    std::vector<std::string> tiers;
    for (const auto& [name, net] : sys.networks) tiers.push_back(name);
    if (sys.networks.count(tier) == 0) r.fail(tier, "not a tier of /networks;" + name_suggestion(tier, tiers));
    ObjectReader colls = r.object(tier);
    for (const auto& coll : colls.keys()) {
      if (!contains(kNetOps, coll)) colls.fail(coll, "not a collective;" + name_suggestion(coll, kNetOps));
      ObjectReader sizes = colls.object(coll);
      for (const auto& n_key : sizes.keys()) {
        const int64_t n = positive_key(sizes, n_key, "a group size");
        ObjectReader curve = sizes.object(n_key);
        for (const auto& bytes_key : curve.keys()) {
          const int64_t bytes = positive_key(curve, bytes_key, "a message size in bytes");
          out[tier][coll][n][bytes] = in_range(curve, bytes_key, curve.required_number(bytes_key, Sign::kPositive),
                                               kMinEfficiency, kMaxNetEfficiency, "an efficiency");
        }
        curve.finish(UnknownKeys::kError);
      }
      sizes.finish(UnknownKeys::kError);
    }
    colls.finish(UnknownKeys::kError);
  }
  r.finish(UnknownKeys::kError);
  return out;
}

Workspaces read_workspaces(ObjectReader r) {
  Workspaces w;
  for (auto [key, field] : {std::pair<const char*, int64_t*>{"torch_cublas_bytes", &w.torch_cublas_bytes},
                            {"te_cublas_bytes", &w.te_cublas_bytes}}) {
    *field = r.required_int(key, Sign::kNonNegative);
    if (*field > Workspaces::kMaxBytes) {
      r.fail(key, fmt::format("expected bytes in [0, {}] (a cuBLAS workspace), got {}", Workspaces::kMaxBytes, *field));
    }
  }
  r.finish(UnknownKeys::kError);
  return w;
}

HostConfig read_host(ObjectReader r) {
  HostConfig h;
  for (auto [key, field] : {std::pair<const char*, double*>{"launch_us", &h.launch_us}, {"op_us", &h.op_us}}) {
    *field = r.number_or(key, *field, Sign::kNonNegative);
    if (*field > HostConfig::kMaxUs) {
      r.fail(key, fmt::format("expected microseconds in [0, {}] (host time of a launch or an op), got {}",
                              HostConfig::kMaxUs, *field));
    }
  }
  h.cpu_speed = r.number_or("cpu_speed", h.cpu_speed, Sign::kPositive);
  if (h.cpu_speed < HostConfig::kMinCpuSpeed || h.cpu_speed > HostConfig::kMaxCpuSpeed) {
    r.fail("cpu_speed", fmt::format("expected a factor in [{}, {}] (the host's speed against the measured x86 hosts), "
                                    "got {}", HostConfig::kMinCpuSpeed, HostConfig::kMaxCpuSpeed, h.cpu_speed));
  }
  r.finish(UnknownKeys::kError);
  return h;
}

}  // namespace

SystemConfig parse_system(const Json& json, const ConfigOrigin& origin) {
  ObjectReader r(json, origin);
  SystemConfig sys;
  sys.sys_name = r.required_string("sys_name");
  sys.num_per_node = r.required_int("num_per_node", Sign::kPositive);
  sys.fc8 = r.bool_or("FC8", false);
  read_accelerator(r.object("accelerator"), sys);
  ObjectReader networks = r.object("networks");
  sys.intra_with_pcie = networks.bool_or("intra_with_pcie", false);
  for (const auto& name : networks.keys()) {
    if (name != "intra_with_pcie") sys.networks[name] = read_network(networks.object(name));
  }
  if (auto m = r.optional_object("measured_collectives")) sys.measured_collectives = read_measured_collectives(*m, sys);
  if (auto c = r.optional_object("calibration")) {
    sys.calibration = read_calibration(std::move(*c));
    sys.calibration_source = "system config";
  } else if (auto shipped = shipped_calibration(sys.sys_name)) {
    sys.calibration = shipped->calibration;
    sys.calibration_source = "shipped: " + shipped->evidence;
  }
  if (auto w = r.optional_object("workspaces")) sys.workspaces = read_workspaces(std::move(*w));
  // Without a "host" object the lane costs nothing yet (launch_us 0: the step as before the lane existed) until
  // the shipped calibrations are refitted with it (docs/host.md); "host": {} takes the measured defaults.
  if (auto h = r.optional_object("host")) {
    sys.host = read_host(std::move(*h));
    sys.host_given = true;
  } else {
    sys.host.launch_us = 0;
  }
  r.finish(UnknownKeys::kWarn);
  return sys;
}

}  // namespace simumax::config::detail

namespace simumax::config {

bool is_low_precision_op(const std::string& name) {
  return name.starts_with("fp8_") || name.starts_with("mxfp8_") || name.starts_with("nvfp4_");
}

bool parse_shape_key(const std::string& key, std::string& kind, std::vector<double>& log2_dims) {
  kind.clear();
  log2_dims.clear();
  size_t pos = 0;
  while (pos < key.size()) {
    while (pos < key.size() && key[pos] == ' ') ++pos;
    size_t end = key.find(',', pos);
    if (end == std::string::npos) end = key.size();
    const size_t eq = key.find('=', pos);
    if (eq == std::string::npos || eq >= end) return false;
    const bool numeric = end > eq + 1 && end - eq - 1 <= 12 &&
                         std::all_of(key.begin() + static_cast<std::ptrdiff_t>(eq + 1),
                                     key.begin() + static_cast<std::ptrdiff_t>(end),
                                     [](char c) { return c >= '0' && c <= '9'; });
    if (numeric) {
      const double v = static_cast<double>(std::stoll(key.substr(eq + 1, end - eq - 1)));
      if (v <= 0) return false;
      kind.append(key, pos, eq - pos).push_back(';');
      log2_dims.push_back(std::log2(v));
    } else {
      kind.append(key, pos, end - pos).push_back(';');
    }
    pos = end + 1;
  }
  return !log2_dims.empty();
}

}  // namespace simumax::config
