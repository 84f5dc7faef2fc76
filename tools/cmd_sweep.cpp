// simumax-sim sweep: a base scenario x lists of overrides x platforms (docs/sweep.md), every case in its own
// process on the local cores, or as a Slurm job array whose shards `sweep --merge` gathers into the same files.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <thread>

#include "engine/common/error.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/text_file.hpp"
#include "tools/cli_checks.hpp"
#include "tools/child_process.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"
#include "tools/sweep_runner.hpp"
#include "tools/sweep_slurm.hpp"

namespace simumax::tools {

namespace {

namespace fs = std::filesystem;

struct SweepArgs {
  std::string self;
  std::string file;
  std::string out_dir;
  int jobs = 0;
  size_t max_cases = 100000;
  double case_timeout_s = 0;
  bool quiet = false;
  bool slurm = false;
  SlurmArgs slurm_args;
  std::string merge;
  std::string html;  // the sweep's page (sweep.json drawn), written after sweep.csv and sweep.json
  // The child and array-task sides, not for people: one case here; one shard of a submitted sweep.
  int64_t case_index = -1;
  int64_t case_count = 1;
  std::string cases_dir;
  int64_t shard = -1;
};

std::string out_dir_of(const SweepArgs& a, const config::Sweep& s) {
  return a.out_dir.empty() ? "out/" + s.name : a.out_dir;
}

// Cases that did not run are rows, not an error; one line on stderr says so, for a script watching only stderr.
void note_bad_rows(const std::string& counts, const std::string& out) {
  if (counts.find(" 0 invalid, 0 failed") == std::string::npos) {
    std::cerr << "note: " << counts << ": the status and error columns of " << out << "/sweep.csv say why\n";
  }
}

// The page of the sweep just written to `dir` (its sweep.json): to a temporary name, then renamed.
// Checked before any case runs: a sweep of hours must not end on a page it cannot write.
void check_page_path(const SweepArgs& a) {
  if (a.html.empty()) return;
  std::error_code ec;
  if (fs::is_directory(a.html, ec)) {
    throw common::UsageError("--html " + a.html + ": is a folder (expected a file name)");
  }
  const fs::path parent = fs::path(a.html).parent_path();
  if (!parent.empty() && !fs::is_directory(parent, ec)) {
    throw common::UsageError("--html " + a.html + ": its folder " + parent.string() + " does not exist");
  }
}

void write_page(const SweepArgs& a, const std::string& dir) {
  if (a.html.empty()) return;
  report::write_file_atomically(a.html, report::html_sweep_report(dir));
}

CaseRunner case_runner(const SweepArgs& a, const std::string& out_dir) {
  CaseRunner r;
  r.self = a.self;
  r.out_dir = out_dir;
  r.jobs = a.jobs > 0 ? a.jobs : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  r.case_timeout_s = a.case_timeout_s;
  r.max_cases = a.max_cases;
  return r;
}

int do_local(const SweepArgs& a) {
  const config::Sweep s = config::load_sweep(a.file, a.max_cases);
  check_page_path(a);
  const std::string out = out_dir_of(a, s);
  make_output_folder(out);
  const CaseRunner r = case_runner(a, out);
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::string> lines = run_cases(s, r, 0, s.cases, a.quiet ? nullptr : progress_bar());
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string counts = write_sweep_outputs(s, out, lines);
  write_page(a, out);
  if (!a.quiet) note_bad_rows(counts, out);
  if (!a.quiet) {
    std::cout << "sweep " << s.name << ": " << counts << " (" << r.jobs << " processes, " << seconds << " s)\nwrote "
              << out << "/sweep.csv, " << out << "/sweep.json" << (a.html.empty() ? "" : ", " + a.html) << "\n";
  }
  return 0;
}

// An array task: the cases of shard `a.shard` of the plan that --slurm wrote in the output folder.
int do_shard(const SweepArgs& a) {
  if (a.out_dir.empty()) throw common::UsageError("--shard needs -o, the folder of the submitted sweep");
  const SlurmPlan plan = read_plan(a.out_dir);
  const config::Sweep s = config::load_sweep(plan.sweep, plan.max_cases);
  check_plan(plan, s);
  const auto shard = static_cast<size_t>(a.shard);
  if (shard >= plan.shards) {
    throw common::UsageError("--shard " + std::to_string(shard) + ": the plan has shards 0 to " +
                             std::to_string(plan.shards - 1));
  }
  const auto [first, count] = shard_range(s.cases, shard, plan.shards);
  CaseRunner r = case_runner(a, a.out_dir);
  r.case_timeout_s = plan.case_timeout_s;
  r.max_cases = plan.max_cases;  // the cases reload the sweep file under the submitted limit
  write_shard(s, a.out_dir, shard, plan.shards, run_cases(s, r, first, count, nullptr));
  return 0;
}

int do_merge(const SweepArgs& a) {
  const SlurmPlan plan = read_plan(a.merge);
  const config::Sweep s = config::load_sweep(plan.sweep, plan.max_cases);
  check_plan(plan, s);
  check_page_path(a);
  const std::string counts = write_sweep_outputs(s, a.merge, read_shards(s, a.merge, plan.shards));
  write_page(a, a.merge);
  if (!a.quiet) note_bad_rows(counts, a.merge);
  if (!a.quiet) {
    std::cout << "sweep " << s.name << ": " << counts << " (" << plan.shards << " shards)\nwrote " << a.merge
              << "/sweep.csv, " << a.merge << "/sweep.json" << (a.html.empty() ? "" : ", " + a.html) << "\n";
  }
  return 0;
}

int do_sweep(const SweepArgs& a) {
  if (!a.merge.empty()) {
    if (!a.file.empty()) throw common::UsageError("--merge DIR takes no sweep file (the folder's plan names it)");
    return do_merge(a);
  }
  if (a.file.empty()) throw common::UsageError("sweep needs a sweep file, or --merge DIR");
  if (a.case_index >= 0) {
    if (a.cases_dir.empty()) throw common::UsageError("--case needs --cases-dir");
    const config::Sweep s = config::load_sweep(a.file, a.max_cases);
    if (static_cast<size_t>(a.case_index) >= s.cases) {
      throw common::UsageError("--case " + std::to_string(a.case_index) + ": the sweep has " +
                               std::to_string(s.cases) + " cases");
    }
    run_cases_here(s, static_cast<size_t>(a.case_index), static_cast<size_t>(a.case_count), a.cases_dir);
    return 0;
  }
  if (a.shard >= 0) return do_shard(a);
  if (a.slurm) {
    if (!a.html.empty()) {
      throw common::UsageError("--html with --slurm: the page is written once the job has ended, by sweep --merge "
                               "OUT --html FILE");
    }
    const config::Sweep s = config::load_sweep(a.file, a.max_cases);
    SlurmArgs sa = a.slurm_args;
    sa.self = a.self;
    sa.max_cases = a.max_cases;
    sa.case_timeout_s = a.case_timeout_s;
    std::cout << submit_sweep(s, out_dir_of(a, s), sa);
    return 0;
  }
  return do_local(a);
}

}  // namespace

std::function<int()> add_sweep(CLI::App& app) {
  auto a = std::make_shared<SweepArgs>();
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  a->self = ec ? "simumax-sim" : exe.string();
  CLI::App* sub = app.add_subcommand(
      "sweep", "run every case of a sweep file (a base scenario x overrides x platforms) locally or on Slurm");
  sub->add_option("file", a->file, "sweep file (JSON; docs/sweep.md)");
  sub->add_option("-o,--out", a->out_dir, "output folder (default: out/<sweep name>)");
  sub->add_option("-j,--jobs", a->jobs,
                  "processes at once (0: one per core); a sim case has a process of its own, fast cases share one "
                  "by up to 32")
      ->capture_default_str()
      ->check(CLI::Range(0, 4096));
  sub->add_option("--max-cases", a->max_cases, "refuse a sweep of more cases than this, before running any")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--case-timeout", a->case_timeout_s,
                  "seconds a case may run before it is stopped and recorded as failed (0: no limit)")
      ->capture_default_str()
      ->check(non_negative_number());
  sub->add_flag("-q,--quiet", a->quiet, "print nothing; only write the files");
  sub->add_flag("--slurm", a->slurm,
                "write a job script and submit it as a Slurm job array (sbatch --array), one shard of cases per task; "
                "prints the job id");
  add_slurm_options(*sub, a->slurm_args);
  sub->add_option("--merge", a->merge,
                  "gather the shards of a --slurm sweep's output folder into its sweep.csv and sweep.json");
  sub->add_option("--html", a->html,
                  "also write the sweep's page to FILE (self-contained HTML: every case in a sortable table, the step "
                  "time of each case grouped by the swept values, the best case per layout); with --merge too")
      ->type_name("FILE");
  sub->add_option("--case", a->case_index, "(internal) run cases from this one here")->group("");
  sub->add_option("--case-count", a->case_count, "(internal) how many cases --case runs")->group("");
  sub->add_option("--cases-dir", a->cases_dir, "(internal) the folder of the case folders")->group("");
  sub->add_option("--shard", a->shard, "(internal) run this shard of the submitted sweep in -o")->group("");
  sub->footer(
      "Cases are the cartesian product of the override lists (the first key varies slowest) and the platforms (the "
      "fastest); each has a folder <out>/cases/<name> (its summary.json). Written to the output folder: "
      "sweep.csv and sweep.json, one row per case in case order (the override values, status ok / invalid / failed "
      "with the error, step time, MFU, tokens/s, peak memory, the fit verdict and its headroom). A --slurm sweep "
      "writes the same two files when `sweep --merge <out>` runs after its job, byte for byte; --html FILE adds the "
      "page of them (the same bytes for a local run and a merge).\n"
      "Exit codes: 0 done (a case may still be invalid or failed: see its row); 2 bad input (an unknown override "
      "key, an empty product, more cases than --max-cases, sbatch missing or rejecting the job, a shard missing "
      "or incomplete at --merge); 3 a bug of ours; 130 interrupted.");
  return [sub, a]() { return sub->parsed() ? do_sweep(*a) : -1; };
}

}  // namespace simumax::tools
