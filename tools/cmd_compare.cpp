// simumax-sim compare: our simulated step against a real run (PyTorch profiler trace or Megatron-LM log).
#include <cstdlib>
#include <fstream>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/common/install_paths.hpp"
#include "engine/compare/trace_compare.hpp"
#include "engine/report/text_file.hpp"
#include "tools/cli_checks.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

struct CompareArgs {
  std::string ours;
  std::vector<std::string> real;
  std::string kernel_classes;
  int64_t rank = -1;
  std::string json_out;
  bool quiet = false;
  size_t top_n = 10;
};

int do_compare(const CompareArgs& a) {
  compare::CompareOptions o;
  o.ours = a.ours;
  o.real = a.real.front();
  o.more_real.assign(a.real.begin() + 1, a.real.end());
  o.kernel_classes = a.kernel_classes.empty() ? default_kernel_classes() : a.kernel_classes;
  if (a.rank >= 0) o.rank = a.rank;
  o.top_n = a.top_n;
  const compare::Comparison c = compare::compare_runs(o);
  if (!a.json_out.empty()) {
    report::write_file_atomically(a.json_out, compare::comparison_json(c));
  }
  if (!a.quiet) std::cout << compare::comparison_table(c);
  return 0;
}

}  // namespace

// The shipped table (data/kernel_classes.json of the data folder), unless $SIMUMAX_KERNEL_CLASSES names another.
std::string default_kernel_classes() {
  if (const char* env = std::getenv("SIMUMAX_KERNEL_CLASSES")) return env;
  return (common::data_dir() / "data" / "kernel_classes.json").string();
}

std::function<int()> add_compare(CLI::App& app) {
  auto args = std::make_shared<CompareArgs>();
  CLI::App* sub = app.add_subcommand("compare", "compare a simulated step with a real profiler trace or Megatron log");
  sub->add_option("ours", args->ours, "our trace.json, summary.json, or run folder (simumax-sim run --trace -o DIR)")
      ->required();
  sub->add_option("real", args->real,
                  "real run: PyTorch profiler (Kineto) trace .json/.json.gz, several rank traces or a folder of them "
                  "(per-rank table, slowest rank, straggler ratio), or a Megatron-LM log .log/.txt")
      ->required();
  sub->add_option("--rank", args->rank, "our rank to compare (default: the real trace's rank if ours has it, else "
                                        "the lowest rank in our trace)")
      ->check(non_negative_number());
  sub->add_option("--kernel-classes", args->kernel_classes,
                  "kernel classification table (default: $SIMUMAX_KERNEL_CLASSES, else data/kernel_classes.json "
                  "of the installed data folder, share/simumax-sim beside bin/)");
  sub->add_option("--json", args->json_out, "also write the comparison as JSON to this file");
  sub->add_option("--top", args->top_n, "rows of the top-kernel and op-by-op tables (default 10; --json has all ops)")
      ->check(CLI::Range(1, 100000));
  sub->add_flag("-q,--quiet", args->quiet, "print nothing; only write --json");
  return [sub, args]() { return sub->parsed() ? do_compare(*args) : -1; };
}

}  // namespace simumax::tools
