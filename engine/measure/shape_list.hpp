// The shapes a run looks up in the system's efficiency tables (accurate_efficient_factor): what simumax-measure
// times, with the same keys as summary.json's miss_efficiency, plus a standard sweep when there is no scenario.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::measure {

enum class ShapeKind { kGemm, kGroupedGemm, kSdpFwd, kSdpBwd };
const char* to_string(ShapeKind k);

// One table entry to measure.
struct Shape {
  std::string compute_op;  // the table: matmul, fp8_matmul, group_matmul, fp8_group_matmul, sdp_fwd, sdp_bwd
  std::string key;         // the exact accurate_efficient_factor key
  ShapeKind kind = ShapeKind::kGemm;
  // The FLOPs the engine charges for one call with this key: a measured time t gives the efficiency
  // flops / (tflops * t), so the engine reproduces t. For every GEMM key but SimuMax's router (its key counts the
  // gathered rows, its FLOPs the local ones) this is SimuMax's own 2*b*m*k*n.
  double flops = 0;
  std::map<std::string, std::string> fields;  // the key's "name=value" fields
  int64_t field(const std::string& name) const;  // a numeric field; throws common::InternalError when absent
  bool operator==(const Shape&) const = default;
};

// The key's "name=value" fields, in key order. Throws common::UsageError when a part has no '='.
std::vector<std::pair<std::string, std::string>> key_fields(const std::string& key);

// Every (compute op, key) the scenario's ops look up, each once, sorted by compute op then key. An op whose
// compute op is not a table of the system is looked up in "default" by the engine; it is still listed under its
// own compute op (the writer adds that table). A key charged two different FLOP counts by two ops keeps the first
// (a warning on the "measure" logger: one efficiency cannot give both their measured time).
std::vector<Shape> scenario_shapes(const config::Scenario& s);

// A sweep for a machine with no scenario at hand: bf16 GEMMs (all three layouts of square and transformer-like
// m, k, n from 1024 to 16384), grouped GEMMs (8 groups), and SDP forward/backward of 128-dim heads (timed causal,
// like every attention key: kernel_problem.hpp);
// fp8 GEMMs too when `fp8`. Sorted like scenario_shapes.
std::vector<Shape> standard_sweep(bool fp8);

// Shapes of both lists, each (compute op, key) once (`a`'s entry wins), sorted.
std::vector<Shape> merge_shapes(const std::vector<Shape>& a, const std::vector<Shape>& b);

// A copy of `sys` whose table for each shape's compute op holds the shape's key with efficiency `efficiency`
// (a table missing from `sys` is added with "default"'s tflops and efficient_factor).
config::SystemConfig with_table_entries(const config::SystemConfig& sys, const std::vector<Shape>& shapes,
                                        double efficiency);

}  // namespace simumax::measure
