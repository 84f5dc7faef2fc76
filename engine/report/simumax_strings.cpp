#include "engine/report/simumax_strings.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace simumax::report {

namespace {

std::string fixed4(double v, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f %s", v, unit);
  return buf;
}

// HumanReadableSize._convert with automatic units: divide while the value reaches the base.
std::string human(double v, double base, const char* const* units, int n) {
  int i = 0;
  while (v >= base && i < n - 1) {
    v /= base;
    ++i;
  }
  return fixed4(v, units[i]);
}

const char* yes(bool b) { return b ? "True" : "False"; }

}  // namespace

std::string simumax_parallelism(const config::StrategyConfig& st) {
  const std::string sp = st.enable_sequence_parallel ? "sp" + std::to_string(st.tp_size) + "." : "";
  return "seq" + std::to_string(st.seq_len) + ".mbs" + std::to_string(st.micro_batch_size) + ".mbc" +
         std::to_string(st.micro_batch_num) + ".gbs" + std::to_string(st.global_batch_size()) + " tp" +
         std::to_string(st.tp_size) + "." + sp + "cp" + std::to_string(st.cp_size) + ".ep" +
         std::to_string(st.ep_size) + ".pp" + std::to_string(st.pp_size) + ".dp" + std::to_string(st.dp_size()) +
         ".etp" + std::to_string(st.etp_size) + ".edp" + std::to_string(st.edp_size()) +
         ", world_size:" + std::to_string(st.world_size);
}

std::string simumax_granularity(const config::StrategyConfig& st) {
  using G = config::RecomputeGranularity;
  switch (st.recompute_granularity) {
    case G::kFullBlock: return "full_block";
    case G::kAttnOnly: return "attn_only";
    case G::kMlpOnly: return "mlp_only";
    case G::kSdpOnly: return "sdp_only";
    case G::kSelective: return "selective_recompute";
    case G::kNone: break;
  }
  return "";
}

std::string simumax_recompute_status(const config::StrategyConfig& st) {
  using G = config::RecomputeGranularity;
  const bool layers = st.recompute_layer_num > 0;
  const std::string g = simumax_granularity(st);
  const bool full = layers && st.recompute_granularity == G::kFullBlock;
  const bool partial = layers && (st.recompute_granularity == G::kAttnOnly || st.recompute_granularity == G::kMlpOnly ||
                                  st.recompute_granularity == G::kSdpOnly);
  const bool selective = layers && st.recompute_granularity == G::kSelective &&
                         (st.attn_recompute || st.mla_rms_recompute || st.mlp_recompute || st.mlp_rms_recompute);
  const bool megatron = st.enable_recompute && layers && st.recompute_granularity == G::kSelective &&
                        st.megatron_recompute && !st.megatron_recompute_modules.empty();
  if (!(st.enable_recompute && (full || partial || selective || megatron))) return "No Recompute";
  const std::string head = g + ", recompute_layer_num=" + std::to_string(st.recompute_layer_num);
  if (full || partial) return head;
  if (megatron) {
    std::vector<std::string> mods = st.megatron_recompute_modules;
    std::sort(mods.begin(), mods.end());
    mods.erase(std::unique(mods.begin(), mods.end()), mods.end());
    std::string joined;
    for (const auto& m : mods) joined += (joined.empty() ? "" : ",") + m;
    return head + ", megatron_recompute=True, modules=[" + joined + "]";
  }
  return head + ", attn=" + yes(st.attn_recompute) + ", attn_rms=" + yes(st.mla_rms_recompute) +
         ", mlp=" + yes(st.mlp_recompute) + ", mlp_rms=" + yes(st.mlp_rms_recompute) +
         ", recompute_variance=" + yes(st.recompute_variance);
}

const char* simumax_dtype(const config::StrategyConfig& st) { return st.fp8 ? "fp8" : "bf16"; }

double closed_form_param_numel(const config::ModelConfig& m, int64_t padded_vocab, bool activated) {
  const double H = static_cast<double>(m.hidden_size);
  const auto [qkv, proj] = model::attention_projection_elements(m);
  const double mlp = (m.use_swiglu ? 3 : 2) * H * static_cast<double>(m.ffn_hidden());
  const int64_t topk = m.topk.value_or(0);
  const double experts = activated ? (topk > 1 ? static_cast<double>(topk) : 1.0) : static_cast<double>(m.expert_num);
  const double layer = qkv + 2 * H + proj + experts * mlp;
  return 2 * static_cast<double>(padded_vocab) * H + layer * static_cast<double>(m.layer_num) + H;
}

ParamCounts param_counts(const config::Scenario& s, const model::StepModel& m) {
  const auto& st = s.strategy;
  ParamCounts c;
  std::vector<int> chunks;  // every layer of the model once: each stage's virtual chunks
  for (const auto& stage : m.compute_chunks) chunks.insert(chunks.end(), stage.begin(), stage.end());
  for (int ci : chunks) {
    for (const auto& b : m.chunks[ci].blocks) {
      for (const auto& op : *b.ops) {
        // Norms and the router are replicated over TP; SimuMax reports their own size.
        const bool replicated = op.type == model::OpType::kNorm || op.type == model::OpType::kRouter;
        c.dense += static_cast<double>(op.dense_numel * (replicated ? 1 : st.tp_size) * b.repeat);
        c.moe += static_cast<double>(op.moe_numel * st.ep_size * st.etp_size * b.repeat);
      }
    }
  }
  c.activated = s.model.is_moe() && s.model.expert_num > 0
                    ? c.dense + c.moe * static_cast<double>(s.model.topk.value_or(1)) /
                                    static_cast<double>(s.model.expert_num)
                    : c.all();
  return c;
}

const char* simumax_phase(std::optional<schedule::Pass> pass) {
  if (!pass || *pass == schedule::Pass::kForward) return "fwd";
  return pass == schedule::Pass::kRecompute ? "recompute_fwd" : "bwd";
}

std::string billions(double n) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.2fB", n / 1e9);
  return buf;
}

std::string human_bytes(double bytes) {
  static const char* const kUnits[] = {"B", "KB", "MB", "GB", "TB"};
  return human(bytes, 1024, kUnits, 5);
}

std::string human_ms(double ms) {
  static const char* const kUnits[] = {"ms", "s"};
  return human(ms, 1000, kUnits, 2);
}

std::string human_count(double n) {
  static const char* const kUnits[] = {"", "K", "M", "B", "T"};
  return human(n, 1000, kUnits, 5);
}

}  // namespace simumax::report
