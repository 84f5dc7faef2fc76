#include "engine/compare/trace_compare_ranks.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/common/median.hpp"
#include "engine/compare/kineto_trace.hpp"

namespace simumax::compare {

namespace {

namespace fs = std::filesystem;

using common::median_of;

StepBreakdown mean_step(const std::vector<StepBreakdown>& steps) {
  StepBreakdown m = steps.front();
  m.label = "mean of " + std::to_string(steps.size());
  const double n = static_cast<double>(steps.size());
  for (size_t i = 1; i < steps.size(); ++i) {
    const auto& s = steps[i];
    m.total_ms += s.total_ms, m.compute_ms += s.compute_ms, m.comm_ms += s.comm_ms;
    m.exposed_comm_ms += s.exposed_comm_ms, m.memory_ms += s.memory_ms, m.idle_ms += s.idle_ms;
    for (size_t c = 0; c < m.class_ms.size() && c < s.class_ms.size(); ++c) m.class_ms[c] += s.class_ms[c];
  }
  for (double* v : {&m.total_ms, &m.compute_ms, &m.comm_ms, &m.exposed_comm_ms, &m.memory_ms, &m.idle_ms}) *v /= n;
  for (double& v : m.class_ms) v /= n;
  return m;
}

// The figures a rank's slowness can come from: each compute class, exposed communication, copies.
std::vector<std::pair<std::string, double>> phases(const RankSummary& r, const std::vector<KernelClass>& classes) {
  std::vector<std::pair<std::string, double>> out;
  for (size_t i = 0; i < classes.size() && i < r.mean.class_ms.size(); ++i) {
    if (classes[i].kind == ClassKind::kCompute) out.emplace_back(classes[i].name, r.mean.class_ms[i]);
  }
  out.emplace_back("exposed comm", r.mean.exposed_comm_ms);
  out.emplace_back("memcpy/memset", r.mean.memory_ms);
  return out;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", v);
  return buf;
}

}  // namespace

std::vector<std::string> rank_trace_files(const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!fs::is_directory(p, ec)) {
      out.push_back(p);
      continue;
    }
    std::vector<std::string> found;
    for (const auto& e : fs::directory_iterator(p, ec)) {
      const std::string name = e.path().filename().string();
      if (e.is_regular_file() && (name.ends_with(".json") || name.ends_with(".json.gz"))) {
        found.push_back(e.path().string());
      }
    }
    if (found.empty()) throw common::ConfigError(p, "", "no trace (.json or .json.gz) in this folder");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

std::vector<RankSummary> load_rank_summaries(const std::vector<std::string>& files, const KernelClassTable& table) {
  std::vector<RankSummary> out;
  std::map<int64_t, std::string> seen;
  for (const auto& f : files) {
    const KinetoProfile p = load_kineto_trace(f, table);
    RankSummary r;
    r.path = f;
    r.rank = p.rank.value_or(-1);
    if (r.rank >= 0) {
      const auto [it, fresh] = seen.emplace(r.rank, f);
      if (!fresh) throw common::ConfigError(f, "/distributedInfo/rank", "rank " + std::to_string(r.rank) +
                                                                         " again (also in " + it->second + ")");
    }
    r.steps = p.steps.size();
    r.mean = mean_step(p.steps);
    r.busy_ms = r.mean.total_ms - r.mean.idle_ms;
    out.push_back(std::move(r));
  }
  std::stable_sort(out.begin(), out.end(), [](const RankSummary& a, const RankSummary& b) { return a.rank < b.rank; });
  return out;
}

Straggler find_straggler(const std::vector<RankSummary>& ranks, const std::vector<KernelClass>& classes) {
  Straggler s;
  std::vector<double> busy;
  for (const auto& r : ranks) busy.push_back(r.busy_ms);
  s.median_busy_ms = median_of(busy);
  const auto slowest = std::max_element(ranks.begin(), ranks.end(), [](const RankSummary& a, const RankSummary& b) {
    return a.busy_ms < b.busy_ms;
  });
  s.rank = slowest->rank;
  s.path = slowest->path;
  s.busy_ms = slowest->busy_ms;
  s.ratio = s.median_busy_ms > 0 ? s.busy_ms / s.median_busy_ms : 1;
  const auto mine = phases(*slowest, classes);
  for (size_t k = 0; k < mine.size(); ++k) {
    std::vector<double> all;
    for (const auto& r : ranks) all.push_back(phases(r, classes)[k].second);
    const double excess = mine[k].second - median_of(all);
    if (excess > s.phase_excess_ms) {
      s.phase_excess_ms = excess;
      s.phase = mine[k].first;
    }
  }
  return s;
}

std::string ranks_table(const std::vector<RankSummary>& ranks, const Straggler& s,
                        const std::vector<KernelClass>& classes) {
  std::ostringstream out;
  out << "\nranks (mean per step, ms)\n";
  std::vector<std::string> heads = {"rank", "steps", "total", "busy", "compute"};
  for (const auto& c : classes) {
    if (c.kind == ClassKind::kCompute) heads.push_back(c.name);
  }
  for (const char* h : {"comm", "exposed", "memory", "idle"}) heads.push_back(h);
  for (const auto& h : heads) out << std::string(h.size() < 11 ? 11 - h.size() : 1, ' ') << h;
  out << "\n";
  for (const auto& r : ranks) {
    std::vector<std::string> cells = {r.rank >= 0 ? std::to_string(r.rank) : "?", std::to_string(r.steps),
                                      fmt(r.mean.total_ms), fmt(r.busy_ms), fmt(r.mean.compute_ms)};
    for (size_t i = 0; i < classes.size(); ++i) {
      if (classes[i].kind == ClassKind::kCompute) cells.push_back(fmt(i < r.mean.class_ms.size() ? r.mean.class_ms[i] : 0));
    }
    for (double v : {r.mean.comm_ms, r.mean.exposed_comm_ms, r.mean.memory_ms, r.mean.idle_ms}) cells.push_back(fmt(v));
    for (size_t i = 0; i < cells.size(); ++i) {
      const size_t w = std::max<size_t>(11, heads[i].size() + 1);
      out << std::string(w > cells[i].size() ? w - cells[i].size() : 1, ' ') << cells[i];
    }
    out << "\n";
  }
  char line[512];
  std::snprintf(line, sizeof line,
                "slowest rank: %s (%s): busy %.3f ms against the ranks' median %.3f ms, straggler ratio %.4f",
                s.rank >= 0 ? std::to_string(s.rank).c_str() : "?", s.path.c_str(), s.busy_ms, s.median_busy_ms,
                s.ratio);
  out << line;
  if (!s.phase.empty()) out << "; most of it is " << s.phase << " (+" << fmt(s.phase_excess_ms) << " ms over the median)";
  out << "\n";
  return out.str();
}

}  // namespace simumax::compare
