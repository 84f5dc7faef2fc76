// `run --simumax-outputs` (issue #14): SimuMax's files read back the way SimuMax's own code reads them, on every
// validation scenario. The readers below re-implement, from SimuMax v1.2's source, HumanReadableSize.from_string
// and PerfLLM.get_pp_stage_peak_mem (simumax/core/utils.py, perf_llm.py) and summarize_snapshot /
// summarize_trace (examples/simulator_trace_snapshot.py); each file's keys are checked against SimuMax's and
// every value against our summary.json.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <nlohmann/json.hpp>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;  // keys in file order: SimuMax's order is checked
const fs::path kRoot = SIMUMAX_SOURCE_DIR;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// ---- SimuMax's readers, re-implemented ----

// HumanReadableSize.from_string(s, units, base, target_unit=units[0]).get_value(): "value unit" split on one
// space; an unknown unit is a ValueError (here: a test failure, NaN).
double from_string(const std::string& s, const std::vector<std::string>& units, double base) {
  const size_t space = s.find(' ');
  if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos) {
    ADD_FAILURE() << "not \"value unit\": \"" << s << "\"";
    return NAN;
  }
  const std::string unit = s.substr(space + 1);
  for (size_t i = 0; i < units.size(); ++i) {
    if (units[i] == unit) return std::stod(s.substr(0, space)) * std::pow(base, static_cast<double>(i));
  }
  ADD_FAILURE() << "unknown unit in \"" << s << "\"";
  return NAN;
}
double bytes_of(const Json& j) { return from_string(j.get<std::string>(), {"B", "KB", "MB", "GB", "TB"}, 1024); }
double ms_of(const Json& j) { return from_string(j.get<std::string>(), {"ms", "s"}, 1000); }
double count_of(const Json& j) { return from_string(j.get<std::string>(), {"", "K", "M", "B", "T"}, 1000); }

// PerfLLM.get_pp_stage_peak_mem(mem_result, key): {stage: bytes}; a flat result (pp 1) is "first_stage".
std::map<std::string, double> get_pp_stage_peak_mem(const Json& mem_result, const std::string& key) {
  std::map<std::string, double> out;
  if (mem_result.contains("peak_mem")) {
    out["first_stage"] = bytes_of(mem_result.at(key));
    return out;
  }
  for (auto it = mem_result.begin(); it != mem_result.end(); ++it) {
    if (it.value().is_object() && it.value().contains(key)) out[it.key()] = bytes_of(it.value().at(key));
  }
  return out;
}

struct SnapshotSummary {
  Json schema;
  size_t event_count = 0, alloc_count = 0, free_count = 0;
  Json peak_rank, peak_op, peak_phase;
  double peak_allocated_gib = 0;
};

// summarize_snapshot: Python's max() keeps the first of equal maxima.
SnapshotSummary summarize_snapshot(const Json& snapshot) {
  SnapshotSummary s;
  s.schema = snapshot.value("schema", Json());
  const Json events = snapshot.value("events", Json::array());
  s.event_count = events.size();
  const Json* peak = nullptr;
  for (const auto& e : events) {
    if (peak == nullptr || e.value("allocated_bytes", 0.0) > peak->value("allocated_bytes", 0.0)) peak = &e;
  }
  for (const auto& t : snapshot.value("cache_tokens", Json::array())) {
    s.alloc_count += t.value("action", "") == "alloc";
    s.free_count += t.value("action", "") == "free";
  }
  if (peak != nullptr) {
    s.peak_rank = peak->value("rank", Json());
    s.peak_op = peak->value("op_name", Json());
    s.peak_phase = peak->value("phase", Json());
    s.peak_allocated_gib = peak->value("allocated_bytes", 0.0) / kGiB;
  }
  return s;
}

struct TraceSummary {
  size_t slice_count = 0, compute_slice_count = 0, comm_slice_count = 0, rank_count = 0;
  double duration_ms = 0;
};

// summarize_trace: a bare list (or {"traceEvents": [...]}); slices are ph "X".
TraceSummary summarize_trace(const Json& payload) {
  const Json events = payload.is_object() ? payload.value("traceEvents", Json::array()) : payload;
  TraceSummary s;
  std::set<std::string> ranks;
  double end_us = 0;
  for (const auto& e : events) {
    if (e.value("ph", "") != "X") continue;
    ++s.slice_count;
    ranks.insert(e.at("pid").dump());
    end_us = std::max(end_us, e.value("ts", 0.0) + e.value("dur", 0.0));
    const Json args = e.value("args", Json::object());
    if (e.value("cat", "") == "comm" || args.value("stream_type", "") == "comm") ++s.comm_slice_count;
    if (e.value("cat", "") == "compute") ++s.compute_slice_count;
  }
  s.rank_count = ranks.size();
  s.duration_ms = end_us / 1000.0;
  return s;
}

// ---- the checks ----

std::vector<std::string> keys(const Json& j) {
  std::vector<std::string> out;
  for (auto it = j.begin(); it != j.end(); ++it) out.push_back(it.key());
  return out;
}

using Keys = std::vector<std::string>;
const Keys kMemKeys = {"micro_batch_num", "micro_batch_size", "cached_micro_batch_num", "parallel_config",
                       "model_mem", "model_mem_detail", "fwd_activation_cache_per_micro_batch",
                       "peak_activation_mem_in_1F1B", "peak_mem", "peak_mem_with_reserved", "memory_reserved_ratio",
                       "peak_path"};
const Keys kComputeKeysPp1 = {"comm_details", "compute_details", "breakdown_result", "all_tokens_per_iter",
                              "straggle_ratio", "all_chunk_times", "duration_time_per_iter",
                              "throughput_per_accelerator", "throughput per GPU (TFLOP/s/GPU)",
                              "throughput per GPU per token (TFLOP/s/GPU/token)", "mfu_6nd_with_attn", "mfu",
                              "moe_param_numel", "flops_info", "param_numel_info"};
const Keys kSnapshotEventKeys = {"rank",         "ts_us",   "allocated_bytes", "static_bytes", "cached_bytes",
                                 "temp_bytes",   "cached_token_count", "phase",  "op_name",      "kind",
                                 "scope",        "microbatch", "chunk"};
const Keys kTokenKeys = {"action",    "token_id",  "rank",        "token_key",   "token_scope",
                         "op_name",   "microbatch", "chunk",      "alloc_phase", "alloc_ts_us",
                         "free_phase", "free_ts_us", "size_bytes"};

// A "%.4f UNIT" string read back is within half a unit of its 4th decimal.
void expect_rounded(double parsed, double exact, const std::string& what) {
  double unit = 1;
  while (unit * 1024 <= std::abs(exact) && unit < std::pow(1024.0, 4)) unit *= 1024;
  EXPECT_NEAR(parsed, exact, 0.51e-4 * unit + 1e-9) << what;
}

void check_mem_stage(const Json& m, const Json& stage, const Json& summary, const std::string& where) {
  EXPECT_EQ(keys(m), kMemKeys) << where;
  const Json& mem = stage.at("memory");
  EXPECT_EQ(m.at("micro_batch_num"), summary.at("batch").at("micro_batch_num")) << where;
  EXPECT_EQ(m.at("micro_batch_size"), summary.at("batch").at("micro_batch_size")) << where;
  EXPECT_EQ(m.at("cached_micro_batch_num"), mem.at("cached_micro_batch_num")) << where;
  EXPECT_EQ(keys(m.at("parallel_config")), (Keys{"parallelism", "fp8", "recompute_status"})) << where;
  EXPECT_NE(m.at("parallel_config").at("parallelism").get<std::string>().find(
                " tp" + summary.at("parallel").at("tp").dump() + "."),
            std::string::npos)
      << where;
  EXPECT_EQ(keys(m.at("parallel_config").at("recompute_status")),
            (Keys{"layer_num", "actual_layer_num", "recompute_layer", "recompute_recompute_granularity"}));
  const double model_mem = mem.at("weight_bytes").get<double>() + mem.at("grad_bytes").get<double>() +
                           mem.at("optimizer_state_bytes").get<double>() + mem.at("te_dummy_wgrad_bytes").get<double>();
  expect_rounded(bytes_of(m.at("model_mem")), model_mem, where + " model_mem");
  const Json& detail = m.at("model_mem_detail");
  EXPECT_EQ(keys(detail), (Keys{"dense", "moe", "te_dummy_wgrad"})) << where;
  double parts = 0;
  for (const char* fam : {"dense", "moe"}) {
    EXPECT_EQ(keys(detail.at(fam).at("detail")), (Keys{"weight_bytes", "grad_bytes", "state_bytes"})) << where;
    parts += bytes_of(detail.at(fam).at("all_mem"));
  }
  parts += bytes_of(detail.at("te_dummy_wgrad").at("all_mem"));
  EXPECT_NEAR(parts, model_mem, 1e-3 * model_mem) << where;
  EXPECT_TRUE(std::regex_match(m.at("fwd_activation_cache_per_micro_batch").get<std::string>(),
                               std::regex("[0-9]+\\.[0-9]{4} GB")))
      << where;
  expect_rounded(bytes_of(m.at("peak_mem")), mem.at("peak_alloc_bytes").get<double>(), where + " peak_mem");
  expect_rounded(bytes_of(m.at("peak_mem_with_reserved")), mem.at("peak_reserved_bytes").get<double>(),
                 where + " peak_mem_with_reserved");
  // SimuMax's identity: peak = model_mem + cached micro-batches x cache + the activation peak.
  const double cache = std::stod(m.at("fwd_activation_cache_per_micro_batch").get<std::string>()) * kGiB;
  const double rebuilt = bytes_of(m.at("model_mem")) + m.at("cached_micro_batch_num").get<double>() * cache +
                         bytes_of(m.at("peak_activation_mem_in_1F1B"));
  EXPECT_NEAR(rebuilt, mem.at("peak_alloc_bytes").get<double>(), 1e-3 * mem.at("peak_alloc_bytes").get<double>())
      << where;
  EXPECT_GT(std::stod(m.at("memory_reserved_ratio").get<std::string>()), 0) << where;
  EXPECT_EQ(m.at("peak_path").get<std::string>().rfind(mem.at("peak_task").get<std::string>(), 0), 0u) << where;
}

void check_compute(const Json& c, const Json& summary, int64_t pp, const std::string& where) {
  Keys want = kComputeKeysPp1;
  if (pp > 1) want.insert(want.begin() + 3, "breakdown_result_last_stage");
  EXPECT_EQ(keys(c), want) << where;
  expect_rounded(ms_of(c.at("duration_time_per_iter")) / 1000, summary.at("step_time_ms").get<double>() / 1000,
                 where + " duration_time_per_iter");
  EXPECT_DOUBLE_EQ(c.at("throughput_per_accelerator").get<double>(), summary.at("tokens_per_s_per_gpu").get<double>());
  EXPECT_DOUBLE_EQ(c.at("throughput per GPU (TFLOP/s/GPU)").get<double>(), summary.at("tflops_per_gpu").get<double>());
  EXPECT_DOUBLE_EQ(c.at("mfu").get<double>(), summary.at("mfu").get<double>());
  EXPECT_EQ(c.at("mfu_6nd_with_attn"), c.at("mfu"));
  EXPECT_EQ(c.at("all_tokens_per_iter"), summary.at("tokens_per_iter"));
  EXPECT_DOUBLE_EQ(c.at("straggle_ratio").get<double>(), summary.at("straggler_ratio").get<double>());
  const Json& chunks = c.at("all_chunk_times");
  Keys chunk_keys = {"first_stage_chunk"};
  if (pp > 2) chunk_keys.push_back("middle_stage_chunk");
  if (pp > 1) chunk_keys.push_back("last_stage_chunk");
  EXPECT_EQ(keys(chunks), chunk_keys) << where;
  const Json& first = chunks.at("first_stage_chunk");
  expect_rounded(ms_of(first.at("duration_time(chunk_timexmbc+dp_optim+bubble)")) / 1000,
                 summary.at("stages").at(0).at("duration_ms").get<double>() / 1000, where + " first duration");
  EXPECT_EQ(keys(c.at("breakdown_result")),
            (Keys{"fwd_compute_time", "recompute_time", "bwd_compute_time", "optim_time", "intra_exposed_time",
                  "inter_exposed_time", "dp_exposed_time"}));
  for (auto it = c.at("breakdown_result").begin(); it != c.at("breakdown_result").end(); ++it) {
    EXPECT_GE(ms_of(it.value()), 0) << where << " " << it.key();
  }
  const Json& cd = c.at("compute_details");
  EXPECT_GT(count_of(cd.at("fwd_flops")), 0) << where;
  EXPECT_GT(count_of(cd.at("bwd_flops")), count_of(cd.at("fwd_flops"))) << where;
  EXPECT_EQ(keys(cd.at("batch_compute_stat")), (Keys{"compute_info", "cost_info"}));
  EXPECT_NEAR(count_of(c.at("flops_info").at("theory_flops")),
              std::floor(summary.at("flops_per_token").get<double>() * summary.at("tokens_per_iter").get<double>() /
                         summary.at("parallel").at("world_size").get<double>()),
              1e-4 * count_of(c.at("flops_info").at("theory_flops")));
  const Json& p = c.at("param_numel_info");
  EXPECT_EQ(keys(p), (Keys{"dense", "moe", "all", "activations", "activations_ratio"}));
  EXPECT_TRUE(std::regex_match(p.at("all").get<std::string>(), std::regex("[0-9]+\\.[0-9]{2}B"))) << where;
  EXPECT_EQ(keys(c.at("comm_details")), (Keys{"dp_comm_time", "intra_comm_time", "inter_comm_time"}));
}

// Job rank -> pipeline stage (dense order tp-cp-dp-pp).
int64_t stage_of(int64_t job, const Json& summary) {
  const Json& par = summary.at("parallel");
  return job / (par.at("tp").get<int64_t>() * par.at("cp").get<int64_t>() * par.at("dp").get<int64_t>());
}

void check_memory_files(const Json& result, const Json& snapshot, const Json& summary, const std::string& where) {
  EXPECT_EQ(keys(result), (Keys{"static_allocated_bytes_by_rank", "peak_allocated_bytes_by_rank"}));
  const Json& peaks = result.at("peak_allocated_bytes_by_rank");
  ASSERT_EQ(peaks.size(), summary.at("stages").size()) << where;  // --trace-ranks stages: one rank per stage
  for (auto it = peaks.begin(); it != peaks.end(); ++it) {
    const int64_t job = std::stoll(it.key().substr(4));
    const Json& mem = summary.at("stages").at(stage_of(job, summary)).at("memory");
    EXPECT_EQ(it.value().get<int64_t>(), mem.at("peak_alloc_bytes").get<int64_t>()) << where << " " << it.key();
    const int64_t stat = result.at("static_allocated_bytes_by_rank").at(it.key()).get<int64_t>();
    EXPECT_EQ(stat, mem.at("weight_bytes").get<int64_t>() + mem.at("grad_bytes").get<int64_t>() +
                        static_cast<int64_t>(mem.at("optimizer_state_bytes").get<double>()) +
                        mem.at("te_dummy_wgrad_bytes").get<int64_t>())
        << where << " " << it.key();
  }
  const SnapshotSummary s = summarize_snapshot(snapshot);
  EXPECT_EQ(s.schema, "simumax_memory_snapshot_v1");
  EXPECT_GT(s.event_count, 10u) << where;
  EXPECT_GT(s.alloc_count, 0u) << where;
  EXPECT_LE(s.free_count, s.alloc_count) << where;
  EXPECT_NEAR(s.peak_allocated_gib * kGiB, summary.at("peak_alloc_bytes_max").get<double>(), 0.5) << where;
  EXPECT_TRUE(s.peak_phase == "fwd" || s.peak_phase == "bwd" || s.peak_phase == "recompute_fwd") << where;
  EXPECT_TRUE(peaks.contains(s.peak_rank.get<std::string>())) << where;
  EXPECT_TRUE(s.peak_op.is_string()) << where;
  for (const auto& e : snapshot.at("events")) ASSERT_EQ(keys(e), kSnapshotEventKeys) << where;
  std::map<int64_t, int64_t> alloc_size;
  for (const auto& t : snapshot.at("cache_tokens")) {
    ASSERT_EQ(keys(t), kTokenKeys) << where;
    if (t.at("action") == "alloc") alloc_size[t.at("token_id").get<int64_t>()] = t.at("size_bytes").get<int64_t>();
    if (t.at("action") == "free") {
      ASSERT_TRUE(alloc_size.count(t.at("token_id").get<int64_t>())) << where << ": a free before its alloc";
      EXPECT_EQ(alloc_size[t.at("token_id").get<int64_t>()], t.at("size_bytes").get<int64_t>());
      EXPECT_GE(t.at("free_ts_us").get<double>(), t.at("alloc_ts_us").get<double>());
    }
  }
}

void check_trace(const Json& trace, const Json& summary, const std::string& where) {
  ASSERT_TRUE(trace.is_array()) << where << ": SimuMax writes a bare list";
  const TraceSummary t = summarize_trace(trace);
  EXPECT_EQ(t.rank_count, summary.at("stages").size()) << where;
  EXPECT_NEAR(t.duration_ms, summary.at("step_time_ms").get<double>(), 1e-6 * summary.at("step_time_ms").get<double>())
      << where;
  EXPECT_GT(t.compute_slice_count, 0u) << where;
  EXPECT_EQ(t.slice_count, t.compute_slice_count + t.comm_slice_count) << where;
  for (const auto& e : trace) {
    if (e.value("ph", "") != "X") continue;
    const std::string st = e.at("args").at("stream_type").get<std::string>();
    ASSERT_TRUE(st == "compute" || st == "comm") << where << ": stream_type " << st;
    EXPECT_EQ(e.at("cat"), st) << where;
  }
}

// net_info.json: SimuMax's record layout (its figures, call for call, are python/tests/test_simumax_examples.py's,
// against SimuMax's own files); here that each record is whole and its time holds its bandwidth term.
void check_net_info(const Json& info, int64_t pp, const std::string& where) {
  const Keys record = {"net", "base_bw", "real_bw", "eff_factor", "comm_num", "comm_size", "total_time", "latency",
                       "FC8"};
  ASSERT_TRUE(info.is_object()) << where;
  EXPECT_EQ(info.contains("p2p"), pp > 1) << where;
  for (const auto& [op, stages] : info.items()) {
    if (op.size() > 3 && op.compare(op.size() - 3, 3, "_dp") == 0) {  // SimuMax's PCIe DP rule
      EXPECT_EQ(keys(stages), (Keys{"net", "bw", "comm_num", "latency"})) << where << " " << op;
      continue;
    }
    for (const auto& [stage, r] : stages.items()) {
      ASSERT_EQ(keys(r), record) << where << " " << op << " " << stage;
      EXPECT_GT(r.at("comm_num").get<int64_t>(), 1) << where << " " << op << " " << stage;
      const double wire_us = r.at("comm_size").get<double>() / (r.at("real_bw").get<double>() * 1073741824.0) * 1e6;
      EXPECT_GE(r.at("total_time").get<double>(), wire_us * (1 - 1e-12)) << where << " " << op << " " << stage;
    }
  }
}

Json read_json(const fs::path& p) { return Json::parse(read_file(p.string())); }

class SimumaxOutputs : public ::testing::TestWithParam<std::string> {};

TEST_P(SimumaxOutputs, ReadBackBySimumaxsReadersFieldForField) {
  const fs::path out = fs::temp_directory_path() / ("simumax-compat-" + std::to_string(getpid()));
  fs::remove_all(out);
  const auto r = run_cli({"run", (kRoot / "scenarios" / GetParam()).string(), "-q", "--simumax-outputs", "-o",
                          out.string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json summary = read_json(out / "summary.json");
  const int64_t pp = summary.at("parallel").at("pp").get<int64_t>();
  const Json mem = read_json(out / "mem_result.json");
  if (pp == 1) {
    check_mem_stage(mem, summary.at("stages").at(0), summary, GetParam());
  } else {
    Keys want = {"first_stage"};
    if (pp > 2) want.push_back("middle_stage");
    want.push_back("last_stage");
    ASSERT_EQ(keys(mem), want);
    check_mem_stage(mem.at("first_stage"), summary.at("stages").at(0), summary, GetParam() + " first");
    check_mem_stage(mem.at("last_stage"), summary.at("stages").at(pp - 1), summary, GetParam() + " last");
  }
  // What SimuMax's search reads: the per-stage peaks, in bytes.
  const auto peaks = get_pp_stage_peak_mem(mem, "peak_mem_with_reserved");
  double worst = 0;
  for (const auto& [stage, bytes] : peaks) worst = std::max(worst, bytes);
  expect_rounded(worst, summary.at("peak_reserved_bytes_max").get<double>(), GetParam() + " worst reserved");
  check_compute(read_json(out / "compute_result.json"), summary, pp, GetParam());
  const Json base = read_json(out / "base_info.json");
  EXPECT_EQ(keys(base), (Keys{"arch", "all_param", "act_param"}));
  EXPECT_GT(base.at("all_param").get<int64_t>(), 0);
  EXPECT_LE(base.at("act_param").get<int64_t>(), base.at("all_param").get<int64_t>());
  check_memory_files(read_json(out / "simu_memory_result.json"), read_json(out / "simu_memory_snapshot.json"), summary,
                     GetParam());
  check_trace(read_json(out / "tracing_logs.json"), summary, GetParam());
  check_net_info(read_json(out / "net_info.json"), pp, GetParam());
  fs::remove_all(out);
}

INSTANTIATE_TEST_SUITE_P(Validation, SimumaxOutputs, ::testing::ValuesIn(validation_scenarios(SIMUMAX_SOURCE_DIR)),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// The files a SimuMax user's script opens are the ones SimuMax writes, and nothing else is claimed.
TEST(SimumaxOutputs, WrittenOnlyWhenAskedAndRemovedWithTheRunsFiles) {
  const fs::path out = fs::temp_directory_path() / ("simumax-compat-ask-" + std::to_string(getpid()));
  fs::remove_all(out);
  const std::string scenario = (kRoot / "scenarios" / "default.json").string();
  ASSERT_EQ(run_cli({"run", scenario, "-q", "-o", out.string()}).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "mem_result.json"));
  ASSERT_EQ(run_cli({"run", scenario, "-q", "--simumax-outputs", "-o", out.string()}).exit_code, 0);
  for (const char* f : {"compute_result.json", "mem_result.json", "base_info.json", "net_info.json",
                        "simu_memory_result.json", "simu_memory_snapshot.json", "tracing_logs.json"}) {
    EXPECT_TRUE(fs::exists(out / f)) << f;
  }
  ASSERT_EQ(run_cli({"run", scenario, "-q", "-o", out.string()}).exit_code, 0);
  EXPECT_FALSE(fs::exists(out / "mem_result.json")) << "a later run removes an earlier run's files";
  fs::remove_all(out);
}

}  // namespace
}  // namespace simumax::tests
