#include "tools/sweep_slurm.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>

#include "engine/common/error.hpp"
#include "engine/report/record_fields.hpp"
#include "engine/report/text_file.hpp"
#include "tools/child_process.hpp"
#include "tools/cli_options.hpp"

namespace simumax::tools {

namespace fs = std::filesystem;

void add_slurm_options(CLI::App& sub, SlurmArgs& a) {
  sub.add_option("--shards", a.shards, "--slurm: array tasks, each running a contiguous share of the cases "
                                       "(default: min(cases, 100))")
      ->check(CLI::Range(1, 1000000));
  sub.add_option("--sbatch", a.sbatch, "--slurm: the sbatch program")->capture_default_str();
  sub.add_option("--sbatch-arg", a.sbatch_args,
                 "--slurm: an option for sbatch, e.g. --sbatch-arg=--partition=cpu (repeatable)")
      ->allow_extra_args(false);
  sub.add_option("--sbatch-timeout", a.sbatch_timeout_s, "--slurm: seconds to wait for sbatch to answer")
      ->capture_default_str()
      ->check(CLI::Range(1.0, 3600.0));
}

namespace {

std::string plan_path(const std::string& out_dir) { return out_dir + "/slurm/plan.json"; }

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::string job_script(const config::Sweep& s, const std::string& out, const SlurmArgs& a, size_t shards) {
  std::string job_name = "simumax-sweep-" + s.name;
  for (char& c : job_name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') c = '_';
  }
  std::string text = "#!/bin/sh\n";
  text += "#SBATCH --job-name=" + job_name + "\n";
  text += "#SBATCH --array=0-" + std::to_string(shards - 1) + "\n";
  text += "# Written by simumax-sim sweep --slurm: array task i runs shard i of the " + std::to_string(s.cases) +
          " cases of the sweep file below and writes " + out + "/shards/shard-i.jsonl; `simumax-sim sweep --merge " +
          out + "` gathers them. sbatch got --output=" + out + "/slurm/task-%a.out as well.\n";
  text += "exec " + shell_quote(a.self) + " sweep " + shell_quote(s.path) + " --shard \"$SLURM_ARRAY_TASK_ID\" -o " +
          shell_quote(out) + " -j \"${SLURM_CPUS_PER_TASK:-1}\" -q\n";
  return text;
}

}  // namespace

SlurmPlan read_plan(const std::string& out_dir) {
  const std::string path = plan_path(out_dir);
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) {
    throw common::UsageError(out_dir + " is not the folder of a `sweep --slurm` (no " + path + ")");
  }
  report::RecordValues f;
  try {
    report::replay_record_line(first_line(path), path, f);
  } catch (const common::ConfigError& e) {
    throw common::UsageError(e.what());
  }
  const std::string* sweep = f.find_text("sweep");
  const std::string* fp = f.find_text("fingerprint");
  const int64_t* cases = f.find_integer("cases");
  const int64_t* shards = f.find_integer("shards");
  const int64_t* max_cases = f.find_integer("max_cases");
  const double* timeout = f.find_number("case_timeout_s");
  if (!sweep || !fp || !cases || !shards || !max_cases || !timeout || *shards < 1 || *cases < *shards) {
    throw common::UsageError(path + ": not a plan written by `sweep --slurm` (a field is missing or wrong)");
  }
  return {*sweep, *fp, static_cast<size_t>(*cases), static_cast<size_t>(*shards), static_cast<size_t>(*max_cases),
          *timeout};
}

void check_plan(const SlurmPlan& plan, const config::Sweep& s) {
  if (plan.fingerprint != s.fingerprint || plan.cases != s.cases) {
    throw common::UsageError(s.path + " changed after the sweep was submitted (its plan has " +
                             std::to_string(plan.cases) + " cases, fingerprint " + plan.fingerprint +
                             "): submit it again");
  }
}

std::string submit_sweep(const config::Sweep& s, const std::string& out_dir, const SlurmArgs& a) {
  const size_t shards = a.shards > 0 ? a.shards : std::min<size_t>(s.cases, 100);
  if (shards > s.cases) {
    throw common::UsageError("--shards " + std::to_string(shards) + " is more than the " + std::to_string(s.cases) +
                             " cases of the sweep");
  }
  const std::optional<std::string> sbatch = find_program(a.sbatch);
  if (!sbatch) {
    throw common::UsageError("--slurm: '" + a.sbatch + "' not found" +
                             (a.sbatch.find('/') == std::string::npos ? " in PATH" : "") +
                             ": is Slurm installed here? (--sbatch names the program; without --slurm the sweep runs "
                             "on this machine)");
  }
  // job.sh names these in comments and commands: a newline in one would start a command of its own.
  for (const auto& [what, path] : {std::pair<const char*, const std::string&>{"-o", out_dir}, {"the sweep file", s.path},
                                   {"simumax-sim's path", a.self}}) {
    if (std::any_of(path.begin(), path.end(), [](unsigned char c) { return c < 0x20 || c == 0x7f; })) {
      throw common::UsageError(std::string("--slurm: ") + what + " has a control character (a newline, a tab, ...) in "
                               "its path, which job.sh cannot hold safely: rename it");
    }
  }
  make_output_folder(out_dir);
  const std::string out = fs::absolute(out_dir).lexically_normal().string();
  make_output_folder(out + "/slurm");
  make_output_folder(out + "/shards");
  // Shards of an earlier submission into this folder would be merged as this one's: they go first.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out + "/shards", ec)) {
    if (e.path().extension() == ".jsonl") fs::remove(e.path(), ec);
  }
  const std::string plan = report::record_line([&](report::FieldSink& f) {
    f.text("sweep", s.path);
    f.text("fingerprint", s.fingerprint);
    f.integer("cases", static_cast<int64_t>(s.cases));
    f.integer("shards", static_cast<int64_t>(shards));
    f.integer("max_cases", static_cast<int64_t>(a.max_cases));
    f.number("case_timeout_s", a.case_timeout_s);
  });
  report::write_file_atomically(plan_path(out), plan + "\n");
  const std::string script = out + "/slurm/job.sh";
  report::write_file_atomically(script, job_script(s, out, a, shards));
  std::vector<std::string> args = {"--parsable", "--array=0-" + std::to_string(shards - 1),
                                   "--output=" + out + "/slurm/task-%a.out"};
  args.insert(args.end(), a.sbatch_args.begin(), a.sbatch_args.end());
  args.push_back(script);
  const std::string said = out + "/slurm/sbatch.out", err = out + "/slurm/sbatch.err";
  const ChildResult r = run_child(*sbatch, args, said, err, a.sbatch_timeout_s);
  if (r.timed_out) {
    throw common::UsageError("sbatch did not answer in " + std::to_string(static_cast<int64_t>(a.sbatch_timeout_s)) +
                             " s (--sbatch-timeout): is slurmctld reachable? (sinfo tells)");
  }
  if (r.exit_code != 0) {
    throw common::UsageError("sbatch rejected the job (exit " + std::to_string(r.exit_code) +
                             "): " + trimmed(read_text_file(err, 4096)) + "\n  the script: " + script);
  }
  const std::string answer = trimmed(read_text_file(said, 4096));
  // --parsable prints "<id>" or "<id>;<cluster>"; a site's wrapper may print "Submitted batch job <id>".
  const size_t start = answer.find_first_of("0123456789");
  if (start == std::string::npos) {
    throw common::UsageError("sbatch printed no job id: '" + answer + "' (the job may have been submitted: squeue)");
  }
  const std::string job = answer.substr(start, answer.find_first_not_of("0123456789", start) - start);
  report::write_file_atomically(out + "/slurm/job_id", job + "\n");
  return "submitted Slurm job " + job + ": " + std::to_string(shards) + " array tasks for " +
         std::to_string(s.cases) + " cases of " + s.path + "\nwhen it has ended (squeue -j " + job +
         " shows nothing): simumax-sim sweep --merge " + out_dir + "\n";
}

}  // namespace simumax::tools
