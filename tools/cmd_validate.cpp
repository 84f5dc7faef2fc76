// simumax-sim validate: our prediction vs SimuMax's and vs the real run, for every validation case given.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/calibrate/calibrate.hpp"
#include "engine/common/error.hpp"
#include "engine/common/number_text.hpp"
#include "engine/common/units.hpp"
#include "engine/config/shipped_calibration.hpp"
#include "engine/config/validation_case.hpp"
#include "engine/report/record_fields.hpp"
#include "engine/report/text_file.hpp"
#include "engine/simulate.hpp"
#include "tools/cli_checks.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct ValidateArgs {
  std::vector<std::string> paths;
  std::string shared_dir;
  EngineArgs engine;
  std::string json_path, csv_path;
  double margin_gib = 0;
};

struct ErrorStats {
  std::vector<double> errs;  // relative, signed
  void add(double pred, double real) { errs.push_back((pred - real) / real); }
  double mape() const { return calibrate::mape(errs); }
  double mean() const { return calibrate::mean(errs); }
  double worst() const { return calibrate::worst(errs); }
};

// Cases that name their machine and features (imported Megatron-LM tests and Megatron-Bridge rows) are also
// summed per machine, per machine and feature, and per machine and group (precision / model family).
struct Groups {
  std::map<std::string, std::pair<ErrorStats, ErrorStats>> by;  // key -> (time, memory)
  void add(const config::ValidationCase& vc, double ms, double gib) {
    if (vc.machine.empty()) return;
    std::vector<std::string> keys = {vc.machine};
    for (const auto& f : vc.features) keys.push_back(vc.machine + " / " + f);
    if (!vc.group.empty()) keys.push_back(vc.machine + " / " + vc.group);
    for (const auto& k : keys) {
      by[k].first.add(ms, vc.real_ms);
      if (vc.has_real_alloc) by[k].second.add(gib, vc.real_alloc_gib);
    }
  }
  template <typename Line>
  void print(Line&& line) const {
    for (const auto& [key, stats] : by) {
      std::printf("\n%s (%zu cases)\n", key.c_str(), stats.first.errs.size());
      line("  time   ours vs real", stats.first);
      if (stats.second.errs.size() != stats.first.errs.size()) {
        std::printf("  memory of %zu cases (the others' peak is not compared: see their memory_excluded)\n",
                    stats.second.errs.size());
      }
      if (!stats.second.errs.empty()) line("  memory ours vs real", stats.second);
    }
  }
};
double pct(const ErrorStats& s) { return 100 * s.errs.back(); }

// One case of --json / --csv: a skipped case has its reason and no numbers.
struct CaseRecord {
  CaseRecord(std::string case_name, std::string why) : name(std::move(case_name)), reason(std::move(why)) {}
  std::string name;
  std::string reason;  // "" when the case ran
  std::optional<double> ours_ms, simumax_ms, real_ms, ours_time_err_pct, simumax_time_err_pct, ours_alloc_gib,
      simumax_alloc_gib, real_alloc_gib, ours_mem_err_pct, simumax_mem_err_pct, ours_reserved_gib, gpu_memory_gib,
      headroom_gib;
  std::optional<std::string> memory_excluded;
  std::optional<bool> fits;

  void fields(report::FieldSink& f) const {
    f.text("case", name);
    f.text("status", reason.empty() ? "ok" : "skipped");
    f.text("reason", reason);
    for (const auto& [key, v] : {std::pair<const char*, const std::optional<double>*>{"ours_ms", &ours_ms},
                                 {"simumax_ms", &simumax_ms},
                                 {"real_ms", &real_ms},
                                 {"ours_time_err_pct", &ours_time_err_pct},
                                 {"simumax_time_err_pct", &simumax_time_err_pct},
                                 {"ours_alloc_gib", &ours_alloc_gib},
                                 {"simumax_alloc_gib", &simumax_alloc_gib},
                                 {"real_alloc_gib", &real_alloc_gib},
                                 {"ours_mem_err_pct", &ours_mem_err_pct},
                                 {"simumax_mem_err_pct", &simumax_mem_err_pct},
                                 {"ours_reserved_gib", &ours_reserved_gib},
                                 {"gpu_memory_gib", &gpu_memory_gib},
                                 {"headroom_gib", &headroom_gib}}) {
      f.maybe_number(key, *v);
    }
    f.maybe_text("memory_excluded", memory_excluded);
    f.maybe_boolean("fits", fits);
  }
};

void stats_fields(report::FieldSink& f, const char* prefix, const ErrorStats& s) {
  const std::string p = prefix;
  const bool any = !s.errs.empty();
  f.maybe_number(p + "_mape_pct", any ? std::optional<double>(100 * s.mape()) : std::nullopt);
  f.maybe_number(p + "_signed_mean_pct", any ? std::optional<double>(100 * s.mean()) : std::nullopt);
  f.maybe_number(p + "_worst_pct", any ? std::optional<double>(100 * s.worst()) : std::nullopt);
}

// What the table alone would mislead about (issue 34): real runs that used more memory than their system config's
// GPU has (their "fits NO" judges the config, not the machine they ran on), and errors that are in-sample (the
// shipped calibration in force was fitted on these very runs).
class CaseNotes {
 public:
  void look_at(const config::ValidationCase& vc, const report::Summary& s) {
    const double real_gib = std::max(vc.has_real_alloc ? vc.real_alloc_gib : 0.0, vc.real_reserved_gib.value_or(0.0));
    if (real_gib > s.gpu_memory_gib) {
      if (over_memory_.empty()) {
        example_ = vc.name + ": " + common::format_number("%.2f", real_gib) + " GiB measured, mem_gbs " +
                   common::format_number("%g", s.gpu_memory_gib);
      }
      over_memory_.push_back(vc.name);
    }
    if (s.calibration_source.rfind("shipped", 0) == 0) {
      const auto shipped = config::shipped_calibration(vc.scenario.system.sys_name);
      if (shipped && config::fitted_on_case(*shipped, vc.path)) ++in_sample_[vc.scenario.system.sys_name];
    }
  }
  void print() const {
    if (!over_memory_.empty()) {
      std::printf("note: %zu real run(s) used more memory than their system config's GPU has (%s): their fits "
                  "column judges the config, not the GPU they ran on\n",
                  over_memory_.size(), example_.c_str());
    }
    for (const auto& [sys, n] : in_sample_) {
      std::printf("note: %d case(s) are runs the shipped calibration of %s was fitted on (in-sample); calibrate "
                  "prints the errors with each family left out\n",
                  n, sys.c_str());
    }
  }

 private:
  std::vector<std::string> over_memory_;
  std::string example_;
  std::map<std::string, int> in_sample_;
};

int do_validate(const ValidateArgs& a) {
  // A bad output path is refused before any case runs (as search's -o).
  for (const std::string* p : {&a.json_path, &a.csv_path}) {
    if (!p->empty()) check_output_file(*p);
  }
  std::vector<CaseRecord> records;
  const std::string shared = a.shared_dir.empty() ? default_shared_dir() : a.shared_dir;
  const RunOptions o = make_run_options(a.engine);
  ErrorStats ours_t, sm_t, ours_m, sm_m, parity_t, parity_m;
  Groups groups;
  CaseNotes notes;
  const std::vector<std::string> files = case_files(a.paths);
  if (files.empty()) throw common::UsageError("no validation case (*.json) found in the paths given");
  std::printf("%-52s %10s %10s %10s %8s %8s | %8s %8s %8s %8s %8s %s\n", "case", "ours ms", "simumax", "real ms",
              "ours err", "sm err", "ours GiB", "simumax", "real GiB", "ours err", "sm err", "fits");
  int skipped = 0;
  for (const auto& file : files) {
    config::ValidationCase vc;
    RunResult r;
    try {
      vc = config::load_validation_case(file, shared);
      apply_fidelity(vc.scenario, a.engine.fidelity);
      r = simulate(vc.scenario, o);
    } catch (const common::ConfigError& e) {
      std::printf("%-52s skipped: %s\n", std::filesystem::path(file).stem().c_str(), e.what());
      records.emplace_back(std::filesystem::path(file).stem().string(), e.what());
      ++skipped;
      continue;
    }
    report::judge_fit(r.summary, a.margin_gib * common::kGiB);
    notes.look_at(vc, r.summary);
    const double ms = r.summary.step_time_ms;
    // A case whose real peak was logged by the last rank is compared with the last pipeline stage.
    const int64_t alloc = vc.alloc_of_last_rank && !r.summary.stages.empty() ? r.summary.stages.back().peak_alloc_bytes
                                                                              : r.summary.peak_alloc_bytes_max;
    const double gib = common::gib(static_cast<double>(alloc));
    ours_t.add(ms, vc.real_ms);
    if (vc.has_real_alloc) ours_m.add(gib, vc.real_alloc_gib);
    groups.add(vc, ms, gib);
    CaseRecord rec(vc.name, "");
    rec.ours_ms = ms;
    rec.real_ms = vc.real_ms;
    rec.ours_time_err_pct = pct(ours_t);
    rec.ours_alloc_gib = gib;
    if (vc.has_real_alloc) {
      rec.real_alloc_gib = vc.real_alloc_gib;
      rec.ours_mem_err_pct = pct(ours_m);
    } else {
      rec.memory_excluded = vc.real_alloc_excluded;
    }
    rec.ours_reserved_gib = common::gib(r.summary.peak_reserved_bytes_max);
    rec.gpu_memory_gib = r.summary.gpu_memory_gib;
    rec.headroom_gib = common::gib(r.summary.headroom_bytes);
    rec.fits = r.summary.fits;
    const char* fits = r.summary.fits ? "yes" : "NO";
    if (!vc.has_published) {  // an imported case: no SimuMax prediction to show
      if (vc.has_real_alloc) {
        std::printf("%-52s %10.1f %10s %10.1f %+7.2f%% %8s | %8.3f %8s %8.3f %+7.2f%% %8s %s\n", vc.name.c_str(), ms,
                    "-", vc.real_ms, pct(ours_t), "-", gib, "-", vc.real_alloc_gib, pct(ours_m), "-", fits);
      } else {
        std::printf("%-52s %10.1f %10s %10.1f %+7.2f%% %8s | %8.3f %8s %8s %8s %8s %s (memory not compared: %s)\n",
                    vc.name.c_str(), ms, "-", vc.real_ms, pct(ours_t), "-", gib, "-", "-", "-", "-", fits,
                    vc.real_alloc_excluded.c_str());
      }
      records.push_back(std::move(rec));
      continue;
    }
    sm_t.add(vc.published_perf_ms, vc.real_ms);
    sm_m.add(vc.published_perf_alloc_gib, vc.real_alloc_gib);
    parity_t.add(ms, vc.published_perf_ms);
    parity_m.add(gib, vc.published_perf_alloc_gib);
    std::printf("%-52s %10.1f %10.1f %10.1f %+7.2f%% %+7.2f%% | %8.3f %8.3f %8.3f %+7.2f%% %+7.2f%% %s\n",
                vc.name.c_str(), ms, vc.published_perf_ms, vc.real_ms, pct(ours_t), pct(sm_t), gib,
                vc.published_perf_alloc_gib, vc.real_alloc_gib, pct(ours_m), pct(sm_m), fits);
    rec.simumax_ms = vc.published_perf_ms;
    rec.simumax_time_err_pct = pct(sm_t);
    rec.simumax_alloc_gib = vc.published_perf_alloc_gib;
    rec.simumax_mem_err_pct = pct(sm_m);
    records.push_back(std::move(rec));
  }
  if (ours_t.errs.empty()) {
    throw common::UsageError("no validation case could be run (" + std::to_string(skipped) +
                             " skipped, each with its reason above)");
  }
  auto line = [](const char* what, const ErrorStats& s) {
    std::printf("%-34s MAPE %6.2f%%  signed mean %+6.2f%%  worst %+6.2f%%\n", what, 100 * s.mape(), 100 * s.mean(),
                100 * s.worst());
  };
  std::printf("\n%zu cases run, %d skipped (ours: %s fidelity)\n", ours_t.errs.size(), skipped,
              a.engine.fidelity.empty() ? "the cases' (default megatron)" : a.engine.fidelity.c_str());
  line("time   ours vs real", ours_t);
  if (!sm_t.errs.empty()) line("time   SimuMax vs real", sm_t);
  if (!parity_t.errs.empty()) line("time   ours vs SimuMax", parity_t);
  if (ours_m.errs.size() != ours_t.errs.size()) {
    std::printf("memory of %zu cases: %zu have a logged peak that is not compared (memory_excluded)\n",
                ours_m.errs.size(), ours_t.errs.size() - ours_m.errs.size());
  }
  if (!ours_m.errs.empty()) line("memory ours vs real", ours_m);
  if (!sm_m.errs.empty()) line("memory SimuMax vs real", sm_m);
  if (!parity_m.errs.empty()) line("memory ours vs SimuMax", parity_m);
  groups.print(line);
  notes.print();
  const report::Fields meta = [&](report::FieldSink& f) {
    f.text("fidelity", a.engine.fidelity.empty() ? "the cases'" : a.engine.fidelity);
    f.integer("cases_run", static_cast<int64_t>(ours_t.errs.size()));
    f.integer("cases_skipped", skipped);
    f.integer("cases_memory_compared", static_cast<int64_t>(ours_m.errs.size()));
    f.number("memory_margin_gib", a.margin_gib);
    for (const auto& [prefix, stats] : {std::pair<const char*, const ErrorStats*>{"time_ours_vs_real", &ours_t},
                                        {"time_simumax_vs_real", &sm_t}, {"time_ours_vs_simumax", &parity_t},
                                        {"memory_ours_vs_real", &ours_m}, {"memory_simumax_vs_real", &sm_m},
                                        {"memory_ours_vs_simumax", &parity_m}}) {
      stats_fields(f, prefix, *stats);
    }
  };
  std::vector<report::Fields> cases;
  for (const CaseRecord& rec : records) cases.push_back([&rec](report::FieldSink& f) { rec.fields(f); });
  if (!a.json_path.empty()) {
    report::write_file_atomically(a.json_path,
                                  report::records_json("simumax_sim_validate_v1", meta, {{"cases", cases}}));
    std::printf("wrote %s\n", a.json_path.c_str());
  }
  if (!a.csv_path.empty()) {
    report::write_file_atomically(a.csv_path, report::records_csv(cases));
    std::printf("wrote %s\n", a.csv_path.c_str());
  }
  return 0;
}

}  // namespace

std::function<int()> add_validate(CLI::App& app) {
  auto args = std::make_shared<ValidateArgs>();
  CLI::App* sub = app.add_subcommand("validate", "compare predictions with real runs and with SimuMax");
  sub->add_option("cases", args->paths, "validation case files or folders (e.g. ../shared/validation)")->required();
  sub->add_option("--shared", args->shared_dir, "the shared/ folder the cases' system_file is relative to "
                                                "(default: $SIMUMAX_SHARED_DIR, else ../shared)");
  add_engine_options(*sub, args->engine);
  sub->add_option("--json", args->json_path, "also write every case and the error statistics as JSON to FILE");
  sub->add_option("--csv", args->csv_path, "also write every case as CSV to FILE (one row per case)");
  sub->add_option("--memory-margin-gib", args->margin_gib,
                  "GiB the fits column keeps free on every GPU beyond the peak reserved memory")
      ->capture_default_str()
      ->check(non_negative_number());
  sub->footer("fits: our peak reserved memory plus the margin within the system's mem_gbs on every stage.");
  return [sub, args]() { return sub->parsed() ? do_validate(*args) : -1; };
}

}  // namespace simumax::tools
