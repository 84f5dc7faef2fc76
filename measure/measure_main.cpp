// simumax-measure: measures a GPU node (GEMMs, fused attention, HBM, NCCL) or imports nccl-tests / SimuMax
// efficiency-test output, and writes a SimuMax system config plus a CSV of every raw measurement (docs/measure.md).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/common/version.hpp"
#include "engine/config/scenario.hpp"
#include "engine/measure/kernel_problem.hpp"
#include "engine/measure/measurement.hpp"
#include "engine/measure/shape_list.hpp"
#include "engine/report/text_file.hpp"
#include "measure/gpu_timing.hpp"
#include "tools/cli_checks.hpp"

namespace {

using namespace simumax;

struct ScenarioArgs {
  std::string scenario, model, strategy, system;
  bool sweep = false, fp8 = false;
};

void add_scenario_options(CLI::App* cmd, ScenarioArgs& a) {
  cmd->add_option("scenario", a.scenario, "scenario file whose shapes to list or measure");
  cmd->add_option("--model", a.model, "model config (with --strategy and --shapes-system, instead of a scenario)");
  cmd->add_option("--strategy", a.strategy, "strategy config");
  cmd->add_option("--shapes-system", a.system, "system config for --model/--strategy (its sys_name sets the keys)");
  cmd->add_flag("--sweep", a.sweep, "add the standard sweep (the only shapes when no scenario is given)");
  cmd->add_flag("--fp8", a.fp8, "the sweep includes fp8 GEMMs");
}

std::vector<measure::Shape> shapes_of(const ScenarioArgs& a) {
  std::vector<measure::Shape> shapes;
  if (!a.scenario.empty()) {
    shapes = measure::scenario_shapes(config::load_scenario(a.scenario));
  } else if (!a.model.empty() || !a.strategy.empty()) {
    if (a.model.empty() || a.strategy.empty() || a.system.empty()) {
      throw common::UsageError("--model, --strategy and --shapes-system go together");
    }
    shapes = measure::scenario_shapes(config::load_configs(a.model, a.strategy, a.system));
  } else if (!a.sweep) {
    throw common::UsageError("give a scenario, --model/--strategy/--shapes-system, or --sweep");
  }
  if (a.sweep) shapes = measure::merge_shapes(shapes, measure::standard_sweep(a.fp8));
  return shapes;
}

std::string shapes_csv(const std::vector<measure::Shape>& shapes) {
  std::string out = "compute_op,kind,flops,key\n";
  for (const auto& s : shapes) {
    out += s.compute_op + "," + measure::to_string(s.kind) + "," + std::to_string(static_cast<int64_t>(s.flops)) +
           ",\"" + s.key + "\"\n";
  }
  return out;
}

// nccl-tests input "FILE:TIER[:COLLECTIVE[:RANKS]]".
measure::NcclInput parse_nccl_arg(const std::string& arg) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t c = arg.find(':'); ; c = arg.find(':', start)) {
    parts.push_back(arg.substr(start, c == std::string::npos ? std::string::npos : c - start));
    if (c == std::string::npos) break;
    start = c + 1;
  }
  if (parts.size() < 2 || parts.size() > 4 || parts[0].empty() || parts[1].empty()) {
    throw common::UsageError("--nccl-tests '" + arg + "': expected FILE:TIER[:COLLECTIVE[:RANKS]], e.g. "
                             "ar.txt:high_intra_node:all_reduce:8");
  }
  measure::NcclInput in{parts[0], parts[1], {}};
  if (parts.size() > 2) in.options.collective = parts[2];
  if (parts.size() > 3) {
    try {
      in.options.ranks = std::stoll(parts[3]);
    } catch (const std::exception&) {
      in.options.ranks = 0;
    }
    if (in.options.ranks < 2) throw common::UsageError("--nccl-tests '" + arg + "': RANKS must be an integer >= 2");
  }
  return in;
}

struct ComputeCounts {
  size_t gemms = 0, gemms_untimed = 0, attention = 0, attention_untimed = 0;
};

void untimed(const measure::Shape& s, const std::string& why, measure::Measured& m) {
  std::fprintf(stderr, "warning: %s %s: not timed: %s\n", s.compute_op.c_str(), s.key.c_str(), why.c_str());
  measure::add_untimed(s, why, m);
}

// Times every GEMM and attention shape of `shapes` and the HBM copy into `m`; with `skip_attention` the attention
// shapes are listed as not timed. Throws UsageError before any timing when a shape does not fit in the GPU's memory.
// REQUIRES: attention_unavailable() is empty unless `skip_attention` (run_gpu checks it first).
ComputeCounts time_compute(const std::vector<measure::Shape>& shapes, const config::SystemConfig& sys,
                           bool skip_attention, const measure::gpu::TimingOptions& o, measure::Measured& m) {
  const int sm = measure::gpu::compute_capability();
  std::vector<measure::Shape> gemms, attention;
  std::vector<measure::GemmProblem> gemm_problems;
  std::vector<measure::AttentionProblem> attention_problems;
  ComputeCounts n;
  for (const auto& s : shapes) {
    if (s.kind == measure::ShapeKind::kSdpFwd || s.kind == measure::ShapeKind::kSdpBwd) {
      ++n.attention;
      if (skip_attention) {
        untimed(s, "--skip-attention", m), ++n.attention_untimed;
        continue;
      }
      try {
        attention_problems.push_back(measure::attention_problem(s));
        attention.push_back(s);
      } catch (const common::UsageError& e) {
        untimed(s, e.what(), m), ++n.attention_untimed;
      }
    } else {
      gemms.push_back(s), gemm_problems.push_back(measure::gemm_problem(s, sm));
    }
  }
  n.gemms = gemms.size();
  measure::gpu::check_fits(gemm_problems, attention_problems);
  // A timing goes into the table, or the shape is listed as not timed, with the reason, and counted.
  auto record = [&](const auto& shape, const auto& t, size_t& untimed_count) {
    if (!t.skipped.empty()) {
      untimed(shape, t.skipped, m), ++untimed_count;
    } else {
      measure::add_compute_timing(sys, shape, t.median_us, t.min_us, t.max_us, t.repetitions, m);
    }
  };
  for (size_t i = 0; i < gemms.size(); ++i) {
    record(gemms[i], measure::gpu::time_gemm(gemm_problems[i], o), n.gemms_untimed);
  }
  for (size_t i = 0; i < attention.size(); ++i) {
    record(attention[i], measure::gpu::time_attention(attention_problems[i], o), n.attention_untimed);
  }
  const int64_t copy_bytes = 1LL << 30;
  const auto copy = measure::gpu::time_copy(copy_bytes, o);
  const double gibps = 2.0 * static_cast<double>(copy_bytes) / (copy.median_us * 1e-6) / (1LL << 30);
  m.system.hbm_gibps = gibps;
  m.raw.push_back({"hbm_copy", "copy", "device to device", copy_bytes, 0, copy.median_us, copy.min_us, copy.max_us,
                   copy.repetitions, gibps, "measured"});
  return n;
}

// Times the NCCL collectives among the launch's ranks and fits `tier` with them.
void time_network(const measure::Launch& launch, const config::SystemConfig& sys, const std::string& tier,
                  const std::string& rendezvous, int64_t max_bytes, const measure::gpu::TimingOptions& o,
                  measure::Measured& m) {
  static const std::map<std::string, model::Coll> kColl = {
      {"all_reduce", model::Coll::kAllReduce}, {"all_gather", model::Coll::kAllGather},
      {"reduce_scatter", model::Coll::kReduceScatter}, {"all2all", model::Coll::kAllToAll},
      {"p2p", model::Coll::kP2p}};
  std::map<std::string, std::vector<measure::CollectivePoint>> by_coll;
  for (const auto& r : measure::gpu::time_collectives(launch, rendezvous, max_bytes, o)) {
    const double busbw = static_cast<double>(r.bytes) * measure::bus_factor(kColl.at(r.collective), r.ranks) /
                         (r.timing.median_us * 1e3);
    by_coll[r.collective].push_back({r.bytes, r.ranks, r.timing.median_us, "measured"});
    m.raw.push_back({"nccl", r.collective, tier + " n=" + std::to_string(r.ranks), r.bytes, 0, r.timing.median_us,
                     r.timing.min_us, r.timing.max_us, r.timing.repetitions, busbw, "measured"});
  }
  for (const auto& [name, points] : by_coll) {
    auto fit = measure::fit_collective(sys, tier, kColl.at(name), points, 0);
    measure::add_fit(m.system, fit);
    m.fits.push_back(std::move(fit));
  }
}

struct RunArgs {
  std::string system, out, tier = "high_intra_node", rendezvous = ".";
  bool skip_nccl = false, skip_attention = false;
  int64_t max_bytes = 1LL << 30;
};

int run_gpu(const ScenarioArgs& a, const RunArgs& r) {
  const measure::Launch launch = measure::launch_from_env(measure::process_env());
  const auto shapes = shapes_of(a);
  // Checked before the GPU is touched: a build or node without cuDNN says so at once, not after the GEMMs.
  const auto attention = std::count_if(shapes.begin(), shapes.end(), [](const measure::Shape& s) {
    return s.kind == measure::ShapeKind::kSdpFwd || s.kind == measure::ShapeKind::kSdpBwd;
  });
  if (attention > 0 && !r.skip_attention) {
    if (const std::string why = measure::gpu::attention_unavailable(); !why.empty()) {
      throw common::UsageError("run: the shape list has " + std::to_string(attention) + " attention shapes, but " +
                               why + "; pass --skip-attention to measure the rest");
    }
  }
  const std::string gpu_name = measure::gpu::select_gpu(launch);
  const config::SystemConfig sys = config::load_system_file(r.system);
  if (!r.skip_nccl && sys.networks.count(r.tier) == 0) {
    throw common::UsageError("--tier " + r.tier + ": not a network tier of " + r.system);
  }
  measure::Measured m;
  m.system.provenance.push_back("simumax-measure run on " + gpu_name + " (docs/measure.md)");
  m.system.provenance.push_back("before: " + measure::gpu::clocks_and_power());
  const measure::gpu::TimingOptions o;
  const ComputeCounts n = time_compute(shapes, sys, r.skip_attention, o, m);
  if (!r.skip_nccl) time_network(launch, sys, r.tier, r.rendezvous, r.max_bytes, o, m);
  m.system.provenance.push_back("after: " + measure::gpu::clocks_and_power());
  std::printf("%s", measure::fit_report(m.fits).c_str());
  if (launch.rank == 0) measure::write_outputs(r.out, r.system, m);
  std::printf("GEMM shapes: %zu timed, %zu not; attention shapes: %zu timed, %zu not; HBM copy %.1f GiB/s; %s\n",
              n.gemms - n.gemms_untimed, n.gemms_untimed, n.attention - n.attention_untimed, n.attention_untimed,
              *m.system.hbm_gibps, launch.rank == 0 ? ("wrote " + r.out).c_str() : "rank 0 writes");
  // An attention shape cuDNN refused leaves the table incomplete: the rest is written, and the exit says so.
  if (n.attention_untimed > 0 && !r.skip_attention) {
    std::fprintf(stderr, "error: %zu attention shapes not timed (each listed above with cuDNN's reason); the "
                         "efficiency tables hold the rest\n", n.attention_untimed);
    return 2;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simumax-measure: measure a GPU node (or import nccl-tests / SimuMax efficiency-test output) and write "
               "a SimuMax system config (docs/measure.md)"};
  app.set_version_flag("--version", std::string("simumax-measure ") + common::version());
  app.require_subcommand(1);
  app.footer("Exit codes: 0 done; 2 bad input, no GPU, no NCCL, no cuDNN for the attention shapes, a shape too large "
             "for the GPU, a mismatched launch (one line on stderr), or an attention shape cuDNN refused (the rest is "
             "written, each refused shape listed); 3 a bug of ours.");
  ScenarioArgs shapes_args, run_args;
  std::string shapes_out;
  auto* shapes = app.add_subcommand("shapes", "list the efficiency-table keys a scenario looks up (CSV)");
  add_scenario_options(shapes, shapes_args);
  shapes->add_option("-o,--out", shapes_out, "write the CSV here instead of stdout");

  measure::ImportInputs imp;
  std::vector<std::string> nccl_args;
  std::string import_out;
  auto* import = app.add_subcommand("import", "build a system config from nccl-tests and SimuMax efficiency-test "
                                              "output, no GPU needed");
  import->add_option("--system", imp.base_system, "the system config to merge into (e.g. the nearest shipped one)")
      ->required();
  import->add_option("--nccl-tests", nccl_args, "nccl-tests output FILE:TIER[:COLLECTIVE[:RANKS]] (repeatable)");
  import->add_option("--simumax-efficiency", imp.efficiency_files,
                     "SimuMax efficiency-test output (gemm_efficiency.json, ...; repeatable)");
  import->add_option("--fit-min-bytes", imp.fit_min_bytes, "fit only messages of this size or more (default 0)");
  import->add_option("-o,--out", import_out, "output folder: system.json and measurements.csv")->required();

  RunArgs run_opts;
  auto* run = app.add_subcommand("run", "time this node's GEMMs, fused attention, HBM and NCCL (needs a CUDA GPU)");
  add_scenario_options(run, run_args);
  run->add_option("--system", run_opts.system, "the system config to merge into")->required();
  run->add_option("-o,--out", run_opts.out, "output folder: system.json and measurements.csv")->required();
  run->add_option("--tier", run_opts.tier, "network tier the collectives measure (default high_intra_node; "
                                           "inter_node when launched across nodes)");
  run->add_option("--rendezvous", run_opts.rendezvous, "folder every rank sees, for the NCCL id (default .)");
  run->add_option("--max-bytes", run_opts.max_bytes, "largest collective message (default 1 GiB)")
      ->check(CLI::Range(int64_t{1} << 20, int64_t{1} << 34));
  run->add_flag("--skip-nccl", run_opts.skip_nccl, "time compute and memory only");
  run->add_flag("--skip-attention", run_opts.skip_attention,
                "do not time fused attention (cuDNN); its shapes are listed as not timed");
  // CLI11_PARSE would exit with CLI11's own codes (106 for a failed check): a usage error is 2, as everywhere.
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help
    const std::string unknown = tools::unknown_option_message(app, "simumax-measure", argc, argv);
    std::fprintf(stderr, "error: %s (simumax-measure --help lists the options)\n",
                 unknown.empty() ? e.what() : unknown.c_str());
    return 2;
  }
  if (const std::string bad = tools::non_finite_option(app); !bad.empty()) {
    std::fprintf(stderr, "error: %s\n", bad.c_str());
    return 2;
  }
  common::set_log_level("warn");
  try {
    if (*shapes) {
      const std::string csv = shapes_csv(shapes_of(shapes_args));
      if (shapes_out.empty()) {
        std::fwrite(csv.data(), 1, csv.size(), stdout);
      } else {
        report::write_file_atomically(shapes_out, csv);
      }
      return 0;
    }
    if (*import) {
      for (const auto& a : nccl_args) imp.nccl.push_back(parse_nccl_arg(a));
      if (imp.nccl.empty() && imp.efficiency_files.empty()) {
        throw common::UsageError("import: give --nccl-tests and/or --simumax-efficiency");
      }
      const measure::Measured m = measure::import_measurements(imp);
      measure::write_outputs(import_out, imp.base_system, m);
      std::printf("%swrote %s/system.json and measurements.csv\n", measure::fit_report(m.fits).c_str(),
                  import_out.c_str());
      return 0;
    }
    return run_gpu(run_args, run_opts);
  } catch (const common::ConfigError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const common::UsageError& e) {
    std::fprintf(stderr, "error: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "internal error: %s\n", e.what());
    return 3;
  }
}
