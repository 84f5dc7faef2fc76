#include "engine/measure/measurement.hpp"

#include <filesystem>
#include <map>

#include <spdlog/fmt/fmt.h>

#include "engine/common/error.hpp"
#include "engine/config/efficiency_test_output.hpp"
#include "engine/config/scenario.hpp"
#include "engine/measure/kernel_problem.hpp"
#include "engine/report/record_fields.hpp"
#include "engine/report/text_file.hpp"

namespace simumax::measure {

using report::csv_text;

std::string measurements_csv(const std::vector<RawMeasurement>& rows) {
  std::string out = "kind,name,key,bytes,flops,median_us,min_us,max_us,repetitions,value,source\n";
  for (const auto& r : rows) {
    out += fmt::format("{},{},{},{},{:.17g},{:.17g},{:.17g},{:.17g},{},{:.17g},{}\n", csv_text(r.kind),
                       csv_text(r.name), csv_text(r.key), r.bytes, r.flops, r.median_us, r.min_us, r.max_us,
                       r.repetitions, r.value, csv_text(r.source));
  }
  return out;
}

double add_compute_timing(const config::SystemConfig& sys, const Shape& s, double median_us, double min_us,
                          double max_us, int repetitions, Measured& m) {
  const double eff = efficiency_for(s.flops, table_tflops(sys, s.compute_op), median_us);
  m.system.efficiencies[s.compute_op][s.key] = eff;
  m.raw.push_back({to_string(s.kind), s.compute_op, s.key, 0, s.flops, median_us, min_us, max_us, repetitions, eff,
                   "measured"});
  return eff;
}

void add_untimed(const Shape& s, const std::string& why, Measured& m) {
  m.raw.push_back({to_string(s.kind), s.compute_op, s.key, 0, s.flops, 0, 0, 0, 0, 0, "not timed: " + why});
}

Measured import_measurements(const ImportInputs& in) {
  Measured out;
  const config::SystemConfig base = config::load_system_file(in.base_system);
  std::map<std::pair<std::string, model::Coll>, std::vector<CollectivePoint>> groups;
  for (const auto& input : in.nccl) {
    const NcclTestsTable t = read_nccl_tests(input.path, input.options);
    if (base.networks.count(input.tier) == 0) {
      throw common::UsageError(input.path + ": network tier '" + input.tier + "' is not in " + in.base_system);
    }
    for (const auto& r : t.rows) {
      const std::string where = input.path + ":" + std::to_string(r.line);
      groups[{input.tier, t.coll}].push_back({r.bytes, t.ranks, r.time_us, where});
      out.raw.push_back({"nccl", t.collective, input.tier + " n=" + std::to_string(t.ranks), r.bytes, 0, r.time_us,
                         r.time_us, r.time_us, 1, r.busbw_gbs, where});
    }
    out.system.provenance.push_back("nccl-tests: " + input.path + " (" + t.collective + ", " +
                                    std::to_string(t.ranks) + " ranks) -> networks." + input.tier);
  }
  for (const auto& [tier_coll, points] : groups) {
    NetFit fit = fit_collective(base, tier_coll.first, tier_coll.second, points, in.fit_min_bytes);
    add_fit(out.system, fit);
    out.fits.push_back(std::move(fit));
  }
  for (const auto& path : in.efficiency_files) {
    for (const auto& [op, table] : config::read_efficiency_test_output(path)) {
      const auto target = base.op.find(op);
      const double tflops = target != base.op.end() ? target->second.tflops : base.op.at("default").tflops;
      for (const auto& [key, eff] : table.efficiencies) {
        const double rescaled = eff * table.tflops / tflops;  // the same time against this system's peak
        out.system.efficiencies[op][key] = rescaled;
        out.raw.push_back({"table", op, key, 0, 0, 0, 0, 0, 0, rescaled, path});
      }
    }
    out.system.provenance.push_back("SimuMax efficiency test: " + path);
  }
  out.system.provenance.insert(out.system.provenance.begin(),
                               "simumax-measure import into " + in.base_system + " (docs/measure.md)");
  return out;
}

void add_fit(report::MeasuredSystem& s, const NetFit& fit) {
  s.net_ops.push_back({fit.tier, model::to_string(fit.coll), fit.efficient_factor, fit.latency_us});
  for (const auto& [ranks, curve] : fit.curve) s.curves[fit.tier][model::to_string(fit.coll)][ranks] = curve;
}

std::string fit_report(const std::vector<NetFit>& fits) {
  std::string out;
  for (const auto& f : fits) {
    size_t sizes = 0;
    for (const auto& [ranks, curve] : f.curve) sizes += curve.size();
    out += fmt::format("networks.{}.op.{}: efficient_factor {:.4f}, latency_us {:.3f} (a line over {} points, worst "
                       "time error {:+.2f} %); measured_collectives: {} sizes, given back exactly\n",
                       f.tier, model::to_string(f.coll), f.efficient_factor, f.latency_us, f.points.size(),
                       100 * f.worst_error(), sizes);
  }
  return out;
}

void write_outputs(const std::string& out_dir, const std::string& base_system, const Measured& m) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec || !std::filesystem::is_directory(out_dir)) {
    throw common::UsageError(out_dir + ": cannot create the output folder: " + ec.message());
  }
  const std::string json = report::measured_system_json(base_system, m.system);
  report::write_file_atomically((std::filesystem::path(out_dir) / "system.json").string(), json);
  report::write_file_atomically((std::filesystem::path(out_dir) / "measurements.csv").string(),
                                measurements_csv(m.raw));
}

}  // namespace simumax::measure
