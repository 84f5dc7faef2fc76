// Readers for the shared reference data: the real validation runs (shared/validation/*/*.json) and SimuMax's
// golden grid (shared/reference/simumax_grid.jsonl), each turned into a checked Scenario plus its numbers.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::config {

// One real training run (schema: shared/validation/README.md).
struct ValidationCase {
  std::string name;           // the "case" field
  std::string path;           // the file it was read from
  Scenario scenario;          // inline model + strategy, system from shared_dir / system_file
  double real_ms = 0;         // measured step time
  double real_alloc_gib = 0;  // measured peak allocated memory, GiB
  // "real_alloc_gib": null with "real_alloc_excluded": why the logged peak is not the step's (an imported case
  // whose peak is a start-up transient): the case's time is compared, its memory is not.
  bool has_real_alloc = true;
  std::string real_alloc_excluded;
  std::optional<double> real_reserved_gib;
  // SimuMax v1.2's prediction. The a100 files leave published_perf_* null and give the same v1.2
  // prediction as v12_perf_ms / v12_alloc_gib, which are used then.
  double published_perf_ms = 0;
  double published_perf_alloc_gib = 0;
  std::map<std::string, double> published_peak_alloc_by_stage_gib;  // "first_stage", ...; empty if absent
  // False when the file says published_perf_ms: null and has no v12_perf_ms (cases imported from Megatron-LM's
  // functional tests: SimuMax never ran them); the published_* figures are 0 then.
  bool has_published = true;
  // "real_alloc_rank": "max" (default: the real figure is the maximum over ranks) or "last" (the rank
  // world_size - 1 logged it: compare the last pipeline stage).
  bool alloc_of_last_rank = false;
  std::string machine;                 // "machine", optional: groups the validate report
  std::vector<std::string> features;   // "features", optional: groups the validate report
  // "group", optional (e.g. "mxfp8 / llama3": precision and model family): validate also sums per machine and
  // group. "model_id", optional (e.g. "llama3_70b"): calibrate's leave-out unit (leave one model out) instead of
  // the layout family.
  std::string group;
  std::string model_id;
};

// REQUIRES: shared_dir is the shared/ folder (system_file is relative to it).
// Throws ConfigError naming `path` and the field (inline configs: "/model/...", "/strategy/...").
// Runs check_scenario.
ValidationCase load_validation_case(const std::string& path, const std::string& shared_dir);

// One line of simumax_grid.jsonl: a configuration and SimuMax's answer for it.
struct GridCase {
  std::string id, family;
  std::vector<std::string> tags;
  Scenario scenario;  // name = id; inline configs located at "/input/model", "/input/strategy"; simumax fidelity
  double step_time_ms = 0;
  double pp_time_ms = 0;
  double mfu = 0;
  double tflops_per_gpu = 0;
  // Keyed as in output.mem_stages: "first_stage", "middle_stage", "last_stage" (and "pp_stage_<i>" where
  // SimuMax lists individual stages).
  std::map<std::string, double> peak_alloc_bytes_by_stage;
  std::map<std::string, double> peak_reserved_bytes_by_stage;
  // Keyed as in output.time_stages: "first", "middle", "last".
  std::map<std::string, double> duration_ms_by_stage;
};

// Parses one line; `source_name` names it in errors (e.g. "simumax_grid.jsonl:17"). Reads and type-checks
// every field but does NOT run check_scenario: SimuMax accepted a few configurations that Megatron refuses
// (see validation_case_test.cpp), and a parity test still wants to read them; check what you simulate.
GridCase parse_grid_line(const std::string& json_line, const std::string& shared_dir, const std::string& source_name);

// Every non-empty line of a grid file, in order; errors name "<jsonl_path>:<line number>". No check_scenario.
std::vector<GridCase> load_grid(const std::string& jsonl_path, const std::string& shared_dir);

}  // namespace simumax::config
