#include "engine/search/candidate.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace simumax::search {

using common::ConfigError;
using config::RecomputeGranularity;
using config::StrategyConfig;

namespace {

// The file name the search's own rejections carry (they are about the search arguments, not a config file).
constexpr const char* kSearchOrigin = "search";

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

// The layer split the search gives a pipeline size when the base strategy sets none: even when pp divides the
// layers, else SimuMax's search split (ceil(L/pp) layers on all stages but the last, which takes the rest).
void set_layer_split(StrategyConfig& st, const StrategyConfig& base, const config::ModelConfig& m, bool uneven) {
  const bool explicit_split = base.num_layers_in_first_pipeline_stage || base.num_layers_in_last_pipeline_stage;
  const bool counted_extra = base.account_for_embedding_in_pipeline_split || base.account_for_loss_in_pipeline_split;
  if (explicit_split || counted_extra || !uneven || st.pp_size == 1 || m.layer_num % st.pp_size == 0) return;
  const int64_t last = m.layer_num - ceil_div(m.layer_num, st.pp_size) * (st.pp_size - 1);
  if (last > 0) st.num_layers_in_last_pipeline_stage = last;
}

void set_recompute(StrategyConfig& st, const RecomputeChoice& r, const config::ModelConfig& m) {
  if (r.kind == RecomputeKind::kAsBase) return;
  st.megatron_recompute = false;
  st.megatron_recompute_modules.clear();
  st.attn_recompute = st.mla_rms_recompute = st.mlp_recompute = st.mlp_rms_recompute = false;
  if (r.kind == RecomputeKind::kNone) {
    st.recompute_granularity = RecomputeGranularity::kNone;
    st.recompute_layer_num = 0;
    return;
  }
  st.enable_recompute = true;
  const int64_t all_layers = max_layers_per_chunk(st, m);
  if (r.kind == RecomputeKind::kFull) {
    st.recompute_granularity = RecomputeGranularity::kFullBlock;
    st.recompute_variance = false;  // as SimuMax's sanity_check does under full_block
    st.recompute_layer_num = r.layers == RecomputeChoice::kAllLayers ? all_layers : std::max<int64_t>(r.layers, 1);
    return;
  }
  st.recompute_granularity = RecomputeGranularity::kSelective;
  st.recompute_layer_num = all_layers;
  const bool attn = r.kind != RecomputeKind::kSelectiveMlp, mlp = r.kind != RecomputeKind::kSelectiveAttn;
  st.attn_recompute = st.mla_rms_recompute = attn;
  st.mlp_recompute = st.mlp_rms_recompute = mlp;
}

// A candidate's recompute choices: full:* becomes one per layer count of the layout's largest chunk.
std::vector<RecomputeChoice> expand_recompute(const SearchSpace& space, const StrategyConfig& layout,
                                              const config::ModelConfig& m) {
  std::vector<RecomputeChoice> out;
  const int64_t layers = max_layers_per_chunk(layout, m);
  for (const auto& r : space.recompute) {
    if (r.kind != RecomputeKind::kFull || r.layers != RecomputeChoice::kEveryCount) {
      if (std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
      continue;
    }
    for (int64_t n = 1; n <= layers; ++n) {
      // "full" (every layer) is the same strategy as full:<layers>: keep one of them.
      const RecomputeChoice c{RecomputeKind::kFull, n};
      const RecomputeChoice all{RecomputeKind::kFull, RecomputeChoice::kAllLayers};
      if (n == layers && std::find(out.begin(), out.end(), all) != out.end()) continue;
      if (std::find(out.begin(), out.end(), c) == out.end()) out.push_back(c);
    }
  }
  return out;
}

std::vector<int64_t> micro_batch_sizes(const SearchSpace& space, SearchMode mode, const Candidate& c,
                                       const JobShape& job) {
  if (!space.mbs.empty()) return space.mbs;
  std::vector<int64_t> out;
  if (c.dp == 0 || job.global_batch_size % c.dp != 0) return {1};  // illegal anyway: counted once
  const int64_t per_replica = job.global_batch_size / c.dp;
  for (int64_t mbs = 1; mbs <= per_replica; ++mbs) {
    if (per_replica % mbs != 0) continue;
    // SimuMax's fixed-GBS search needs at least one micro-batch per pipeline stage.
    if (mode == SearchMode::kMicroBatch && per_replica / mbs < c.pp) continue;
    out.push_back(mbs);
  }
  if (out.empty()) out.push_back(0);  // no size gives micro_batch_num >= pp: one candidate, skipped by apply()
  return out;
}

void visit_variants(const CandidateFn& visit, Candidate c, const SearchSpace& space, SearchMode mode,
                   const config::Scenario& base, const JobShape& job) {
  StrategyConfig layout = base.strategy;
  layout.pp_size = c.pp, layout.interleaving_size = c.vpp;
  set_layer_split(layout, base.strategy, base.model, space.uneven_pp);
  const auto recomputes = expand_recompute(space, layout, base.model);
  for (int64_t mbs : micro_batch_sizes(space, mode, c, job)) {
    c.mbs = mbs;
    const int64_t replica_batch = mbs * c.dp;
    c.mbc = replica_batch > 0 && job.global_batch_size % replica_batch == 0 ? job.global_batch_size / replica_batch : 0;
    for (const auto& r : recomputes) {
      c.recompute = r;
      for (int64_t zero : space.zero) {
        c.zero = zero;
        for (bool sp : space.sp) {
          // Without tensor parallelism SP changes nothing: sp off would repeat sp on.
          if (!sp && c.tp == 1 && space.sp.size() > 1) continue;
          c.sp = sp;
          visit(c);
        }
      }
    }
  }
}

}  // namespace

std::string label(const Candidate& c) {
  std::ostringstream o;
  o << "tp" << c.tp;
  if (c.cp != 1) o << " cp" << c.cp;
  o << " pp" << c.pp;
  if (c.vpp != 1) o << " vpp" << c.vpp;
  o << " dp" << c.dp;
  if (c.ep != 1 || c.etp != 1) o << " ep" << c.ep << " etp" << c.etp;
  o << " mbs" << c.mbs << " mbc" << c.mbc << " " << to_string(c.recompute) << " zero" << c.zero
    << (c.sp ? " sp" : " nosp");
  return o.str();
}

void for_each_candidate(const SearchSpace& space, SearchMode mode, const config::Scenario& base, const JobShape& job,
                        const CandidateFn& visit) {
  Candidate c;
  for (int64_t pp : space.pp) {
    for (int64_t tp : space.tp) {
      for (int64_t cp : space.cp) {
        for (int64_t vpp : space.vpp) {
          for (int64_t ep : space.ep) {
            for (int64_t etp : space.etp) {
              c.pp = pp, c.tp = tp, c.cp = cp, c.vpp = vpp, c.ep = ep, c.etp = etp;
              const int64_t shard = tp * cp * pp;
              c.dp = job.world_size % shard == 0 ? job.world_size / shard : 0;
              visit_variants(visit, c, space, mode, base, job);
            }
          }
        }
      }
    }
  }
}

std::vector<Candidate> enumerate(const SearchSpace& space, SearchMode mode, const config::Scenario& base,
                                 const JobShape& job) {
  std::vector<Candidate> out;
  for_each_candidate(space, mode, base, job, [&out](const Candidate& c) { out.push_back(c); });
  return out;
}

size_t count_candidates(const SearchSpace& space, SearchMode mode, const config::Scenario& base, const JobShape& job) {
  size_t n = 0;
  for_each_candidate(space, mode, base, job, [&n](const Candidate&) { ++n; });
  return n;
}

int64_t max_layers_per_chunk(const StrategyConfig& st, const config::ModelConfig& m) {
  const auto& first = st.num_layers_in_first_pipeline_stage;
  const auto& last = st.num_layers_in_last_pipeline_stage;
  int64_t most = 0;
  if (first || last) {
    const int64_t stages = st.pp_size - (first ? 1 : 0) - (last ? 1 : 0);
    const int64_t left = m.layer_num - first.value_or(0) - last.value_or(0);
    most =
        std::max({first.value_or(0), last.value_or(0), stages > 0 ? ceil_div(std::max<int64_t>(left, 0), stages) : 0});
  } else {
    const int64_t slots = m.layer_num + (st.account_for_embedding_in_pipeline_split ? 1 : 0) +
                          (st.account_for_loss_in_pipeline_split ? 1 : 0);
    most = ceil_div(slots, st.pp_size);
  }
  return std::max<int64_t>(1, ceil_div(most, st.interleaving_size));
}

void apply(const Candidate& c, const StrategyConfig& base, bool uneven_pp, const JobShape& job,
           config::Scenario& scratch) {
  if (c.dp == 0) {
    throw ConfigError(kSearchOrigin, "/world_size",
                      std::to_string(job.world_size) + " is not a multiple of tp*cp*pp = " + std::to_string(c.tp) +
                          "*" + std::to_string(c.cp) + "*" + std::to_string(c.pp));
  }
  if (c.mbs == 0) {
    throw ConfigError(kSearchOrigin, "/micro_batch_num",
                      "is below pp_size for every micro-batch size (SimuMax's fixed-batch search needs micro_batch_num "
                      ">= pp): global batch " +
                          std::to_string(job.global_batch_size) + ", dp " + std::to_string(c.dp) + ", pp " +
                          std::to_string(c.pp));
  }
  if (c.mbc == 0) {
    throw ConfigError(kSearchOrigin, "/global_batch_size",
                      std::to_string(job.global_batch_size) + " is not a multiple of micro_batch_size*dp = " +
                          std::to_string(c.mbs) + "*" + std::to_string(c.dp));
  }
  StrategyConfig& st = scratch.strategy;
  st = base;
  st.world_size = job.world_size, st.seq_len = job.seq_len;
  st.tp_size = c.tp, st.cp_size = c.cp, st.pp_size = c.pp, st.ep_size = c.ep, st.etp_size = c.etp;
  st.micro_batch_size = c.mbs, st.micro_batch_num = c.mbc;
  st.zero_state = c.zero, st.enable_sequence_parallel = c.sp;
  st.interleaving_size = c.vpp;
  // Megatron's VPP group defaults to pp; a base group that is not its own pp_size was set on purpose.
  const bool group_set = base.interleaving_size > 1 && base.microbatch_group_size_per_vp_stage != base.pp_size;
  st.microbatch_group_size_per_vp_stage = c.vpp == 1  ? std::nullopt
                                          : group_set ? base.microbatch_group_size_per_vp_stage
                                                      : std::optional<int64_t>(c.pp);
  set_layer_split(st, base, scratch.model, uneven_pp);
  set_recompute(st, c.recompute, scratch.model);
  config::check_scenario(scratch);
  if (c.recompute.kind == RecomputeKind::kFull) {
    if (c.recompute.layers == RecomputeChoice::kEveryCount) {
      throw ConfigError(kSearchOrigin, "/recompute_layer_num", "full:* has no layer count for this layout");
    }
    if (c.recompute.layers > max_layers_per_chunk(st, scratch.model)) {
      throw ConfigError(kSearchOrigin, "/recompute_layer_num", "full:N exceeds the layers of the largest chunk");
    }
  }
}

std::string reason_key(const ConfigError& e) {
  // The field: the pointer's last segment that is a name (not a list index).
  std::string pointer = e.pointer(), field;
  while (!pointer.empty()) {
    const size_t slash = pointer.rfind('/');
    field = pointer.substr(slash + 1);
    pointer.erase(slash == std::string::npos ? 0 : slash);
    if (!field.empty() && !std::isdigit(static_cast<unsigned char>(field[0]))) break;
  }
  // The rule: the message up to its first explanation, without the numbers of this candidate.
  std::string rule = e.message();
  for (const char* stop : {";", " (", ", ", ": "}) {
    if (const size_t at = rule.find(stop); at != std::string::npos) rule.erase(at);
  }
  std::istringstream words(rule);
  // A rule that already names its field ("ep_size*etp_size*pp_size = ...") is not prefixed with it again.
  std::string word, prev, key = rule.rfind(field, 0) == 0 ? "" : field;
  while (words >> word) {
    const bool has_digit = std::any_of(word.begin(), word.end(), [](char ch) { return std::isdigit(ch); });
    // A number after a comparison is the rule's bound ("needs pp_size > 1"), not this candidate's value: kept,
    // or the reason reads cut ("needs pp_size >").
    const bool bound = prev == ">" || prev == ">=" || prev == "<" || prev == "<=";
    if ((has_digit && !bound) || word == "=") continue;
    key += (key.empty() ? "" : " ") + word;
    prev = word;
  }
  return key;
}

}  // namespace simumax::search
