// simumax-sim search: the best parallel layout, micro-batching and recompute for a model on N GPUs that fits in
// memory, ranked by an objective; every candidate in search.csv / search.json, the winner as a scenario file.
#include <chrono>
#include <filesystem>
#include <iostream>

#include "engine/common/error.hpp"
#include "engine/common/logging.hpp"
#include "engine/common/units.hpp"
#include "engine/report/summary.hpp"
#include "engine/search/search.hpp"
#include "engine/search/search_output.hpp"
#include "engine/report/text_file.hpp"
#include "tools/cli_checks.hpp"
#include "tools/child_process.hpp"
#include "tools/cli_options.hpp"
#include "tools/commands.hpp"

namespace simumax::tools {

namespace {

namespace fs = std::filesystem;

struct SearchArgs {
  std::string self;
  std::string model, system, strategy;
  int64_t world_size = 0, global_batch_size = 0, seq_len = 0;
  std::string mode = "grid";
  search::SpaceArgs space;
  std::string uneven_pp = "on";
  double margin_gib = 6;
  std::string objective = "step-time";
  int top = 10, recheck = 0, threads = 0;
  std::string recheck_ranks = "all";
  std::string out_dir = "out/search";
  std::string records = "auto";
  bool quiet = false;
  std::string fidelity;
  size_t max_candidates = search::SearchRequest{}.max_candidates;
};

search::SearchRequest make_request(const SearchArgs& a, const config::Scenario& base) {
  search::SearchRequest q;
  q.mode = a.mode == "micro-batch" ? search::SearchMode::kMicroBatch
           : a.mode == "recompute" ? search::SearchMode::kRecompute
                                   : search::SearchMode::kGrid;
  search::SpaceArgs space = a.space;
  space.uneven_pp = a.uneven_pp == "on";
  q.space = search::build_space(q.mode, space, base, a.world_size);
  q.job = {a.world_size, a.global_batch_size, base.strategy.seq_len};
  q.objective = search::parse_objective(a.objective);
  q.memory_margin_gib = a.margin_gib;
  q.threads = a.threads;
  q.max_candidates = a.max_candidates;
  q.recheck = a.recheck;
  q.keep = static_cast<size_t>(std::max(a.top, a.recheck));
  return q;
}

// Each re-check is its own process (one SimGrid simulation per process): a scenario file, `run --executor sim`,
// and its summary.json read back.
search::RecheckFn recheck_fn(const SearchArgs& a, const config::Scenario& base) {
  return [&a, &base](size_t index, const search::Candidate& c, const config::Scenario& s) {
    search::SimCheck out;
    const std::string dir = a.out_dir + "/recheck/" + std::to_string(index);
    fs::create_directories(dir);
    const std::string scenario = dir + "/scenario.json";
    report::write_file_atomically(
        scenario, search::scenario_text(s, c, base, scenario, "re-check of search candidate " + std::to_string(index)));
    const int rc =
        run_child(a.self, {"run", scenario, "--executor", "sim", "--ranks", a.recheck_ranks, "-q", "-o", dir}, "",
                  dir + "/stderr.txt")
            .exit_code;
    if (rc != 0) {
      out.error = "exit " + std::to_string(rc) + ": " + first_line(dir + "/stderr.txt");
      return out;
    }
    const report::Summary t = report::read_summary(dir + "/summary.json");
    out.step_time_s = t.step_time_ms / common::kMsPerSecond;
    out.peak_reserved_bytes = t.peak_reserved_bytes_max;
    out.peak_alloc_bytes = t.peak_alloc_bytes_max;
    out.mfu = t.mfu;
    out.tokens_per_s = t.tokens_per_s;
    return out;
  };
}

// What the ranking optimised: the micro-batch mode ranks the largest fitting micro-batch first (SimuMax's rule),
// which may be slower than a smaller one; the header says so rather than "objective step-time" alone.
std::string objective_text(const search::SearchRequest& q) {
  const std::string objective = search::to_string(q.objective);
  if (q.mode != search::SearchMode::kMicroBatch) return ", objective " + objective;
  return ", ranked by the largest micro-batch size that fits (SimuMax's rule), then " + objective +
         ": not necessarily the fastest";
}

void write_file(const std::string& path, const std::string& text) { report::write_file_atomically(path, text); }

// --records auto: every candidate's record up to kAllRecordsUpTo candidates, else only those that fit, said on
// screen with the size the rest would take.
constexpr size_t kAllRecordsUpTo = 100000;

search::RecordScope record_scope(const SearchArgs& a, const search::SearchResult& r) {
  if (a.records == "all") return search::RecordScope::kAll;
  if (a.records == "fit") return search::RecordScope::kFit;
  if (r.candidates <= kAllRecordsUpTo) return search::RecordScope::kAll;
  common::logger("search")->warn(
      "{} candidates: search.csv and search.json hold the {} that fit (--records all writes every candidate, about "
      "{:.0f} MB)",
      r.candidates, r.ranking.size(), static_cast<double>(r.candidates) * search::kRecordFileBytes / 1e6);
  return search::RecordScope::kFit;
}

int do_search(const SearchArgs& a) {
  config::Scenario base = search::load_base(a.model, a.system, a.strategy, a.seq_len);
  apply_fidelity(base, a.fidelity);
  const search::SearchRequest q = make_request(a, base);
  make_output_folder(a.out_dir);
  // Every candidate's outcome waits on disk for the files (memory stays bounded whatever the space).
  search::SpillStore store(a.out_dir + "/search-outcomes.bin.tmp");
  const search::SearchResult r = search::run_search(base, q, store, a.quiet ? nullptr : progress_bar(search::kWriteSecondsPerRecord),
                                                    a.recheck > 0 ? recheck_fn(a, base) : nullptr);
  const std::string title = "search (" + std::string(search::to_string(q.mode)) +
                            "): " + fs::path(a.model).stem().string() + " on " + std::to_string(a.world_size) +
                            " GPUs of " + fs::path(a.system).stem().string() + ", global batch " +
                            std::to_string(a.global_batch_size) + ", seq_len " + std::to_string(q.job.seq_len) +
                            objective_text(q);
  const search::RecordScope scope = record_scope(a, r);
  const auto w0 = std::chrono::steady_clock::now();
  search::write_search_files(a.out_dir, r, q, title, store, scope);
  common::logger("search")->info("wrote search.csv and search.json in {:.2f} s",
                                 std::chrono::duration<double>(std::chrono::steady_clock::now() - w0).count());
  std::string best_note = "\nno candidate fits: no best_scenario.json written\n";
  if (!r.best.empty()) {
    const search::Candidate& best = r.best[0].candidate;
    search::Evaluator ev(base, q.job, q.space.uneven_pp);
    ev.evaluate(best);
    const std::string path = a.out_dir + "/best_scenario.json";
    write_file(path, search::scenario_text(ev.scenario(), best, base, path,
                                           "best of: " + title + " (simumax-sim search)"));
    best_note = "\nbest: " + search::label(best) + "\nwrote " + path + ", " + a.out_dir + "/search.csv, " +
                a.out_dir + "/search.json\n";
  }
  if (!a.quiet) std::cout << search::ranked_table(r, q, title, static_cast<size_t>(a.top)) << best_note;
  return 0;
}

void add_space_option(CLI::App* sub, const char* name, std::optional<std::string>& target, const char* help) {
  sub->add_option_function<std::string>(
      name, [&target](const std::string& v) { target = v; }, help);
}

void add_space_options(CLI::App* sub, search::SpaceArgs& space) {
  add_space_option(sub, "--tp", space.tp,
                   "tensor-parallel sizes (grid default: powers of two up to min(8, GPUs per node); MoE: 1)");
  add_space_option(sub, "--pp", space.pp, "pipeline sizes (grid default: divisors of world size up to layer_num)");
  add_space_option(sub, "--cp", space.cp, "context-parallel sizes (grid default: 1)");
  add_space_option(sub, "--vpp", space.vpp, "virtual pipeline (interleaving) sizes (grid default: 1)");
  add_space_option(sub, "--ep", space.ep,
                   "expert-parallel sizes (grid default: 1; MoE: powers of two dividing expert_num)");
  add_space_option(sub, "--etp", space.etp, "expert tensor-parallel sizes (grid default: 1)");
  add_space_option(sub, "--mbs", space.mbs,
                   "micro-batch sizes, or 'auto' for every size giving a whole micro-batch count (grid default: 1,2,4; "
                   "micro-batch mode: auto, with micro_batch_num >= pp as SimuMax)");
  add_space_option(
      sub, "--recompute", space.recompute,
      "none; selective (= selective:all, selective:attn, selective:mlp: SimuMax's three flag sets on every "
      "layer); full (full_block, every layer); full:N (first N layers of each chunk); full:* (every N from 1 "
      "to the layers of a chunk); base (as --strategy). Grid and recompute default: none,selective,full:*");
  add_space_option(sub, "--zero", space.zero,
                   "ZeRO stages, e.g. 0,1 (grid default: 1, Megatron's distributed optimizer)");
  add_space_option(sub, "--sp", space.sp, "sequence parallelism: on, off or on,off (grid default: on)");
}

void add_ranking_options(CLI::App* sub, SearchArgs& a) {
  sub->add_option("--memory-margin-gib", a.margin_gib,
                  "GiB kept free on every GPU beyond the peak reserved memory (SimuMax's gmi_error; its docs advise 10 "
                  "on a new machine)")
      ->capture_default_str();
  add_fidelity_option(*sub, a.fidelity);
  sub->add_option("--objective", a.objective,
                  "step-time, tokens-per-s, mfu, or cost-per-token (GPU-seconds per token = world_size * step time / "
                  "tokens per step); ties go to the most memory headroom")
      ->capture_default_str()
      ->check(CLI::IsMember({"step-time", "tokens-per-s", "mfu", "cost-per-token"}));
  sub->add_option("--top", a.top, "rows of the ranked table")->capture_default_str()->check(CLI::Range(1, 1000000));
  sub->add_option("--recheck", a.recheck, "re-run the best K on SimGrid (one process each) and re-rank them")
      ->capture_default_str()
      ->check(CLI::Range(0, 1000));
  sub->add_option("--recheck-ranks", a.recheck_ranks, "ranks the re-check simulates: all (contention) or stages")
      ->capture_default_str()
      ->check(CLI::IsMember({"stages", "all"}));
  sub->add_option("--max-candidates", a.max_candidates,
                  "refuse a space with more candidates than this, before evaluating any")
      ->capture_default_str()
      ->check(positive_number());
  sub->add_option("--threads", a.threads, "evaluation threads (0: one per core)")
      ->capture_default_str()
      ->check(CLI::Range(0, 1024));
}

}  // namespace

std::function<int()> add_search(CLI::App& app, const char* argv0) {
  auto a = std::make_shared<SearchArgs>();
  // The re-check runs this very binary; /proc/self/exe also works when it was found through PATH.
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  a->self = ec ? fs::absolute(argv0).string() : exe.string();
  CLI::App* sub =
      app.add_subcommand("search", "find the fastest strategy that fits in memory (fast executor, all cores)");
  sub->add_option("--model", a->model, "SimuMax model JSON")->required();
  sub->add_option("--system", a->system, "SimuMax system JSON (GPU memory: accelerator mem_gbs)")->required();
  sub->add_option("--strategy", a->strategy,
                  "SimuMax strategy JSON: the fields the search does not vary (default: SimuMax's defaults)");
  sub->add_option("--world-size", a->world_size, "number of GPUs")->required()->check(CLI::Range(int64_t{1}, search::kMaxSearchWorldSize));
  sub->add_option("--global-batch-size", a->global_batch_size, "sequences per step")
      ->required()
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--seq-len", a->seq_len, "tokens per sequence (default: the --strategy's seq_len)")
      ->check(CLI::Range(1, 1 << 30));
  sub->add_option("--search", a->mode,
                  "grid: every combination; micro-batch: every micro-batch size of the base layout (largest that fits "
                  "wins, as SimuMax's search_max_micro_batch_size_fixed_gbs); recompute: the best recompute of the "
                  "base layout")
      ->capture_default_str()
      ->check(CLI::IsMember({"grid", "micro-batch", "recompute"}));
  add_space_options(sub, a->space);
  sub->add_option("--uneven-pp", a->uneven_pp,
                  "on: when pp does not divide layer_num, the last stage takes the rest (SimuMax's search)")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  add_ranking_options(sub, *a);
  sub->add_option("-o,--out", a->out_dir, "output folder")->capture_default_str();
  sub->add_option("--records", a->records,
                  "the candidates search.csv / search.json hold: all, fit (those that fit), or auto (all up to "
                  "100,000 candidates, else those that fit; about 1 kB a candidate)")
      ->capture_default_str()
      ->check(CLI::IsMember({"auto", "all", "fit"}));
  sub->add_flag("-q,--quiet", a->quiet, "print nothing; only write the files");
  sub->footer(
      "Lists are comma-separated. Modes micro-batch and recompute keep the --strategy's layout: each list defaults to "
      "its value there. A candidate fits when its peak reserved memory plus the margin is at most the GPU memory; "
      "those that fit are ranked. Written to --out: search.csv and search.json (every candidate, or those that fit "
      "with --records; the rule that skipped each illegal one; by how much each too-big one misses) and best_scenario.json (the winner, for "
      "`simumax-sim run`).");
  return [sub, a]() { return sub->parsed() ? do_search(*a) : -1; };
}

}  // namespace simumax::tools
