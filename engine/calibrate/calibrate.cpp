#include "engine/calibrate/calibrate.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <set>

#include "engine/common/error.hpp"
#include "engine/simulate.hpp"

namespace simumax::calibrate {

namespace {

// Each parameter: its name, where a fit may look (a margin beyond the physical range, so that a fit that wants to
// leave it is seen) and the physical range itself.
struct ParamInfo {
  const char* name;
  Range search, physical;
};

// A derate beyond 50 % means the efficiency tables, not the clock, are wrong; a negative floor is no kernel. A
// host charging more than 200 us per launch (real Megatron traces show 32 to 110 us between launches,
// docs/accuracy.md) or 5 ms per op pass is no dispatch cost but a stall the step times do not show; a host 20 x
// slower or faster than the x86 hosts of the measured traces is no CPU.
const ParamInfo& info(Param p) {
  static const ParamInfo kInfo[] = {
      {"compute_derate", {-0.3, 0.7}, {config::Calibration::kMinComputeDerate, config::Calibration::kMaxComputeDerate}},
      {"kernel_floor_us", {0, 1000}, {0, config::Calibration::kMaxKernelFloorUs}},
      {"launch_us", {0, 400}, {0, 200}},
      {"op_us", {0, 10000}, {0, 5000}},
      {"cpu_speed", {0.02, 40}, {0.05, 20}},
  };
  return kInfo[static_cast<int>(p)];
}

constexpr Param kAllParams[] = {Param::kComputeDerate, Param::kKernelFloorUs, Param::kLaunchUs, Param::kOpUs,
                                Param::kCpuSpeed};

double& field(Machine& m, Param p) {
  switch (p) {
    case Param::kComputeDerate: return m.calibration.compute_derate;
    case Param::kLaunchUs: return m.host.launch_us;
    case Param::kOpUs: return m.host.op_us;
    case Param::kCpuSpeed: return m.host.cpu_speed;
    case Param::kKernelFloorUs: break;
  }
  return m.calibration.kernel_floor_us.emplace();
}

Machine with(Machine m, const std::vector<Param>& params, const std::vector<double>& x) {
  for (size_t i = 0; i < params.size(); ++i) field(m, params[i]) = x[i];
  return m;
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

double value_of(const Machine& m, Param p, double fallback_floor_us) {
  if (p == Param::kKernelFloorUs) return m.calibration.kernel_floor_us.value_or(fallback_floor_us);
  Machine copy = m;
  return field(copy, p);
}

const char* to_string(Param p) { return info(p).name; }

bool is_host(Param p) { return p == Param::kLaunchUs || p == Param::kOpUs || p == Param::kCpuSpeed; }

Param parse_param(const std::string& name) {
  std::string valid;
  for (Param p : kAllParams) {
    if (name == info(p).name) return p;
    valid += std::string(valid.empty() ? "" : ", ") + info(p).name;
  }
  throw common::UsageError("--params: unknown parameter \"" + name + "\"; valid: " + valid);
}

void check_identifiable(const std::vector<Param>& params) {
  const auto has = [&](Param p) { return std::find(params.begin(), params.end(), p) != params.end(); };
  if (has(Param::kCpuSpeed) && has(Param::kLaunchUs) && has(Param::kOpUs)) {
    throw common::UsageError("--params: cpu_speed divides both launch_us and op_us, so step times cannot tell the "
                             "three apart: fit at most two of them");
  }
}

Range physical_range(Param p) { return info(p).physical; }

std::vector<double> relative_errors(const std::vector<Case>& cases, const Machine& m) {
  RunOptions o;
  o.lowering.granularity = graph::Granularity::kChunk;
  std::vector<double> out;
  out.reserve(cases.size());
  for (const auto& k : cases) {
    config::Scenario s = k.scenario;
    s.strategy.fidelity = config::Fidelity::kMegatron;
    s.system.calibration = m.calibration;
    s.system.host = m.host;
    const double ms = simulate(s, o).summary.step_time_ms;
    if (!std::isfinite(ms) || ms <= 0) {
      throw common::InternalError(k.source + ": predicted step time " + std::to_string(ms) + " ms");
    }
    out.push_back((ms - k.real_ms) / k.real_ms);
  }
  return out;
}

namespace {

using Vertex = std::pair<double, std::vector<double>>;  // objective, point

// Nelder-Mead from `x0` with a first simplex of `step` along each axis, deterministic; the best vertex.
Vertex nelder_mead(const std::function<double(const std::vector<double>&)>& f, const std::vector<double>& x0,
                   const std::vector<double>& step) {
  const size_t n = x0.size();
  auto vertex = [&](std::vector<double> x) { return Vertex{f(x), std::move(x)}; };
  std::vector<Vertex> simplex = {vertex(x0)};
  for (size_t i = 0; i < n; ++i) {
    auto x = x0;
    x[i] += step[i];
    simplex.push_back(vertex(x));
  }
  const auto by_value = [](const Vertex& a, const Vertex& b) { return a.first < b.first; };
  constexpr int kMaxIterations = 100;
  for (int it = 0; it < kMaxIterations; ++it) {
    std::stable_sort(simplex.begin(), simplex.end(), by_value);
    if (simplex.back().first - simplex.front().first < 1e-12) break;
    std::vector<double> centroid(n, 0.0);
    for (size_t v = 0; v < n; ++v) {
      for (size_t i = 0; i < n; ++i) centroid[i] += simplex[v].second[i] / static_cast<double>(n);
    }
    auto along = [&](double t) {
      std::vector<double> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = centroid[i] + t * (simplex.back().second[i] - centroid[i]);
      return vertex(x);
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
          simplex[v] = vertex(x);
        }
      }
    }
  }
  return *std::min_element(simplex.begin(), simplex.end(), by_value);
}

}  // namespace

Fit fit(const std::vector<Case>& cases, const std::vector<Param>& params, const Machine& start) {
  const size_t n = params.size();
  const double floor0 = cases.front().scenario.system.bandwidth.at("default").latency_us;
  Fit best;
  auto clamped = [&](std::vector<double> x) {
    for (size_t i = 0; i < n; ++i) x[i] = std::clamp(x[i], info(params[i]).search.lo, info(params[i]).search.hi);
    return x;
  };
  // Outside the search range a point costs its clamped value plus its squared distance (in ranges): the simplex
  // keeps its vertices apart at a bound (a clamped vertex would collapse it onto the bound).
  auto objective = [&](const std::vector<double>& x) {
    ++best.evaluations;
    double outside = 0;
    const auto c = clamped(x);
    for (size_t i = 0; i < n; ++i) {
      const Range r = info(params[i]).search;
      outside += std::pow((x[i] - c[i]) / (r.hi - r.lo), 2);
    }
    return sum_squares(relative_errors(cases, with(start, params, c))) + outside;
  };
  std::vector<double> x(n), step(n);
  for (size_t i = 0; i < n; ++i) {
    x[i] = value_of(start, params[i], floor0);
    const Range r = info(params[i]).search;
    step[i] = (r.hi - r.lo) / 10;  // a tenth of each parameter's search range
  }
  // Restarted from its best point while that improves it (a simplex can shrink onto a ridge before the minimum).
  Vertex v = nelder_mead(objective, x, step);
  constexpr int kMaxRestarts = 4;
  for (int r = 0; r < kMaxRestarts; ++r) {
    Vertex again = nelder_mead(objective, v.second, step);
    const bool better = again.first < v.first - 1e-12;
    if (again.first < v.first) v = std::move(again);
    if (!better) break;
  }
  best.machine = with(start, params, clamped(v.second));
  best.errors = relative_errors(cases, best.machine);
  return best;
}

std::vector<double> leave_one_family_out(const std::vector<Case>& cases, const std::vector<Param>& params,
                                         const Machine& start) {
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
    const auto errs = relative_errors(test, fitted.machine);
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
