#include "engine/config/validation_case.hpp"

#include <spdlog/fmt/fmt.h>

#include <filesystem>
#include <fstream>

#include "engine/common/error.hpp"
#include "engine/config/config_parsers.hpp"

namespace simumax::config {

namespace fs = std::filesystem;
using detail::Json;
using detail::ObjectReader;
using detail::Sign;

namespace {

// The grid names one of two system files on each of its 343 lines: read each once.
using SystemCache = std::map<std::string, SystemConfig>;

void read_shared_system(ObjectReader& r, const std::string& shared_dir, Scenario& s, SystemCache* cache) {
  const std::string path = (fs::path(shared_dir) / r.required_string("system_file")).lexically_normal().string();
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) r.fail("system_file", "file not found: " + path);
  s.system_path = path;
  s.system_origin = ConfigOrigin::of(path);
  if (cache != nullptr) {
    if (const auto it = cache->find(path); it != cache->end()) {
      s.system = it->second;
      return;
    }
  }
  s.system = load_system_file(path);
  if (cache != nullptr) (*cache)[path] = s.system;
}

// The reference files carry the model and strategy inline, overrides already applied.
Scenario read_inline_scenario(ObjectReader& r, const std::string& shared_dir, SystemCache* cache) {
  Scenario s;
  for (const char* key : {"model", "strategy"}) {
    if (!r.present(key)) r.fail(key, "required field is missing");
  }
  const FieldLocation model = r.where("model");
  s.model_path = model.file;
  s.model_origin = ConfigOrigin::of(model.file, model.pointer);
  s.model = detail::parse_model(r.json().at("model"), s.model_origin);
  const FieldLocation strategy = r.where("strategy");
  s.strategy_path = strategy.file;
  s.strategy_origin = ConfigOrigin::of(strategy.file, strategy.pointer);
  s.strategy = detail::parse_strategy(r.json().at("strategy"), s.strategy_origin);
  read_shared_system(r, shared_dir, s, cache);
  return s;
}

// `field` of every stage object under `stages` ({"first_stage": {...}, ...}).
std::map<std::string, double> per_stage(ObjectReader stages, const std::string& field) {
  std::map<std::string, double> out;
  for (const auto& name : stages.keys()) out[name] = stages.object(name).required_number(field, Sign::kNonNegative);
  return out;
}

GridCase read_grid_case(const Json& doc, const std::string& shared_dir, const std::string& source_name,
                        SystemCache* cache) {
  ObjectReader r(doc, ConfigOrigin::of(source_name));
  GridCase g;
  g.id = r.required_string("id");
  g.family = r.optional_string("family").value_or("");
  g.tags = r.string_list("tags", {});
  ObjectReader input = r.object("input");
  g.scenario = read_inline_scenario(input, shared_dir, cache);
  g.scenario.name = g.id;
  g.scenario.strategy.fidelity = Fidelity::kSimuMax;  // the grid's outputs are SimuMax's model
  g.scenario.scenario_path = source_name;
  ObjectReader out = r.object("output");
  g.step_time_ms = out.required_number("step_time_ms", Sign::kPositive);
  g.pp_time_ms = out.required_number("pp_time_ms", Sign::kPositive);
  g.mfu = out.required_number("mfu", Sign::kNonNegative);
  g.tflops_per_gpu = out.required_number("tflops_per_gpu", Sign::kNonNegative);
  g.peak_alloc_bytes_by_stage = per_stage(out.object("mem_stages"), "peak_alloc_bytes");
  g.peak_reserved_bytes_by_stage = per_stage(out.object("mem_stages"), "peak_reserved_bytes");
  g.duration_ms_by_stage = per_stage(out.object("time_stages"), "duration_ms");
  return g;
}

// SimuMax's v1.2 prediction: published_* when given, else the v12_* field that holds the same number.
double prediction(ObjectReader& r, const std::string& key, const std::string& v12_key) {
  if (const auto v = r.optional_number(key, Sign::kPositive)) return *v;
  if (!r.given(v12_key)) r.fail(key, "is null or missing, and there is no " + v12_key + " to use instead");
  return r.required_number(v12_key, Sign::kPositive);
}

}  // namespace

ValidationCase load_validation_case(const std::string& path, const std::string& shared_dir) {
  const Json doc = detail::parse_json_file(path);
  ObjectReader r(doc, ConfigOrigin::of(path));
  ValidationCase v;
  v.name = r.required_string("case");
  v.path = path;
  v.scenario = read_inline_scenario(r, shared_dir, nullptr);
  v.scenario.name = v.name;
  v.scenario.scenario_path = path;
  v.real_ms = r.required_number("real_ms", Sign::kPositive);
  // A measured step is within [0.001 ms, 1e9 ms] (11.6 days): 1e308 printed "MAPE nan %" (issue 32).
  if (v.real_ms < 1e-3 || v.real_ms > 1e9) {
    r.fail("real_ms", fmt::format("expected ms in [0.001, 1e9], got {}", v.real_ms));
  }
  if (r.present("real_alloc_gib") && r.json().at("real_alloc_gib").is_null()) {
    v.has_real_alloc = false;
    v.real_alloc_excluded = r.required_string("real_alloc_excluded");
    if (v.real_alloc_excluded.empty()) r.fail("real_alloc_excluded", "expected the reason the peak is not compared");
  } else {
    v.real_alloc_gib = r.required_number("real_alloc_gib", Sign::kPositive);
    if (v.real_alloc_gib > 1e6) {
      r.fail("real_alloc_gib", fmt::format("expected GiB in (0, 1e6], got {}", v.real_alloc_gib));
    }
    if (r.given("real_alloc_excluded")) {
      r.fail("real_alloc_excluded", "only with \"real_alloc_gib\": null (the reason the peak is not compared)");
    }
  }
  v.real_reserved_gib = r.optional_number("real_reserved_gib", Sign::kPositive);
  const bool published_null = r.present("published_perf_ms") && r.json().at("published_perf_ms").is_null();
  v.has_published = !(published_null && !r.given("v12_perf_ms"));
  if (!v.has_real_alloc && v.has_published) {
    r.fail("real_alloc_gib", "null only in a case without SimuMax's prediction (\"published_perf_ms\": null)");
  }
  if (v.has_published) {
    v.published_perf_ms = prediction(r, "published_perf_ms", "v12_perf_ms");
    v.published_perf_alloc_gib = prediction(r, "published_perf_alloc_gib", "v12_alloc_gib");
  }
  v.alloc_of_last_rank = r.choice_or("real_alloc_rank", "max", {"max", "last"}) == "last";
  v.machine = r.optional_string("machine").value_or("");
  v.features = r.string_list("features", {});
  v.group = r.optional_string("group").value_or("");
  v.model_id = r.optional_string("model_id").value_or("");
  if (auto stages = r.optional_object("published_peak_alloc_by_stage_gib")) {
    for (const auto& name : stages->keys()) {
      v.published_peak_alloc_by_stage_gib[name] = stages->required_number(name, Sign::kPositive);
    }
  }
  check_scenario(v.scenario);
  return v;
}

GridCase parse_grid_line(const std::string& json_line, const std::string& shared_dir, const std::string& source_name) {
  return read_grid_case(detail::parse_json_text(json_line, source_name), shared_dir, source_name, nullptr);
}

std::vector<GridCase> load_grid(const std::string& jsonl_path, const std::string& shared_dir) {
  std::ifstream in(jsonl_path);
  if (!in) throw common::ConfigError(jsonl_path, "", "cannot open file");
  SystemCache cache;
  std::vector<GridCase> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string source = jsonl_path + ":" + std::to_string(number);
    out.push_back(read_grid_case(detail::parse_json_text(line, source), shared_dir, source, &cache));
  }
  return out;
}

}  // namespace simumax::config
