// The comparison as a text table and as JSON.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <sstream>

#include "engine/common/number_text.hpp"
#include "engine/common/units.hpp"
#include "engine/compare/trace_compare.hpp"

namespace simumax::compare {

namespace {

constexpr auto fmt = common::format_number;  // a table cell's number

std::string cell(std::optional<double> v, const char* format) { return v ? fmt(format, *v) : "-"; }

// A table whose first column is a row label and whose other columns are the metrics' values.
struct Grid {
  std::vector<std::string> headers;
  std::vector<std::pair<std::string, std::vector<std::string>>> rows;

  std::string str() const {
    size_t label_w = 16;
    for (const auto& r : rows) label_w = std::max(label_w, r.first.size() + 2);
    std::vector<size_t> w;
    for (const auto& h : headers) w.push_back(std::max<size_t>(9, h.size() + 2));
    for (const auto& r : rows) {
      for (size_t i = 0; i < r.second.size() && i < w.size(); ++i) w[i] = std::max(w[i], r.second[i].size() + 2);
    }
    std::ostringstream out;
    const auto line = [&](const std::string& label, const std::vector<std::string>& cells) {
      out << label << std::string(label_w - std::min(label_w, label.size()), ' ');
      for (size_t i = 0; i < cells.size(); ++i) {
        out << std::string(w[i] - std::min(w[i], cells[i].size()), ' ') << cells[i];
      }
      out << "\n";
    };
    line("", headers);
    for (const auto& r : rows) line(r.first, r.second);
    return out.str();
  }
};

// The columns worth showing: a figure that is absent or zero on every row says nothing.
std::vector<size_t> shown_columns(const std::vector<std::vector<Metric>>& rows) {
  std::vector<size_t> keep;
  for (size_t k = 0; k < rows.front().size(); ++k) {
    const bool always_shown = rows.front()[k].first == "total_ms" || rows.front()[k].first == "kernels";
    bool any = false;
    for (const auto& r : rows) any = any || (r[k].second && *r[k].second != 0);
    if (always_shown || any) keep.push_back(k);
  }
  return keep;
}

std::string header_of(const std::string& key) {
  std::string h = key;
  if (h.ends_with("_ms")) h.resize(h.size() - 3);
  if (h == "exposed_comm") h = "exposed";
  if (h.starts_with("kernels.")) h = h.substr(8);
  return h;
}

// One metric table: ours, then each real step with its error row, then the summary of the real steps (mean of
// profiled steps; min / median / max of a log's steady state) and its error.
std::string metric_table(const Comparison& c, const std::string& title, bool with_errors, const char* format,
                         const std::function<std::vector<Metric>(const StepBreakdown&)>& metrics) {
  const std::vector<Metric> ours = metrics(c.ours_step);
  std::vector<std::vector<Metric>> real, averaged;
  for (const auto& s : c.real.steps) real.push_back(metrics(s));
  for (size_t i : c.averaged) averaged.push_back(real[i]);
  const std::vector<Metric> mean = summary_metrics(c, averaged);
  std::vector<std::vector<Metric>> all = real;
  all.push_back(ours);
  const std::vector<size_t> cols = shown_columns(all);
  Grid g;
  for (size_t k : cols) g.headers.push_back(header_of(ours[k].first));
  const auto values = [&](const std::vector<Metric>& m) {
    std::vector<std::string> v;
    for (size_t k : cols) v.push_back(cell(m[k].second, format));
    return v;
  };
  const auto errors = [&](const std::vector<Metric>& m) {
    std::vector<std::string> v;
    for (size_t k : cols) v.push_back(cell(error_pct(ours[k].second, m[k].second), "%+.1f%%"));
    return v;
  };
  g.rows.emplace_back("ours", values(ours));
  for (size_t i = 0; i < real.size(); ++i) {
    g.rows.emplace_back(c.real.steps[i].label, values(real[i]));
    if (with_errors) g.rows.emplace_back("  error", errors(real[i]));
  }
  const std::string n = std::to_string(averaged.size());
  if (c.median) g.rows.emplace_back("min of " + n, values(reduce_metrics(averaged, "min")));
  g.rows.emplace_back((c.median ? "median of " : "mean of ") + n, values(mean));
  g.rows.emplace_back("  error", errors(mean));
  if (c.median) g.rows.emplace_back("max of " + n, values(reduce_metrics(averaged, "max")));
  std::string out = title;
  if (!c.steady_state.empty()) out += "; steady state: " + c.steady_state;
  out += "\n";
  out += g.str();
  return out;
}

std::optional<double> real_max_mib(const RealRun& r, double MegatronMemory::*field) {
  std::optional<double> best;
  for (const auto& m : r.memory) best = std::max(best.value_or(0), m.*field);
  return best;
}

std::string memory_table(const Comparison& c) {
  const auto alloc = real_max_mib(c.real, &MegatronMemory::max_allocated_mib);
  const auto reserved = real_max_mib(c.real, &MegatronMemory::max_reserved_mib);
  if (!alloc && !c.ours.peak_alloc_bytes) return "";
  const auto gib = [](std::optional<double> bytes) { return bytes ? std::optional(common::gib(*bytes)) : bytes; };
  const auto mib_to_gib = [](std::optional<double> mib) { return mib ? std::optional(*mib / 1024.0) : mib; };
  Grid g;
  g.headers = {"max allocated", "max reserved"};
  const auto ours_a = gib(c.ours.peak_alloc_bytes), ours_r = gib(c.ours.peak_reserved_bytes);
  const auto real_a = mib_to_gib(alloc), real_r = mib_to_gib(reserved);
  g.rows.emplace_back("ours", std::vector<std::string>{cell(ours_a, "%.3f"), cell(ours_r, "%.3f")});
  g.rows.emplace_back("real (max of ranks)", std::vector<std::string>{cell(real_a, "%.3f"), cell(real_r, "%.3f")});
  g.rows.emplace_back("  error", std::vector<std::string>{cell(error_pct(ours_a, real_a), "%+.1f%%"),
                                                          cell(error_pct(ours_r, real_r), "%+.1f%%")});
  std::string out = "\nmemory (GiB)\n";
  out += g.str();
  return out;
}

std::string headline(const Comparison& c) {
  std::ostringstream out;
  out << "ours: " << (c.ours.trace_path.empty() ? c.ours.summary_path : c.ours.trace_path);
  if (c.ours.rank >= 0) out << ", rank " << c.ours.rank << " (" << c.ours.ranks.size() << " ranks in the trace)";
  if (c.ours.rank >= 0 && c.real.rank && *c.real.rank != c.ours.rank && c.ours.preferred_rank_missing) {
    out << "; the real trace's rank " << *c.real.rank << " is not in ours (--rank picks one)";
  }
  out << "\nreal: " << c.real.path << " (" << c.real.kind;
  if (c.real.rank) out << ", rank " << *c.real.rank;
  if (c.real.world_size) out << " of " << *c.real.world_size;
  out << ", " << c.real.steps.size() << " steps";
  if (c.real.kind == "kineto trace") {
    out << ", " << c.real.gpu_events << " GPU events, " << c.real.unattributed_events
        << " launched before the first step, main stream " << c.real.main_stream;
  }
  out << ")\nkernel classes: " << c.classes_path << "\n";
  if (!c.workload.reasons.empty()) {
    out << "warning: the real run does not look like the simulated job:";
    for (size_t i = 0; i < c.workload.reasons.size(); ++i) out << (i ? "; " : " ") << c.workload.reasons[i];
    out << ". The errors below compare different work.\n";
  }
  out << "\n";
  return out.str();
}

}  // namespace

std::string comparison_table(const Comparison& c) {
  const auto types = comm_types(c);
  std::string out = headline(c);
  out += metric_table(c, "time (ms)", true, "%.3f",
                      [&](const StepBreakdown& s) { return time_metrics(s, c.classes); });
  // Counts only mean something against a real side that has them (a profiler trace, not a log).
  if (std::any_of(c.real.steps.begin(), c.real.steps.end(), [](const auto& s) { return s.has_breakdown; })) {
    out += "\n";
    out += metric_table(c, "kernels per step (ours: tasks), by class, then comm kernels by type", false, "%.0f",
                               [&](const StepBreakdown& s) { return count_metrics(s, c.classes, types); });
  }
  if (c.straggler) out += ranks_table(c.ranks, *c.straggler, c.classes);
  return out + insight_tables(c) + memory_table(c);
}

}  // namespace simumax::compare
