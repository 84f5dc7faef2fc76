// Bad input through the CLI: exit code 2 and one clear line naming the file and the field (house style).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "tests/cli_runner.hpp"

namespace simumax::tests {
namespace {

struct ErrorCase {
  const char* name;
  std::vector<std::string> args;  // relative to the source tree (the test runs there)
  std::string first_line;         // the exact first line of stderr
};

// `run` with a strategy file from tests/data/config_errors/ (and a model and system that are fine).
std::vector<std::string> overlap_case(const std::string& strategy) {
  return {"run", "--model", "models/llama3-8b.json", "--strategy", "tests/data/config_errors/" + strategy, "--system",
          "platforms/b200_bf16.json"};
}

// `run` with a strategy file from tests/data/config_errors/ on DeepSeek-V2 (a MoE model).
std::vector<std::string> moe_case(const std::string& strategy) {
  return {"run", "--model", "models/deepseekv2.json", "--strategy", "tests/data/config_errors/" + strategy, "--system",
          "platforms/b200_bf16.json"};
}

// `run` with a model file (and a strategy and system that are fine).
std::vector<std::string> model_case(const std::string& model) {
  return {"run", "--model", model, "--strategy", "tests/data/search/llama3_8b_tp1_pp2_dp4_no_recompute.json", "--system",
          "platforms/b200_bf16.json"};
}

const std::vector<ErrorCase>& cases() {
  static const std::vector<ErrorCase> c = {
      {"MicroBatchNumZero", {"run", "tests/data/cli/mbc0.json"},
       "error: tests/data/cli/mbc0.json: /strategy/micro_batch_num: must be at least 1 (SimuMax accepts 0 and reports "
       "a step that trains nothing)"},
      {"BrokenPlatformXml",
       {"run", "scenarios/default.json", "--executor", "sim", "--platform", "tests/data/cli/broken_bandwidth.xml"},
       "error: tests/data/cli/broken_bandwidth.xml: line 46: <link id=\"intra.node0.gpu0\">: bandwidth: unknown unit "
       "\"furlongs\" in \"900furlongs\" (SimGrid units: Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, or the "
       "same with bps for bits; no space between number and unit)"},
      {"TensorParallelDoesNotDivideKvHeads",
       {"run", "--model", "models/llama3-8b.json", "--strategy", "tests/data/config_errors/tp16_kv8.json", "--system",
        "platforms/b200_bf16.json"},
       "error: tests/data/config_errors/tp16_kv8.json: /tp_size: 16 does not divide kv_head_num 8 "
       "(models/llama3-8b.json); use a tp_size that divides both head_num 32 and kv_head_num 8: 1, 2, 4, 8"},
      {"TypoInStrategyKey",
       {"run", "--model", "models/llama3-8b.json", "--strategy", "tests/data/config_errors/tp_sise.json", "--system",
        "platforms/b200_bf16.json"},
       "error: tests/data/config_errors/tp_sise.json: /tp_sise: unknown field; did you mean 'tp_size'?"},
      // Megatron's overlap options (docs/overlap.md): switches are JSON booleans, sm_contention a number >= 0.
      {"OverlapSwitchGivenAsString", overlap_case("overlap_grad_reduce_string.json"),
       "error: tests/data/config_errors/overlap_grad_reduce_string.json: /megatron_overlap_grad_reduce: expected true "
       "or false, got \"yes\""},
      // Pipeline schedules (docs/schedules.md): a known name, and one the layout can run.
      {"UnknownPipelineSchedule", overlap_case("pipeline_schedule_unknown.json"),
       "error: tests/data/config_errors/pipeline_schedule_unknown.json: /pipeline_schedule: expected one of "
       "\"1f1b\", \"zb-h1\", \"zb-v\", \"dualpipe\", \"dualpipev\", \"combined-1f1b\", got \"zb-h2\"; did you mean "
       "'zb-h1'?"},
      // Megatron's combined 1F1B (--overlap-moe-expert-parallel-comm): Megatron's own asserts.
      {"CombinedOneFOneBWithPipeline", overlap_case("combined_1f1b_pp2.json"),
       "error: tests/data/config_errors/combined_1f1b_pp2.json: /pipeline_schedule: \"combined-1f1b\" cannot run "
       "this layout: pp_size is 2 without a virtual pipeline; Megatron runs it with pp_size 1 or with "
       "interleaving_size > 1; the legal choices for this layout are \"1f1b\", \"zb-h1\", \"zb-v\", \"dualpipe\", "
       "\"dualpipev\""},
      // With a virtual pipeline pp_size 2 is legal (interleaved combined 1F1B); no EP is still refused.
      {"CombinedOneFOneBWithVirtualPipelineWithoutExpertParallelism", moe_case("combined_1f1b_vpp_no_ep.json"),
       "error: tests/data/config_errors/combined_1f1b_vpp_no_ep.json: /pipeline_schedule: \"combined-1f1b\" cannot "
       "run this layout: ep_size is 1 and expert_num 160: it hides expert-parallel all-to-alls, and Megatron asserts "
       "expert_model_parallel_size > 1; the legal choices for this layout are \"1f1b\""},
      {"CombinedOneFOneBWithoutExpertParallelism", overlap_case("combined_1f1b_no_ep.json"),
       "error: tests/data/config_errors/combined_1f1b_no_ep.json: /pipeline_schedule: \"combined-1f1b\" cannot run "
       "this layout: ep_size is 1 and expert_num 1: it hides expert-parallel all-to-alls, and Megatron asserts "
       "expert_model_parallel_size > 1; the legal choices for this layout are \"1f1b\", \"zb-h1\", \"dualpipev\""},
      {"CombinedOneFOneBWithFullRecompute", moe_case("combined_1f1b_full_recompute.json"),
       "error: tests/data/config_errors/combined_1f1b_full_recompute.json: /pipeline_schedule: \"combined-1f1b\" "
       "cannot run this layout: recompute_granularity is \"full_block\", and Megatron asserts no full recompute "
       "with it; the legal choices for this layout are \"1f1b\", \"zb-h1\", \"dualpipev\""},
      {"CombinedOneFOneBWithSharedExpertOverlap", moe_case("combined_1f1b_shared_expert_overlap.json"),
       "error: tests/data/config_errors/combined_1f1b_shared_expert_overlap.json: /pipeline_schedule: "
       "\"combined-1f1b\" cannot run this layout: megatron_moe_shared_expert_overlap is on, and Megatron asserts it "
       "off with it; the legal choices for this layout are \"1f1b\", \"zb-h1\", \"dualpipev\""},
      {"DualPipeWithOddPipeline", overlap_case("dualpipe_odd_pp.json"),
       "error: tests/data/config_errors/dualpipe_odd_pp.json: /pipeline_schedule: \"dualpipe\" cannot run this "
       "layout: pp_size 3 is odd; DualPipe holds stages r and pp_size - 1 - r on rank r and feeds half the "
       "micro-batches from each end, so it needs an even pp_size, an even micro_batch_num of at least 2 * pp_size "
       "and interleaving_size 1; the legal choices for this layout are \"1f1b\", \"zb-h1\""},
      {"DualPipeWithTooFewMicroBatches", overlap_case("dualpipe_few_micro_batches.json"),
       "error: tests/data/config_errors/dualpipe_few_micro_batches.json: /pipeline_schedule: \"dualpipe\" cannot run "
       "this layout: micro_batch_num 6 is not an even number of at least 2 * pp_size = 8; DualPipe holds stages r "
       "and pp_size - 1 - r on rank r and feeds half the micro-batches from each end, so it needs an even pp_size, an "
       "even micro_batch_num of at least 2 * pp_size and interleaving_size 1; the legal choices for this layout are "
       "\"1f1b\", \"zb-h1\", \"zb-v\""},
      {"DualPipeWithVirtualPipeline", overlap_case("dualpipe_with_vpp.json"),
       "error: tests/data/config_errors/dualpipe_with_vpp.json: /pipeline_schedule: \"dualpipe\" cannot run this "
       "layout: interleaving_size is 2; DualPipe holds stages r and pp_size - 1 - r on rank r and feeds half the "
       "micro-batches from each end, so it needs an even pp_size, an even micro_batch_num of at least 2 * pp_size "
       "and interleaving_size 1; the legal choices for this layout are \"1f1b\""},
      {"DualPipeWithOverlappedDataParallel", overlap_case("dualpipe_with_overlapped_dp.json"),
       "error: tests/data/config_errors/dualpipe_with_overlapped_dp.json: /pipeline_schedule: \"dualpipe\" cannot "
       "run this layout: megatron_overlap_grad_reduce or megatron_overlap_param_gather is on, which is not modelled "
       "with it; DualPipe holds stages r and pp_size - 1 - r on rank r and feeds half the micro-batches from each "
       "end, so it needs an even pp_size, an even micro_batch_num of at least 2 * pp_size and interleaving_size 1; "
       "the legal choices for this layout are \"1f1b\", \"zb-h1\""},
      {"ZeroBubbleWithVirtualPipeline", overlap_case("zb_h1_with_vpp.json"),
       "error: tests/data/config_errors/zb_h1_with_vpp.json: /pipeline_schedule: \"zb-h1\" with interleaving_size 2 is "
       "not modelled: ZB-H1 runs one model chunk per pipeline rank; with interleaving_size 2 the legal choice is "
       "\"1f1b\" (interleaved 1F1B), or set interleaving_size 1 to use \"zb-h1\""},
      // The V schedules (docs/schedules.md): rank r holds stages r and 2 * pp_size - 1 - r of 2 * pp_size.
      {"ZeroBubbleVWithVirtualPipeline", overlap_case("zb_v_with_vpp.json"),
       "error: tests/data/config_errors/zb_v_with_vpp.json: /pipeline_schedule: \"zb-v\" cannot run this layout: "
       "interleaving_size is 2; ZB-V cuts the model into 2 * pp_size stages and gives rank r stages r and 2 * pp_size "
       "- 1 - r as its two chunks, so it needs a pp_size of at least 2, interleaving_size 1 and a layer_num that 2 * "
       "pp_size divides; the legal choices for this layout are \"1f1b\""},
      {"ZeroBubbleVWithLayersThatDoNotSplit", overlap_case("zb_v_layers.json"),
       "error: tests/data/config_errors/zb_v_layers.json: /pipeline_schedule: \"zb-v\" cannot run this layout: "
       "layer_num 32 does not split into 2 * pp_size = 6 stages; ZB-V cuts the model into 2 * pp_size stages and "
       "gives rank r stages r and 2 * pp_size - 1 - r as its two chunks, so it needs a pp_size of at least 2, "
       "interleaving_size 1 and a layer_num that 2 * pp_size divides; the legal choices for this layout are "
       "\"1f1b\", \"zb-h1\""},
      {"DualPipeVWithTooFewMicroBatches", overlap_case("dualpipev_few_micro_batches.json"),
       "error: tests/data/config_errors/dualpipev_few_micro_batches.json: /pipeline_schedule: \"dualpipev\" cannot "
       "run this layout: micro_batch_num 6 is smaller than 2 * pp_size = 8; DualPipeV cuts the model into 2 * "
       "pp_size stages, gives rank r stages r and 2 * pp_size - 1 - r and feeds every micro-batch in at rank 0, so "
       "it needs a micro_batch_num of at least 2 * pp_size, interleaving_size 1 and a layer_num that 2 * pp_size "
       "divides; the legal choices for this layout are \"1f1b\", \"zb-h1\", \"zb-v\""},
      {"DualPipeVWithVirtualPipeline", overlap_case("dualpipev_with_vpp.json"),
       "error: tests/data/config_errors/dualpipev_with_vpp.json: /pipeline_schedule: \"dualpipev\" cannot run this "
       "layout: interleaving_size is 2; DualPipeV cuts the model into 2 * pp_size stages, gives rank r stages r and "
       "2 * pp_size - 1 - r and feeds every micro-batch in at rank 0, so it needs a micro_batch_num of at least 2 * "
       "pp_size, interleaving_size 1 and a layer_num that 2 * pp_size divides; the legal choices for this layout are "
       "\"1f1b\""},
      {"SharedExpertOverlapGivenAsNumber", overlap_case("shared_expert_overlap_number.json"),
       "error: tests/data/config_errors/shared_expert_overlap_number.json: /megatron_moe_shared_expert_overlap: "
       "expected true or false, got 1"},
      {"SmContentionNegative", overlap_case("sm_contention_negative.json"),
       "error: tests/data/config_errors/sm_contention_negative.json: /sm_contention: expected a non-negative number, "
       "got -0.2"},
      {"SmContentionGivenAsString", overlap_case("sm_contention_string.json"),
       "error: tests/data/config_errors/sm_contention_string.json: /sm_contention: expected a non-negative number, "
       "got \"10%\""},
      {"NumberBeyondADouble", overlap_case("number_overflow.json"),
       "error: tests/data/config_errors/number_overflow.json: invalid JSON: number overflow parsing '1e400' (beyond "
       "the range of a double)"},
      {"MissingScenarioFile", {"run", "nothere.json"}, "error: nothere.json: cannot open file: No such file or directory"},
      {"IncompleteConfigTriple", {"run", "--model", "models/llama3-8b.json"},
       "error: give a scenario file, or all three of --model, --strategy and --system"},
      {"PlatformWithoutSim", {"run", "scenarios/default.json", "--platform", "x.xml"},
       "error: --platform needs --executor sim"},
      // Issue #12: no wrong answer with exit 0, no file outside the output folder.
      {"IntegerBeyond2To31", model_case("tests/data/config_errors/layer_num_2e33.json"),
       "error: tests/data/config_errors/layer_num_2e33.json: /layer_num: expected a positive integer of magnitude at "
       "most 2147483647 (2^31 - 1), got 8589934604"},
      {"ScenarioNameLeavesTheOutputFolder", {"run", "tests/data/cli/name_escape.json"},
       "error: tests/data/cli/name_escape.json: /name: must be one path component (it names the output folder "
       "out/<name>): no '/', '\\', control characters, and not \".\" or \"..\""},
      {"KeyGivenTwice", model_case("tests/data/config_errors/duplicate_layer_num.json"),
       "error: tests/data/config_errors/duplicate_layer_num.json: /layer_num: the key appears twice in one object "
       "(line 8, column 3 and line 9, column 3); keep one"},
      // A file that is not JSON: where and what was expected, never what it holds (it may be a secret).
      {"NotJsonNeverEchoed", model_case("tests/data/config_errors/not_json.env"),
       "error: tests/data/config_errors/not_json.env: invalid JSON at line 1, column 1: syntax error while parsing "
       "value - invalid literal"},
      {"BenchOnAnEmptyGrid", {"bench", "--only", "grid", "--grid", "/dev/null"},
       "error: --grid /dev/null: no grid line in the file"},
      {"ConfigIsADevice", model_case("/dev/zero"),
       "error: /dev/zero: is not a regular file (a config must be a JSON file)"},
      // A billion layers: more than a task record holds (it was bad_alloc after 13 s).
      {"ABillionLayers", model_case("tests/data/config_errors/layer_num_1e9.json"),
       "error: tests/data/config_errors/layer_num_1e9.json: /layer_num: expected at most 32767 layers, got 1000000000"},
      // 30,000 layers x 30,000 micro-batches: refused from the estimate before any graph is built.
      {"StepTooLargeForTheMachine",
       {"run", "--model", "tests/data/config_errors/layer_num_30000.json", "--strategy",
        "tests/data/config_errors/micro_batch_num_30000.json", "--system", "platforms/b200_bf16.json"},
       "error: this step would lower to about 1.8e+09 tasks (~86 GB of memory), over --max-tasks 4e+08: use a "
       "coarser --granularity, --ranks stages, fewer micro-batches or layers, or raise --max-tasks"},
      {"SearchSpaceOverItsLimit", {"search", "--model", "models/llama3-70b.json", "--system", "platforms/b200_bf16.json",
                                   "--world-size", "64", "--global-batch-size", "512", "--seq-len", "4096",
                                   "--threads", "2", "--max-candidates", "100", "-q", "-o", "out/space_limit"},
       "error: the search space has 2256 candidates (about 0 s on 2 threads), over --max-candidates 100: narrow the "
       "lists (--tp, --pp, --vpp, --recompute, ...) or raise --max-candidates"},
      {"OutputFolderIsAFile", {"run", "scenarios/default.json", "-q", "-o", "README.md"},
       "error: -o README.md: a file of that name exists; give a folder"},
      {"ValidateFindsNoCase", {"validate", "docs"}, "error: no validation case (*.json) found in the paths given"},
      {"PlatformToAFullDevice", {"platform", "platforms/b200_bf16.json", "-o", "/dev/full"},
       "error: cannot write /dev/full: No space left on device"},
      {"UnknownCommand", {"frobnicate"}, "error: unknown command 'frobnicate'; commands: run, validate, calibrate, search, compare, platform, bench, report, serve, sweep, completion, man"},
      {"ZeroNodes", {"platform", "platforms/b200_bf16.json", "--nodes", "0"},
       "error: --nodes: Value 0 not in range 1 to 1048576"},
      // Issue 32: a config nested deeper than any is refused before it is copied (200,000 levels crashed); a
      // number option is finite (nan disabled --max-tasks); a platform of 2^30 GPUs is refused before it is
      // built (bad_alloc, exit 3); a platform error says where, never what the file holds.
      {"NestedDeeperThanAnyConfig", model_case("tests/data/config_errors/nested_150.json"),
       "error: tests/data/config_errors/nested_150.json: nested deeper than 100 levels (line 2, column 112): no input "
       "of simumax-sim nests so deep"},
      {"MaxTasksNaN", {"run", "scenarios/default.json", "--max-tasks", "nan", "-q", "-o", "out/nan_tasks"},
       "error: --max-tasks: expected a finite number, got nan"},
      {"MemoryMarginInfinite", {"run", "scenarios/default.json", "--memory-margin-gib", "inf", "-q", "-o", "out/inf"},
       "error: --memory-margin-gib: expected a finite number, got inf"},
      {"SearchMarginNaN", {"search", "--model", "models/llama3-8b.json", "--system", "platforms/b200_bf16.json",
                           "--world-size", "8", "--global-batch-size", "32", "--seq-len", "4096",
                           "--memory-margin-gib", "nan", "-q", "-o", "out/nan_search"},
       "error: --memory-margin-gib: expected a finite number, got nan"},
      {"OversubscriptionNaN",
       {"platform", "platforms/b200_bf16.json", "--topology", "fat-tree", "--oversubscription", "nan"},
       "error: --oversubscription: expected a finite number, got nan"},
      {"PlatformOfABillionGpus", {"platform", "platforms/b200_bf16.json", "--nodes", "1048576", "--gpus-per-node", "1024"},
       "error: --nodes 1048576 x 1024 GPUs per node is 1073741824 GPUs, more than a platform holds (16777216, 2^24)"},
      {"PlatformIsNotXmlNeverEchoed",
       {"run", "scenarios/default.json", "--executor", "sim", "--platform", "/etc/passwd", "-q", "-o", "out/passwd"},
       "error: /etc/passwd: line 1: unexpected text at column 1 (platform files hold only elements: is this a SimGrid "
       "platform XML?)"},
      // Issue 34: a misspelt option gets the nearest name (it was "A subcommand is required").
      {"MisspeltOption", {"run", "--executer", "fast"},
       "error: run: unknown option '--executer'; did you mean '--executor'?"},
      {"UnknownOption", {"validate", "docs", "--zzzzzzzz"},
       "error: validate: unknown option '--zzzzzzzz'; 'simumax-sim validate --help' lists them"},
      {"InvalidJson", {"run", "tests/data/config_errors/invalid_json.json"},
       "error: tests/data/config_errors/invalid_json.json: invalid JSON at line 4, column 19: syntax error while "
       "parsing object - unexpected string literal; expected '}'"},
  };
  return c;
}

class CliError : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(CliError, ExitsWithCode2AndOneClearLine) {
  const auto r = run_cli(GetParam().args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.substr(0, r.err.find('\n')), GetParam().first_line);
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(Table, CliError, ::testing::ValuesIn(cases()),
                         [](const ::testing::TestParamInfo<ErrorCase>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace simumax::tests
