// Calibration from real profiler traces (`simumax-sim calibrate --trace`): each shaped GEMM's and fused attention
// call's achieved efficiency (achieved FLOP/s / the system's peak), keyed as SimuMax keys its matmul and sdp
// tables, and each collective's bus bandwidth per group and message size (measured_collectives, read at the
// megatron fidelity) and fitted into its network tier's efficiency and per-group-size fixed latency (SimuMax's line,
// for the simumax fidelity and the sizes outside), so that the system config times those shapes and messages as the
// real machine ran them. The other kind of evidence (step times) is calibrate.hpp.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "engine/config/strategy_config.hpp"
#include "engine/config/system_config.hpp"
#include "engine/compare/gemm_shape.hpp"
#include "engine/compare/kineto_insight.hpp"
#include "engine/compare/kineto_trace.hpp"

namespace simumax::calibrate {

// One matmul table entry learnt from the calls of one shape.
struct GemmEntry {
  std::string key;           // "b=1, m=1024, k=1705, n=512, layout=TN, accumulate=False, out_dtype=fp32"
  compare::GemmShape shape;
  std::string pass;          // forward / dgrad / wgrad (layout TN / NN / NT)
  int64_t calls = 0;
  double median_us = 0;      // of the calls' kernel time (kernels of one call summed: a GEMM and its split-K reduce)
  double efficiency = 0;     // flops / (median time x peak)
  std::string source;        // the real op and trace ("aten::addmm in rank3.json.gz")
};

// One sdp_fwd / sdp_bwd table entry learnt from the calls of one attention shape.
struct AttentionEntry {
  std::string key;     // "batch=2, seq_len=4096, head_num=32, kv_head_num=8, qk_head_dim=128, v_head_dim=128, ..."
  std::string op;      // sdp_fwd / sdp_bwd
  compare::AttentionShape shape;
  int64_t calls = 0;
  double median_us = 0;
  double flops = 0;        // SimuMax's FLOPs of the pass (attention_flops)
  double efficiency = 0;   // flops / (median time x the op's peak)
  std::string source;
};

struct TraceEvidence {
  std::vector<GemmEntry> gemm;        // in key order
  int64_t gemm_calls = 0;             // GEMM-class calls seen
  int64_t gemm_calls_unshaped = 0;    // without a shape (no Input Dims, or an op gemm_shape does not know)
  int64_t attention_calls = 0;        // attention-class calls seen (add_attention)
  int64_t attention_calls_unshaped = 0;  // without a known fused-attention op and its Input Dims
  std::vector<AttentionEntry> attention;  // in (op, key) order
  int64_t traces_without_shapes = 0;  // traces with no Input Dims at all (record_shapes=False)
};

// The SimuMax layout of a real GEMM call: forward ops are TN; in the backward a call whose output has the shape
// of a forward GEMM's weight (k x n, or n x k) is the weight gradient (NT, accumulate), else the input gradient
// (NN). `forward_weights` holds every forward GEMM's (k, n).
std::string layout_of(const compare::RealOp& op, const std::vector<std::pair<int64_t, int64_t>>& forward_weights);

// "float" -> "fp32", "c10::BFloat16" -> "bf16", "c10::Half" -> "fp16"; "" when unknown.
std::string dtype_of(const std::string& input_type);

// Adds one trace's ops (TraceInsight::ops, GEMM class; their call_us) to the per-key calls in `calls`.
void add_trace(const std::string& trace, const compare::TraceInsight& insight,
               std::map<std::string, GemmEntry>& entries, std::map<std::string, std::vector<double>>& calls,
               TraceEvidence& evidence);

// The entries, each with the median over all its calls and its efficiency against `peak_tflops`.
// REQUIRES: peak_tflops > 0.
TraceEvidence finish(std::map<std::string, GemmEntry> entries, const std::map<std::string, std::vector<double>>& calls,
                     TraceEvidence evidence, double peak_tflops);

// SimuMax's FLOPs of one flash-attention pass: base = b * heads * s^2 * (dqk + dv) (its 2*b*h*d*s^2 when dqk ==
// dv); the forward 2 * base, the backward 5 * base (use_flash_sdp; no causal halving, no sparsity).
double attention_flops(const compare::AttentionShape& s);
// SimuMax's sdp key of a shape (the same for both passes).
std::string attention_key(const compare::AttentionShape& s, bool qkv_contiguous);

// Adds one trace's attention-class ops with a shape to `calls` (keyed "sdp_fwd|<key>"), counting the others.
void add_attention(const std::string& trace, const compare::TraceInsight& insight, bool qkv_contiguous,
                   std::map<std::string, AttentionEntry>& entries, std::map<std::string, std::vector<double>>& calls,
                   TraceEvidence& evidence);

// The attention entries, each with the median over its calls and its efficiency against its op's peak.
// REQUIRES: both peaks > 0.
void finish_attention(std::map<std::string, AttentionEntry> entries,
                      const std::map<std::string, std::vector<double>>& calls, double fwd_tflops, double bwd_tflops,
                      TraceEvidence& evidence);

// One (collective, group size, message size) of the traces.
struct CollectivePoint {
  std::string type;          // the NCCL call: all_reduce, all_gather, reduce_scatter, all_to_all, send, recv
  std::string op;            // SimuMax's network op: all_reduce, all_gather, reduce_scatter, all2all, p2p
  std::string net;           // the tier the system config times this group on
  int64_t group = 0;
  double bytes = 0;          // as nccl-tests sizes it (compare::CollectiveCall::bytes)
  bool group_is_world = false;
  int64_t calls = 0;
  double min_us = 0;         // the fastest call: the others waited longer for their peers
  double median_us = 0;
  double bus_gbps = 0;       // nccl-tests' bus bandwidth of the fastest call, GB/s (1e9 B/s)
  std::string role;          // what the line used it for: "bandwidth", "latency", or "check" (not on the line)
  bool measured = false;     // written into measured_collectives (its own efficiency)
  double model_us = 0;       // the learnt config's time for it at the simumax fidelity (the line)
  double megatron_us = 0;    // ... at the megatron fidelity (measured_collectives within its sizes)
};

// What one (tier, op) of the system config learnt: the op's efficient_factor, its per-hop latency_us (which
// SimuMax multiplies by the group's hops on 8-GPU nodes) and a fixed latency per group size.
struct NetworkFit {
  std::string net, op;
  double efficient_factor = 0;
  double latency_us = 0;
  std::map<int64_t, double> fixed_latency_us;  // by group size
};

struct CollectiveEvidence {
  std::vector<CollectivePoint> points;  // by (net, op, group, bytes)
  std::vector<NetworkFit> fits;
  // Every point's own efficiency (tier -> op -> group -> bytes), from measure::fit_collective, simumax-measure's
  // fit: the fastest call of each (op, group, bytes) (a send and a recv of one size are one p2p point).
  config::MeasuredCollectives curves;
  int64_t calls = 0;              // NCCL kernels of the profiled steps
  int64_t calls_unsized = 0;      // without a message size (no Input Dims / msg nelems) or a group size
  int64_t calls_unmodelled = 0;   // collectives SimuMax has no op for (broadcast, reduce, barrier, ...)
  int64_t calls_group_assumed = 0;  // their group size taken as the trace's world size
  std::map<std::string, int64_t> unlearnt;  // "<collective>: <why it was not learnt>" -> calls (add_collectives)
  std::vector<std::string> notes;  // what could not be learnt, and why (learn_collectives: `unlearnt` first)
};

// SimuMax's network op for an NCCL call type ("all_to_all" -> "all2all", "send" -> "p2p"); "" for none.
std::string network_op_of(const std::string& type);
// nccl-tests' bus bandwidth factor (doc/PERFORMANCE.md): all-reduce 2(n-1)/n; all-gather, reduce-scatter and
// all-to-all (n-1)/n; send/recv 1.
double bus_factor(const std::string& op, int64_t group);

// Adds one trace's NCCL calls to `calls`, keyed by (type, group, bytes).
using CollectiveKey = std::tuple<std::string, int64_t, double>;
void add_collectives(const compare::KinetoProfile& profile, std::map<CollectiveKey, std::vector<double>>& calls,
                     std::map<CollectiveKey, bool>& group_is_world, CollectiveEvidence& evidence);

// Fits each (tier, op) with calls: t = bytes_term / efficient_factor + latency_us * hops(group) + fixed(group),
// with the bytes term and hops as the system config times them (cost::comm_time at the simumax fidelity, at layer
// stage; all-to-all as an EP one). The line runs through the message with the highest bus bandwidth (the least
// waiting for peers) and the smallest message of its group; each other group's fixed latency comes from its
// smallest message. Those points reproduce exactly at the simumax fidelity; the other messages are checks (their
// model_us). Every point also goes into `curves` (measure::fit_collective), so that at the megatron fidelity each
// takes its own fastest time (megatron_us). The line and the curve are both computed from the base's formula
// terms, never from a curve the base already holds.
CollectiveEvidence learn_collectives(const std::map<CollectiveKey, std::vector<double>>& calls,
                                     const std::map<CollectiveKey, bool>& group_is_world, CollectiveEvidence evidence,
                                     const config::SystemConfig& base);

// `base` with every fit applied (what the written config reads back as).
config::SystemConfig with_network_fits(config::SystemConfig base, const std::vector<NetworkFit>& fits);

// Each group size's curve of `curves`, merged size by size into `base`'s curve of that tier, op and group size
// (the base's other sizes kept, the learnt ones added or replaced): what calibrate --trace writes for each group
// size it learnt (report::learnt_system_json).
config::MeasuredCollectives merged_curves(const config::MeasuredCollectives& base,
                                          const config::MeasuredCollectives& curves);

// `sys` with each group size's curve of `groups` (merged_curves) replacing its own: what the written config reads
// back as.
config::SystemConfig with_curves(config::SystemConfig sys, const config::MeasuredCollectives& groups);

// The config's time of one point at a fidelity, in microseconds.
double collective_model_us(const config::SystemConfig& sys, const CollectivePoint& p, config::Fidelity fidelity);

}  // namespace simumax::calibrate
