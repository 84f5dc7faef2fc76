#include "engine/config/config_text.hpp"

#include "engine/config/config_parsers.hpp"

namespace simumax::config {

std::string read_config_json(ConfigKind kind, const std::string& path) {
  const detail::Json doc = detail::parse_json_file(path);
  const ConfigOrigin origin = ConfigOrigin::of(path);
  switch (kind) {
    case ConfigKind::kModel: detail::parse_model(doc, origin); break;
    case ConfigKind::kStrategy: detail::parse_strategy(doc, origin); break;
    case ConfigKind::kSystem: detail::parse_system(doc, origin); break;
  }
  return doc.dump();
}

Scenario scenario_from_texts(const ConfigText& model, const std::optional<ConfigText>& strategy,
                             const ConfigText& system, const std::string& name, bool check) {
  Scenario s;
  s.name = name;
  const std::string strategy_label = strategy ? strategy->label : "(SimuMax default strategy)";
  s.model_path = model.label, s.strategy_path = strategy_label, s.system_path = system.label;
  s.model_origin = ConfigOrigin::of(model.label);
  s.strategy_origin = ConfigOrigin::of(strategy_label);
  s.system_origin = ConfigOrigin::of(system.label);
  s.model = detail::parse_model(detail::parse_json_text(model.text, model.label), s.model_origin);
  if (strategy) {
    s.strategy = detail::parse_strategy(detail::parse_json_text(strategy->text, strategy->label), s.strategy_origin);
  }
  s.system = detail::parse_system(detail::parse_json_text(system.text, system.label), s.system_origin);
  if (check) check_scenario(s);
  return s;
}

}  // namespace simumax::config
