#include "engine/calibrate/calibrate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>

#include "engine/common/error.hpp"
#include "engine/simulate.hpp"

namespace simumax::calibrate {

namespace {

config::Calibration with(config::Calibration c, const std::vector<Param>& params, const std::vector<double>& x) {
  for (size_t i = 0; i < params.size(); ++i) {
    if (params[i] == Param::kComputeDerate) {
      c.compute_derate = x[i];
    } else {
      c.kernel_floor_us = x[i];
    }
  }
  return c;
}

// Where the search may look: a margin beyond the physical range, so that a fit that wants to leave it is seen.
Range search_range(Param p) {
  return p == Param::kComputeDerate ? Range{-0.3, 0.7} : Range{0, 1000};  // a floor below 0 is no time
}

double sum_squares(const std::vector<double>& e) {
  double s = 0;
  for (double x : e) s += x * x;
  return s;
}

}  // namespace

std::string case_family(const config::Scenario& s) {
  const auto& st = s.strategy;
  if (s.model.is_moe()) return "moe";
  if (st.cp_size > 1) return "cp";
  if (st.pp_size > 1) return "pp";
  return "tp" + std::to_string(st.tp_size);
}

double value_of(const config::Calibration& c, Param p, double fallback_floor_us) {
  return p == Param::kComputeDerate ? c.compute_derate : c.kernel_floor_us.value_or(fallback_floor_us);
}

const char* to_string(Param p) { return p == Param::kComputeDerate ? "compute_derate" : "kernel_floor_us"; }

Param parse_param(const std::string& name) {
  if (name == "compute_derate") return Param::kComputeDerate;
  if (name == "kernel_floor_us") return Param::kKernelFloorUs;
  throw common::UsageError("--params: unknown parameter \"" + name +
                           "\"; valid: compute_derate, kernel_floor_us");
}

Range physical_range(Param p) {
  // A derate beyond 50 % means the efficiency tables, not the clock, are wrong; a negative floor is no kernel.
  return p == Param::kComputeDerate
             ? Range{config::Calibration::kMinComputeDerate, config::Calibration::kMaxComputeDerate}
             : Range{0, config::Calibration::kMaxKernelFloorUs};
}

std::vector<double> relative_errors(const std::vector<Case>& cases, const config::Calibration& c) {
  RunOptions o;
  o.lowering.granularity = graph::Granularity::kChunk;
  std::vector<double> out;
  out.reserve(cases.size());
  for (const auto& k : cases) {
    config::Scenario s = k.scenario;
    s.strategy.fidelity = config::Fidelity::kMegatron;
    s.system.calibration = c;
    const double ms = simulate(s, o).summary.step_time_ms;
    if (!std::isfinite(ms) || ms <= 0) {
      throw common::InternalError(k.source + ": predicted step time " + std::to_string(ms) + " ms");
    }
    out.push_back((ms - k.real_ms) / k.real_ms);
  }
  return out;
}

Fit fit(const std::vector<Case>& cases, const std::vector<Param>& params, const config::Calibration& start) {
  const size_t n = params.size();
  const double floor0 = cases.front().scenario.system.bandwidth.at("default").latency_us;
  Fit best;
  auto objective = [&](std::vector<double> x) {
    for (size_t i = 0; i < n; ++i) {
      const Range r = search_range(params[i]);
      x[i] = std::clamp(x[i], r.lo, r.hi);
    }
    ++best.evaluations;
    return std::make_pair(sum_squares(relative_errors(cases, with(start, params, x))), x);
  };
  // Nelder-Mead over n + 1 vertices; steps of a tenth of each parameter's search range.
  std::vector<std::pair<double, std::vector<double>>> simplex;
  std::vector<double> x0(n);
  for (size_t i = 0; i < n; ++i) x0[i] = value_of(start, params[i], floor0);
  simplex.push_back(objective(x0));
  for (size_t i = 0; i < n; ++i) {
    auto x = x0;
    const Range r = search_range(params[i]);
    x[i] += (r.hi - r.lo) / 10;
    simplex.push_back(objective(x));
  }
  constexpr int kMaxIterations = 60;
  for (int it = 0; it < kMaxIterations; ++it) {
    std::stable_sort(simplex.begin(), simplex.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    if (simplex.back().first - simplex.front().first < 1e-10) break;
    std::vector<double> centroid(n, 0.0);
    for (size_t v = 0; v < n; ++v) {
      for (size_t i = 0; i < n; ++i) centroid[i] += simplex[v].second[i] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = centroid[i] + t * (simplex.back().second[i] - centroid[i]);
      return objective(x);
    };
    auto reflected = along(-1);
    if (reflected.first < simplex.front().first) {
      auto expanded = along(-2);
      simplex.back() = expanded.first < reflected.first ? expanded : reflected;
    } else if (reflected.first < simplex[n - 1].first) {
      simplex.back() = reflected;
    } else {
      auto contracted = along(0.5);
      if (contracted.first < simplex.back().first) {
        simplex.back() = contracted;
      } else {
        for (size_t v = 1; v <= n; ++v) {
          std::vector<double> x(n);
          for (size_t i = 0; i < n; ++i) x[i] = (simplex[0].second[i] + simplex[v].second[i]) / 2;
          simplex[v] = objective(x);
        }
      }
    }
  }
  std::stable_sort(simplex.begin(), simplex.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  best.calibration = with(start, params, simplex.front().second);
  best.errors = relative_errors(cases, best.calibration);
  return best;
}

std::vector<double> leave_one_family_out(const std::vector<Case>& cases, const std::vector<Param>& params,
                                         const config::Calibration& start) {
  std::set<std::string> families;
  for (const auto& c : cases) families.insert(c.family);
  if (families.size() < 2) throw common::InternalError("leave_one_family_out needs two families");
  std::vector<double> out(cases.size());
  for (const auto& f : families) {
    std::vector<Case> train, test;
    std::vector<size_t> where;
    for (size_t i = 0; i < cases.size(); ++i) {
      if (cases[i].family == f) {
        test.push_back(cases[i]);
        where.push_back(i);
      } else {
        train.push_back(cases[i]);
      }
    }
    const Fit fitted = fit(train, params, start);
    const auto errs = relative_errors(test, fitted.calibration);
    for (size_t j = 0; j < where.size(); ++j) out[where[j]] = errs[j];
  }
  return out;
}

double mape(const std::vector<double>& errors) {
  double s = 0;
  for (double e : errors) s += std::abs(e);
  return errors.empty() ? 0 : s / static_cast<double>(errors.size());
}

double mean(const std::vector<double>& errors) {
  double s = 0;
  for (double e : errors) s += e;
  return errors.empty() ? 0 : s / static_cast<double>(errors.size());
}

double worst(const std::vector<double>& errors) {
  double w = 0;
  for (double e : errors) w = std::abs(e) > std::abs(w) ? e : w;
  return w;
}

}  // namespace simumax::calibrate
