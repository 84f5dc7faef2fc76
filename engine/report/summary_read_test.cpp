// summary.json's one reader (read_summary) against its writer (summary_json): what it reads back writes the same
// text, and a bad file is refused naming the file, the JSON pointer and what was expected.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const fs::path p = fs::temp_directory_path() / ("simumax_summary_read_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Every field summary_json writes, the optional ones included, with values that are not the defaults.
Summary every_field() {
  Summary s;
  s.name = "every field";
  s.fidelity = "megatron";
  s.calibration = config::Calibration{0.125, std::nullopt};
  s.kernel_floor_us = 3.5;
  s.calibration_source = "shipped";
  s.host = config::HostConfig{12.5, 150, 2};
  s.executor = "sim";
  s.granularity = "layer";
  s.scope = "all ranks";
  s.pipeline_schedule = "zb-h1";
  s.world_size = 64, s.tp = 2, s.cp = 2, s.pp = 4, s.dp = 4, s.ep = 8, s.etp = 1, s.edp = 1;
  s.micro_batch_size = 2, s.micro_batch_num = 16, s.global_batch_size = 128, s.seq_len = 4096;
  s.padded_vocab = 128256;
  s.step_time_ms = 1234.5678901234567;
  s.pp_time_ms = 1000.1;
  s.straggler_ratio = 1.05;
  s.tflops_per_gpu = 401.25;
  s.mfu = 0.4056789;
  s.tokens_per_s = 524288 / (s.step_time_ms * 1e-3);  // what summarize writes: tokens_per_iter over the step
  s.tokens_per_s_per_gpu = 6628.78;
  s.tokens_per_iter = 524288;
  s.flops_per_token = 4.8e10;
  s.peak_alloc_bytes_max = 70000000001;
  s.peak_reserved_bytes_max = 75000000000.5;
  s.gpu_memory_bytes = 80.0 * 1024 * 1024 * 1024;
  s.gpu_memory_gib = 80;
  s.memory_margin_bytes = 2.0 * 1024 * 1024 * 1024;
  s.fits = false;
  s.headroom_bytes = -123456789.25;
  s.nets = {"intra", "intra", "inter", "inter", "intra", "intra", "inter"};
  s.param_count = 8030261248;
  s.dtype = "bf16";
  s.recompute = "full_block 2";
  s.num_tasks = 98765;
  s.efficiency_table_misses = 2;
  s.miss_efficiency = {{"attn", {"b1_s4096"}}, {"mlp", {"m1_n2_k3", "m4_n5_k6"}}};
  s.misses_interpolated = true;
  for (int i = 0; i < 2; ++i) {
    StageSummary st;
    st.stage = i, st.kind = i == 0 ? "first" : "last", st.layers = 16 + i;
    st.fwd_ms = 1.5 + i, st.bwd_ms = 3.25, st.p2p_ms = 0.125, st.chunk_time_ms = 5.1, st.bubble_ms = 0.7;
    st.pipeline_end_ms = 900, st.dp_comm_ms = 12.5, st.optimizer_ms = 4.75, st.duration_ms = 1234.5;
    st.peak_alloc_bytes = 60000000000 + i, st.peak_reserved_bytes = 61000000000.5;
    st.weight_bytes = 1, st.grad_bytes = 2, st.optimizer_state_bytes = 3, st.other_bytes = 4;
    st.workspace_bytes = i == 0 ? 0 : 33554432;  // written only when not 0
    st.activation_bytes_at_peak = 5, st.transient_bytes_at_peak = 6, st.cached_micro_batches = 7;
    st.peak_task = "fwd mb0 layer3";
    st.fits = i == 0;
    st.headroom_bytes = i == 0 ? 5e9 : -1.5e8;
    s.stages.push_back(st);
  }
  return s;
}

TEST(SummaryRead, ReadsBackWhatTheWriterWroteToTheSameText) {
  const fs::path dir = scratch("round_trip");
  // The defaults (optional parts absent), with the figures a run always has (a step, an MFU, its dtype).
  Summary defaults;
  defaults.step_time_ms = 1, defaults.mfu = 0.5, defaults.dtype = "bf16";
  for (Summary s : {every_field(), defaults}) {
    const std::string path = write_summary_json(dir.string(), s);
    const Summary back = read_summary(path);
    EXPECT_EQ(summary_json(back), read(path));
    EXPECT_EQ(back.step_time_ms, s.step_time_ms);
    EXPECT_EQ(back.headroom_bytes, s.headroom_bytes);
    EXPECT_EQ(back.pipeline_schedule, s.pipeline_schedule);
  }
  fs::remove_all(dir);
}

// The checked-in golden reports are files the writer wrote for real scenarios.
TEST(SummaryRead, GoldenSummariesReadBackToTheSameText) {
  size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(SIMUMAX_SOURCE_DIR "/tests/golden")) {
    const std::string name = e.path().filename().string();
    if (name.size() < 13 || name.substr(name.size() - 13) != ".summary.json") continue;
    ++files;
    EXPECT_EQ(summary_json(read_summary(e.path().string())), read(e.path())) << e.path();
  }
  EXPECT_GT(files, 10u);
}

struct BadSummary {
  const char* what;
  std::function<void(nlohmann::ordered_json&)> edit;  // on a good file's JSON; empty: `text` is the file
  const char* text;
  const char* pointer;
  const char* message;
};

TEST(SummaryRead, BadFileIsRefusedNamingTheFileAndField) {
  const fs::path dir = scratch("bad");
  const std::string good = summary_json(every_field());
  const BadSummary cases[] = {
      {"not JSON", nullptr, "{\"step_time_ms\": SECRET", "", "invalid JSON at byte 18"},
      {"not an object", nullptr, "[1, 2]", "", "expected an object"},
      {"a number out of range", nullptr, "{\"step_time_ms\": 1e400}", "", "invalid JSON: a number out of range"},
      {"missing top-level field", [](auto& j) { j.erase("step_time_ms"); }, nullptr, "/step_time_ms",
       "required field is missing (expected a number)"},
      {"text for a number", [](auto& j) { j["mfu"] = "SECRET"; }, nullptr, "/mfu", "expected a number"},
      {"a fraction for an integer", [](auto& j) { j["peak_alloc_bytes_max"] = 1.5; }, nullptr,
       "/peak_alloc_bytes_max", "expected an integer"},
      {"missing verdict", [](auto& j) { j["fit"].erase("fits"); }, nullptr, "/fit/fits",
       "required field is missing (expected a boolean)"},
      {"missing group member", [](auto& j) { j["parallel"].erase("tp"); }, nullptr, "/parallel/tp",
       "required field is missing (expected an integer)"},
      {"stage memory of another type", [](auto& j) { j["stages"][1]["memory"]["peak_task"] = 3; }, nullptr,
       "/stages/1/memory/peak_task", "expected a string"},
      {"a miss key that is not text", [](auto& j) { j["miss_efficiency"]["mlp"][1] = false; }, nullptr,
       "/miss_efficiency/mlp/1", "expected a string"},
      // Issue 32: numbers no run writes, which the report drew as they were.
      {"an MFU above the bf16 peak", [](auto& j) { j["mfu"] = 2.0; }, nullptr, "/mfu",
       "expected a fraction in (0, 1], got 2 for dtype bf16"},
      {"a negative step time", [](auto& j) { j["step_time_ms"] = -5.0; }, nullptr, "/step_time_ms",
       "expected a positive step time, got -5 for dtype bf16"},
      {"a step time edited alone", [](auto& j) { j["step_time_ms"] = 1.0; }, nullptr, "/tokens_per_s",
       "does not match tokens_per_iter / step_time_ms (the file was edited?)"},
      // Issue 34: the schema key says which keys the file holds.
      {"a later schema", [](auto& j) { j["schema"] = "simumax_sim_summary_v2"; }, nullptr, "/schema",
       "\"simumax_sim_summary_v2\": this simumax-sim reads simumax_sim_summary_v1"},
  };
  for (const BadSummary& c : cases) {
    const std::string path = (dir / "summary.json").string();
    std::string text = c.text ? c.text : "";
    if (c.edit) {
      nlohmann::ordered_json j = nlohmann::ordered_json::parse(good);
      c.edit(j);
      text = j.dump(2);
    }
    std::ofstream(path) << text;
    try {
      read_summary(path);
      ADD_FAILURE() << c.what << ": no error";
    } catch (const common::ConfigError& e) {
      EXPECT_EQ(std::string(e.what()), common::ConfigError(path, c.pointer, c.message).what()) << c.what;
      EXPECT_EQ(std::string(e.what()).find("SECRET"), std::string::npos) << c.what;
    }
  }
  try {
    read_summary((dir / "missing.json").string());
    ADD_FAILURE() << "a missing file: no error";
  } catch (const common::ConfigError& e) {
    const common::ConfigError want((dir / "missing.json").string(), "", "cannot open file");
    EXPECT_EQ(std::string(e.what()), want.what());
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace simumax::report
