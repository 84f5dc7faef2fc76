// simumax-measure: measures a GPU node (GEMMs, HBM, NCCL) or imports nccl-tests / SimuMax efficiency-test output,
// and writes a SimuMax system config plus a CSV of every raw measurement (docs/measure.md).
#include <cstdio>
#include <filesystem>
#include <map>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/config/scenario.hpp"
#include "engine/measure/measurement.hpp"
#include "engine/measure/shape_list.hpp"
#include "engine/report/text_file.hpp"
#include "measure/gpu_timing.hpp"

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

measure::gpu::GemmSpec gemm_of(const measure::Shape& s) {
  measure::gpu::GemmSpec g;
  g.label = s.key;
  g.fp8 = s.compute_op.rfind("fp8_", 0) == 0;
  g.accumulate = s.fields.at("accumulate") == "True";
  if (s.kind == measure::ShapeKind::kGroupedGemm) {
    g.groups = s.field("ng"), g.m = s.field("M"), g.n = s.field("N"), g.k = s.field("K");
  } else {
    g.groups = s.field("b"), g.m = s.field("m"), g.k = s.field("k"), g.n = s.field("n");
    const std::string layout = s.fields.at("layout");
    g.transpose_a = layout[0] == 'T', g.transpose_b = layout.size() > 1 && layout[1] == 'T';
    g.out_fp32 = s.fields.at("out_dtype") == "fp32";
  }
  return g;
}

// Times every GEMM of `shapes` (attention is not timed yet) and the HBM copy into `m`; returns the attention
// shapes left out.
size_t time_compute(const std::vector<measure::Shape>& shapes, const config::SystemConfig& sys,
                    const measure::gpu::TimingOptions& o, measure::Measured& m) {
  std::vector<measure::Shape> gemms;
  std::vector<measure::gpu::GemmSpec> specs;
  for (const auto& s : shapes) {
    if (s.kind != measure::ShapeKind::kSdpFwd && s.kind != measure::ShapeKind::kSdpBwd) {
      gemms.push_back(s), specs.push_back(gemm_of(s));
    }
  }
  measure::gpu::check_fits(specs);
  for (size_t i = 0; i < gemms.size(); ++i) {
    const auto& s = gemms[i];
    const auto t = measure::gpu::time_gemm(specs[i], o);
    if (!t.skipped.empty()) {
      std::fprintf(stderr, "warning: %s %s: not timed: %s\n", s.compute_op.c_str(), s.key.c_str(), t.skipped.c_str());
      m.raw.push_back({measure::to_string(s.kind), s.compute_op, s.key, 0, s.flops, 0, 0, 0, 0, 0,
                       "not timed: " + t.skipped});
      continue;
    }
    const auto& op = sys.op.count(s.compute_op) ? sys.op.at(s.compute_op) : sys.op.at("default");
    const double eff = s.flops / (op.tflops * 1e12 * t.median_us * 1e-6);
    m.system.efficiencies[s.compute_op][s.key] = eff;
    m.raw.push_back({measure::to_string(s.kind), s.compute_op, s.key, 0, s.flops, t.median_us, t.min_us, t.max_us,
                     t.repetitions, eff, "measured"});
  }
  const int64_t copy_bytes = 1LL << 30;
  const auto copy = measure::gpu::time_copy(copy_bytes, o);
  const double gibps = 2.0 * static_cast<double>(copy_bytes) / (copy.median_us * 1e-6) / (1LL << 30);
  m.system.hbm_gibps = gibps;
  m.raw.push_back({"hbm_copy", "copy", "device to device", copy_bytes, 0, copy.median_us, copy.min_us, copy.max_us,
                   copy.repetitions, gibps, "measured"});
  return shapes.size() - gemms.size();
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
  bool skip_nccl = false;
  int64_t max_bytes = 1LL << 30;
};

int run_gpu(const ScenarioArgs& a, const RunArgs& r) {
  const measure::Launch launch = measure::launch_from_env(measure::process_env());
  const std::string gpu_name = measure::gpu::select_gpu(launch);
  const config::SystemConfig sys = config::load_system_file(r.system);
  if (!r.skip_nccl && sys.networks.count(r.tier) == 0) {
    throw common::UsageError("--tier " + r.tier + ": not a network tier of " + r.system);
  }
  const auto shapes = shapes_of(a);
  measure::Measured m;
  m.system.provenance.push_back("simumax-measure run on " + gpu_name + " (docs/measure.md)");
  m.system.provenance.push_back("before: " + measure::gpu::clocks_and_power());
  const measure::gpu::TimingOptions o;
  const size_t attention = time_compute(shapes, sys, o, m);
  if (!r.skip_nccl) time_network(launch, sys, r.tier, r.rendezvous, r.max_bytes, o, m);
  m.system.provenance.push_back("after: " + measure::gpu::clocks_and_power());
  std::printf("%s", measure::fit_report(m.fits).c_str());
  if (launch.rank == 0) measure::write_outputs(r.out, r.system, m);
  std::printf("%zu GEMM shapes timed, %zu attention shapes not timed (docs/measure.md), HBM copy %.1f GiB/s; %s\n",
              shapes.size() - attention, attention, *m.system.hbm_gibps,
              launch.rank == 0 ? ("wrote " + r.out).c_str() : "rank 0 writes");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"simumax-measure: measure a GPU node (or import nccl-tests / SimuMax efficiency-test output) and write "
               "a SimuMax system config (docs/measure.md)"};
  app.require_subcommand(1);
  app.footer("Exit codes: 0 done; 2 bad input, no GPU, no NCCL, a shape too large for the GPU, a mismatched launch "
             "(one line on stderr); 3 a bug of ours.");
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
  auto* run = app.add_subcommand("run", "time this node's GEMMs, HBM and NCCL (needs a CUDA GPU)");
  add_scenario_options(run, run_args);
  run->add_option("--system", run_opts.system, "the system config to merge into")->required();
  run->add_option("-o,--out", run_opts.out, "output folder: system.json and measurements.csv")->required();
  run->add_option("--tier", run_opts.tier, "network tier the collectives measure (default high_intra_node; "
                                           "inter_node when launched across nodes)");
  run->add_option("--rendezvous", run_opts.rendezvous, "folder every rank sees, for the NCCL id (default .)");
  run->add_option("--max-bytes", run_opts.max_bytes, "largest collective message (default 1 GiB)")
      ->check(CLI::Range(int64_t{1} << 20, int64_t{1} << 34));
  run->add_flag("--skip-nccl", run_opts.skip_nccl, "time compute and memory only");
  CLI11_PARSE(app, argc, argv);
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
