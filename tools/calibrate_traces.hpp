// calibrate --trace: learn a machine from its real profiler traces — each shaped GEMM's and attention call's
// efficiency, each collective's bus bandwidth per group and message size, the host's launch time — into a base
// system config.
#pragma once

#include <string>
#include <vector>

namespace simumax::tools {

// The base system config with what the traces taught, as `calibrate` writes it.
struct LearntSystem {
  std::string json;  // the config's text (report::learnt_system_json)
  std::string what;  // "N matmul and N sdp entries, N network ops and N measured_collectives points"
};

// Reads `traces` (Kineto JSON, kernels classified by the `kernel_classes` table; empty: the default), prints what
// each kind of evidence taught and what it could not, and returns `system` with the learnt entries added or
// replaced (host.launch_us: the median launch call, from 100 launches on), every other entry kept. Warns on
// stderr of an efficiency above 1. Throws common::ConfigError naming the file (and field) when a trace or `system`
// cannot be read, `system` has no accelerator.op.matmul, or the traces teach nothing.
LearntSystem learn_from_traces(const std::vector<std::string>& traces, const std::string& system,
                               const std::string& kernel_classes);

}  // namespace simumax::tools
