#include "engine/config/scenario_writer.hpp"

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/common/json_depth.hpp"

namespace simumax::config {

namespace {

using Json = nlohmann::ordered_json;  // the base strategy file's keys stay in their order

Json read_json_object(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw common::ConfigError(path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  common::require_json_depth(text.str(), path);
  Json j;
  try {
    j = Json::parse(text.str());
  } catch (const Json::exception& e) {
    throw common::ConfigError(path, "", std::string("invalid JSON: ") + e.what());
  }
  if (!j.is_object()) throw common::ConfigError(path, "", "expected a JSON object");
  return j;
}

Json optional_int(const std::optional<int64_t>& v) { return v ? Json(*v) : Json(nullptr); }

// The keys a search varies, in the order search.json has always written them.
void set_layout(const StrategyConfig& st, Json& j) {
  j["seq_len"] = st.seq_len;
  j["micro_batch_size"] = st.micro_batch_size;
  j["micro_batch_num"] = st.micro_batch_num;
  j["world_size"] = st.world_size;
  j["tp_size"] = st.tp_size;
  j["cp_size"] = st.cp_size;
  j["pp_size"] = st.pp_size;
  j["ep_size"] = st.ep_size;
  j["etp_size"] = st.etp_size;
  j["interleaving_size"] = st.interleaving_size;
  j["microbatch_group_size_per_vp_stage"] = optional_int(st.microbatch_group_size_per_vp_stage);
  j["num_layers_in_first_pipeline_stage"] = optional_int(st.num_layers_in_first_pipeline_stage);
  j["num_layers_in_last_pipeline_stage"] = optional_int(st.num_layers_in_last_pipeline_stage);
  j["zero_state"] = st.zero_state;
  j["enable_sequence_parallel"] = st.enable_sequence_parallel;
  j["fidelity"] = to_string(st.fidelity);
}

// The recompute keys as strategy_config.cpp reads them: a granularity it has no name for is written as none (null).
void set_recompute(const StrategyConfig& st, Json& j) {
  using G = RecomputeGranularity;
  j["enable_recompute"] = st.enable_recompute;
  j["recompute_granularity"] = st.recompute_granularity == G::kFullBlock   ? Json("full_block")
                               : st.recompute_granularity == G::kSelective ? Json("selective_recompute")
                                                                           : Json(nullptr);
  j["recompute_layer_num"] = st.recompute_layer_num;
  j["recompute_variance"] = st.recompute_variance;
  j["attn_recompute"] = st.attn_recompute;
  j["mla_rms_recompute"] = st.mla_rms_recompute;
  j["mlp_recompute"] = st.mlp_recompute;
  j["mlp_rms_recompute"] = st.mlp_rms_recompute;
  j["megatron_recompute"] = st.megatron_recompute;
  j["megatron_recompute_modules"] = nullptr;
}

}  // namespace

std::string scenario_file_json(const ScenarioFile& f) {
  Json strategy = f.base_strategy_file.empty() ? Json::object() : read_json_object(f.base_strategy_file);
  set_layout(f.strategy, strategy);
  if (f.recompute_keys) set_recompute(f.strategy, strategy);
  Json j;
  j["name"] = f.name;
  if (!f.description.empty()) j["description"] = f.description;
  j["model"] = f.model;
  j["strategy"] = std::move(strategy);
  j["system"] = f.system;
  return j.dump(2) + "\n";
}

}  // namespace simumax::config
