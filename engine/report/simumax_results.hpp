// SimuMax's analysis files under their own names, keys and units (PerfLLM.analysis): compute_result.json,
// mem_result.json and base_info.json, with the human-readable strings its convert_final_result_to_human_format
// writes ("50.8854 GB", "5.5547 s"), so that a SimuMax user's scripts (get_pp_stage_peak_mem, ...) read ours.
// Keys and their sources: docs/simumax-outputs.md.
#pragma once

#include <string>

#include "engine/config/scenario.hpp"
#include "engine/cost/step_cost.hpp"
#include "engine/model/step_model.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {

struct SimumaxView {
  const config::Scenario& scenario;
  const model::StepModel& model;
  const cost::StepCost& cost;
  const Summary& summary;
};

// The JSON text of each file (indent 2, SimuMax's key order). Deterministic.
std::string simumax_mem_result_json(const SimumaxView& v);
std::string simumax_compute_result_json(const SimumaxView& v);
std::string simumax_base_info_json(const SimumaxView& v);
// net_info.json (simumax_net_info.cpp): SimuMax's record of its collective calls, keyed by collective, then by
// comm_stage. The DP records are one bucket's, at the bucket size the cost model uses.
std::string simumax_net_info_json(const SimumaxView& v);

// Writes the four files into the existing folder `dir`; returns their paths. Throws common::UsageError when a
// file cannot be written.
std::vector<std::string> write_simumax_results(const std::string& dir, const SimumaxView& v);

}  // namespace simumax::report
