// simumax-sim run: one scenario (or three config files) -> summary table + summary.json.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"
#include "engine/simulate.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/text_file.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"
#include "tools/link_report.hpp"
#include "tools/run_outputs.hpp"

namespace simumax::tools {

namespace {

struct RunArgs {
  std::string scenario;
  ConfigArgs configs;
  EngineArgs engine;
  std::string out_dir;
  bool quiet = false;
  OutputArgs outputs;
  double margin_gib = 0;
  bool require_fit = false;
  bool html = false;  // also write report.html (docs/report.md)
};

// The files a run writes into its folder. A run owns them: once its simulation has succeeded, those an earlier
// run left are removed before the new ones are written, so a folder never mixes two runs. Nothing else in the
// folder is touched.
const char* const kRunFiles[] = {"summary.json",         "platform.xml",           "links.json",
                                 "trace.json",           "tracing_logs.json",      "memory_timeline.json",
                                 "memory_snapshot.json", "memory_snapshot.pickle", "compute_result.json",
                                 "mem_result.json",      "base_info.json",         "simu_memory_result.json",
                                 "simu_memory_snapshot.json", "report.html",
                                 "compare.json"};  // `compare --json DIR/compare.json` of the earlier run

// One run at a time per folder: an advisory lock on <dir>/.simumax-sim.lock, held until the process ends (the
// kernel releases it even on a crash). Two runs writing one folder mixed their files (issue #12).
void lock_folder(const std::string& dir) {
  const std::string path = dir + "/.simumax-sim.lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw common::UsageError("-o " + dir + ": cannot lock the folder: " + std::strerror(errno));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    char pid[32] = {};
    const ssize_t n = ::pread(fd, pid, sizeof pid - 1, 0);
    ::close(fd);
    throw common::UsageError(dir + " is in use by " + (n > 0 ? "pid " + std::string(pid, static_cast<size_t>(n)) : "another run") +
                             " (another simumax-sim run writes there); wait for it, or give another -o");
  }
  // The pid is only for the message a second run prints; the lock holds whether or not it is recorded.
  const std::string me = std::to_string(::getpid());
  [[maybe_unused]] const bool recorded =
      ::ftruncate(fd, 0) == 0 && ::pwrite(fd, me.data(), me.size(), 0) == static_cast<ssize_t>(me.size());
}

// `keep`: a file the run reads (the user's platform XML may sit in the folder under the name we write).
void remove_earlier_run(const std::string& dir, const std::optional<std::string>& keep) {
  for (const char* name : kRunFiles) {
    std::error_code ec;
    const auto path = std::filesystem::path(dir) / name;
    if (keep && std::filesystem::equivalent(path, *keep, ec)) continue;
    if (std::filesystem::is_regular_file(path, ec) || std::filesystem::is_symlink(path, ec)) {
      std::filesystem::remove(path, ec);
      if (ec) throw common::UsageError("cannot remove " + path.string() + " of an earlier run: " + ec.message());
    }
  }
}

int do_run(const RunArgs& a) {
  config::Scenario s = load_scenario_or_configs(a.scenario, a.configs);
  apply_fidelity(s, a.engine.fidelity);
  RunOptions o = make_run_options(a.engine);
  const std::string dir = a.out_dir.empty() ? "out/" + s.name : a.out_dir;
  make_output_folder(dir);
  lock_folder(dir);
  if (o.executor == ExecutorKind::kSim && !o.platform_xml && s.platform_path) o.platform_xml = s.platform_path;
  // The fast executor has no network to put a platform on: say so rather than give the single-switch time
  // silently (a scenario's platform is for --executor sim; README "Interconnect what-ifs").
  if (o.executor == ExecutorKind::kFast && s.platform_path) {
    std::cerr << "note: the scenario names the platform " << *s.platform_path
              << ", which the fast executor does not use (no contention, no topology); add --executor sim to run "
                 "on it\n";
  }
  if (o.executor == ExecutorKind::kSim && !o.platform_xml) {
    remove_earlier_run(dir, std::nullopt);  // the simulation writes platform.xml before it runs
    o.platform_out = dir + "/platform.xml";
  }
  RunResult r = simulate(s, o);
  report::judge_fit(r.summary, a.margin_gib * common::kGiB);
  if (o.platform_out.empty()) remove_earlier_run(dir, o.platform_xml);
  report::write_file_atomically(dir + "/summary.json", report::summary_json(r.summary));
  if (!a.quiet) {
    std::cout << report::summary_table(r.summary);
    std::cout << "\nwrote " << dir << "/summary.json\n";
  }
  for (const std::string& path : write_outputs(dir, s, r, a.outputs)) {
    if (!a.quiet) std::cout << "wrote " << path << "\n";
  }
  if (o.executor == ExecutorKind::kSim) {
    const std::string links = write_links_json(dir, r.timeline);
    if (!a.quiet) std::cout << busiest_links_table(r.timeline, 5) << "wrote " << links << "\n";
  }
  if (a.html) {  // last: the page reads the files written above
    report::write_file_atomically(dir + "/report.html", report::html_report(dir, report::HtmlReportOptions{}));
    if (!a.quiet) std::cout << "wrote " << dir << "/report.html\n";
  }
  if (!r.summary.fits && a.require_fit) {
    std::cerr << "error: " << s.name << " does not fit in GPU memory (--require-fit): exit " << kExitDoesNotFit << "\n";
    return kExitDoesNotFit;
  }
  return 0;
}

}  // namespace

std::function<int()> add_run(CLI::App& app) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* sub = app.add_subcommand("run", "simulate one training step and report time and memory");
  sub->add_option("scenario", args->scenario, "scenario JSON file (or use --model/--strategy/--system)");
  add_config_options(*sub, args->configs);
  add_engine_options(*sub, args->engine);
  sub->add_option("-o,--out", args->out_dir, "output folder (default: out/<scenario name>)");
  sub->add_flag("-q,--quiet", args->quiet, "print nothing; only write the files");
  add_output_options(*sub, args->outputs);
  sub->add_flag("--html", args->html, "also write report.html, the self-contained HTML report (docs/report.md)");
  sub->add_option("--memory-margin-gib", args->margin_gib,
                  "GiB the fit verdict keeps free on every GPU beyond the peak reserved memory (search's default is "
                  "6, SimuMax's gmi_error)")
      ->capture_default_str()
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--require-fit", args->require_fit,
                "exit with code 4 when a stage does not fit in GPU memory (the files are written all the same)");
  sub->footer(
      "A stage fits when its peak reserved memory plus --memory-margin-gib is at most the GPU memory (the system's "
      "mem_gbs); the table and summary.json give the verdict and the headroom of every stage.\n"
      "Exit codes: 0 done; 2 bad input or a bad -o (an existing file, a folder that cannot be created); 3 a bug of "
      "ours; 4 --require-fit and a stage does not fit; 130 interrupted.");
  return [sub, args]() { return sub->parsed() ? do_run(*args) : -1; };
}

}  // namespace simumax::tools
