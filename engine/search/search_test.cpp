// The search end to end in-process: figures as `run` reports them, the same results on any number of threads,
// ranking, argument errors, and agreement with SimuMax's own search on its example.
#include "engine/search/search.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <algorithm>
#include <fstream>
#include <iostream>
#include <numeric>
#include <iterator>
#include <set>
#include <utility>

#include "engine/common/units.hpp"
#include "engine/config/scenario_writer.hpp"
#include "engine/search/search_output.hpp"
#include "engine/simulate.hpp"
#include "tests/scratch_dir.hpp"

namespace simumax::search {
namespace {

const std::string kSrc = SIMUMAX_SOURCE_DIR;
const std::string kShared = SIMUMAX_SHARED_DIR;

config::Scenario llama70b() {
  return load_base(kSrc + "/models/llama3-70b.json", kSrc + "/platforms/b200_bf16.json", "", 8192);
}

// SimuMax's examples/search_strategy_llama3_8b.py: llama3-8b on 8 A100-PCIe, tp1 pp2 dp4 without recompute,
// global batch 32, gmi_error 10, reserved memory.
config::Scenario simumax_example_base() {
  config::Scenario s = load_base(kShared + "/simumax-configs/models/llama3-8b.json",
                                 kShared + "/simumax-configs/system/a100_pcie.json",
                                 kSrc + "/tests/data/search/llama3_8b_tp1_pp2_dp4_no_recompute.json", 0);
  s.strategy.fidelity = config::Fidelity::kSimuMax;  // SimuMax's own search results
  return s;
}

SearchRequest small_grid(const config::Scenario& base, int64_t world, int64_t gbs) {
  SearchRequest q;
  SpaceArgs a;
  a.tp = "2,4,8", a.pp = "2,4,8", a.mbs = "1,2", a.recompute = "none,selective:all,full:1,full", a.zero = "0,1";
  q.space = build_space(SearchMode::kGrid, a, base, world);
  q.job = {world, gbs, base.strategy.seq_len};
  return q;
}

void expect_evaluations_match_run(const config::Scenario& base) {
  const SearchRequest q = small_grid(base, 64, 256);
  const auto candidates = enumerate(q.space, q.mode, base, q.job);
  Evaluator ev(base, q.job, true);
  int checked = 0;
  for (size_t i = 0; i < candidates.size(); i += 7) {
    const Evaluation e = ev.evaluate(candidates[i]);
    if (e.status != Status::kEvaluated) continue;
    RunOptions o;
    o.lowering.granularity = graph::Granularity::kLayer;
    const report::Summary s = simulate(ev.scenario(), o).summary;
    EXPECT_NEAR(common::ms(e.step_time_s), s.step_time_ms, 1e-9 * s.step_time_ms) << label(candidates[i]);
    EXPECT_EQ(e.peak_reserved_bytes, s.peak_reserved_bytes_max) << label(candidates[i]);
    EXPECT_EQ(e.peak_alloc_bytes, s.peak_alloc_bytes_max) << label(candidates[i]);
    EXPECT_NEAR(e.mfu, s.mfu, 1e-9 * s.mfu);
    EXPECT_NEAR(e.tokens_per_s, s.tokens_per_s, 1e-9 * s.tokens_per_s);
    ++checked;
  }
  EXPECT_GT(checked, 10);
}

TEST(Search, EvaluationMatchesWhatRunReports) { expect_evaluations_match_run(llama70b()); }

// Megatron's overlapped DP buckets wait for the layers that use their parameters, and every overlap slows the
// compute beside it: still what `run` reports.
TEST(Search, EvaluationWithOverlapMatchesWhatRunReports) {
  config::Scenario base = llama70b();
  base.strategy.megatron_overlap_grad_reduce = base.strategy.megatron_overlap_param_gather = true;
  expect_evaluations_match_run(base);
  base.strategy.megatron_tp_comm_overlap = base.strategy.megatron_overlap_p2p_comm = true;
  base.strategy.sm_contention = 0.1;
  expect_evaluations_match_run(base);
}

// An Evaluator shares layers (and their costs) between candidates that build them alike: every candidate of
// a dense and an MoE space must get exactly what a fresh Evaluator (empty caches) gives it.
void expect_shared_ops_change_nothing(const config::Scenario& base, const SearchRequest& q) {
  const auto candidates = enumerate(q.space, q.mode, base, q.job);
  Evaluator shared(base, q.job, true);
  Evaluator small(base, q.job, true, 3);  // its caches start again every few candidates
  int evaluated = 0;
  for (const auto& c : candidates) {
    const Evaluation a = shared.evaluate(c);
    const Evaluation b = Evaluator(base, q.job, true).evaluate(c);
    EXPECT_EQ(small.evaluate(c).step_time_s, b.step_time_s) << label(c);
    ASSERT_EQ(a.status, b.status) << label(c);
    EXPECT_EQ(a.reason, b.reason) << label(c);
    EXPECT_EQ(a.step_time_s, b.step_time_s) << label(c);
    EXPECT_EQ(a.peak_alloc_bytes, b.peak_alloc_bytes) << label(c);
    EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes) << label(c);
    EXPECT_EQ(a.tasks, b.tasks) << label(c);
    evaluated += a.status == Status::kEvaluated;
  }
  EXPECT_GT(evaluated, 20);
}

TEST(Search, SharedOpsBetweenCandidatesChangeNoResult) {
  const config::Scenario dense = llama70b();
  expect_shared_ops_change_nothing(dense, small_grid(dense, 64, 256));
  const config::Scenario moe =
      load_base(kSrc + "/models/deepseekv2-lite.json", kSrc + "/platforms/b200_bf16.json", "", 4096);
  SearchRequest q;
  SpaceArgs a;
  a.tp = "1,2", a.pp = "1,2,4", a.ep = "1,2,4,8", a.mbs = "1,2", a.recompute = "none,selective:attn,full:1,full";
  q.space = build_space(SearchMode::kGrid, a, moe, 32);
  q.job = {32, 64, moe.strategy.seq_len};
  expect_shared_ops_change_nothing(moe, q);
}

// Issue 34: a space of several blocks is evaluated in stripes, each an even sample of the whole space, so that the
// rate after the first few percent (the progress bar's ETA) is the space's: the enumeration puts the deep
// pipelines, the costly candidates, last. Every candidate still comes once, and progress only rises.
TEST(Search, ASpaceOfSeveralBlocksIsEvaluatedInEvenSamplesOfIt) {
  const config::Scenario base = llama70b();
  SearchRequest q = small_grid(base, 64, 256);
  q.block = 8;
  struct Arrivals : MemoryStore {
    std::vector<size_t> order;
    void add(const Outcome& o) override {
      order.push_back(o.index);
      MemoryStore::add(o);
    }
  } store;
  std::vector<size_t> progress;
  const SearchResult r = run_search(base, q, store, [&](size_t done, size_t) { progress.push_back(done); });
  ASSERT_EQ(store.order.size(), r.candidates);
  EXPECT_EQ(std::set<size_t>(store.order.begin(), store.order.end()).size(), r.candidates);
  EXPECT_TRUE(std::is_sorted(progress.begin(), progress.end()));
  ASSERT_FALSE(progress.empty());
  EXPECT_EQ(progress.back(), r.candidates);
  auto mean_pp = [&](auto first, auto last) {
    double sum = 0;
    for (auto it = first; it != last; ++it) sum += static_cast<double>(store.at(*it).candidate.pp);
    return sum / static_cast<double>(last - first);
  };
  const size_t eighth = r.candidates / kMaxStripes;
  const double space = mean_pp(store.order.begin(), store.order.end());
  const double sampled = mean_pp(store.order.begin(), store.order.begin() + eighth);
  std::vector<size_t> enumeration(r.candidates);
  std::iota(enumeration.begin(), enumeration.end(), size_t{0});
  const double in_order = mean_pp(enumeration.begin(), enumeration.begin() + eighth);
  std::cout << "mean pp: space " << space << ", first eighth evaluated " << sampled << ", in enumeration order "
            << in_order << "\n";
  EXPECT_NEAR(sampled, space, 0.2 * space);
  EXPECT_LT(in_order, 0.6 * space);  // what the blocks in enumeration order would have shown first
}

TEST(Search, ResultsDoNotDependOnTheThreadCount) {
  const config::Scenario base = llama70b();
  SearchRequest q = small_grid(base, 64, 256);
  q.threads = 1;
  MemoryStore one_store, three_store;
  const SearchResult one = run_search(base, q, one_store);
  q.threads = 3;
  const SearchResult three = run_search(base, q, three_store);
  ASSERT_EQ(one_store.size(), three_store.size());
  for (size_t i = 0; i < one_store.size(); ++i) {
    const Evaluation& a = one_store.at(i).evaluation;
    const Evaluation& b = three_store.at(i).evaluation;
    EXPECT_EQ(a.reason, b.reason);
    EXPECT_EQ(a.step_time_s, b.step_time_s);
    EXPECT_EQ(a.peak_reserved_bytes, b.peak_reserved_bytes);
  }
  EXPECT_EQ(one.ranking, three.ranking);
  EXPECT_EQ(candidates_csv(one, q, one_store), candidates_csv(three, q, three_store));
}

// The files of a search evaluated a few candidates at a time, its outcomes spilled to disk, are byte for byte those
// of one evaluated in one block with every outcome in memory; re-checked candidates carry the sim's figures there,
// and only the best `keep` are held whole.
TEST(Search, SpilledSmallBlocksWriteTheSameFiles) {
  const config::Scenario base = llama70b();
  SearchRequest q = small_grid(base, 64, 256);
  q.recheck = 2;
  // A stand-in for the SimGrid re-run: the fast figures, 10 % slower.
  const RecheckFn recheck = [&](size_t, const Candidate& c, const config::Scenario&) {
    Evaluator ev(base, q.job, q.space.uneven_pp);
    const Evaluation e = ev.evaluate(c);
    SimCheck s;
    s.step_time_s = 1.1 * e.step_time_s, s.peak_reserved_bytes = e.peak_reserved_bytes;
    s.mfu = e.mfu / 1.1, s.tokens_per_s = e.tokens_per_s / 1.1;
    return s;
  };
  auto files = [&](OutcomeStore& store, const std::string& dir) {
    std::filesystem::create_directories(dir);
    const SearchResult r = run_search(base, q, store, nullptr, recheck);
    write_search_files(dir, r, q, "t", store);
    std::string text;
    for (const char* name : {"/search.csv", "/search.json"}) {
      std::ifstream in(dir + name);
      text += std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    }
    return std::pair(r, text);
  };
  MemoryStore memory;
  const auto [whole, whole_text] = files(memory, ::testing::TempDir() + "/search_whole");
  q.block = 7, q.keep = 3;
  const std::string dir = ::testing::TempDir() + "/search_spilled";
  std::string spilled_text;
  std::filesystem::create_directories(dir);
  {
    SpillStore spill(dir + "/outcomes.tmp");
    const auto [spilled, text] = files(spill, dir);
    spilled_text = text;
    EXPECT_EQ(spilled.ranking, whole.ranking);
    ASSERT_EQ(spilled.best.size(), 3u);
    for (size_t j = 0; j < 3; ++j) EXPECT_EQ(spilled.best[j].index, whole.ranking[j]);
    EXPECT_TRUE(spilled.best[0].sim.done && spilled.best[1].sim.done && !spilled.best[2].sim.done);
  }
  EXPECT_FALSE(std::filesystem::exists(dir + "/outcomes.tmp"));
  EXPECT_EQ(spilled_text, whole_text);
  EXPECT_NE(whole_text.find("\"sim_step_time_ms\": "), std::string::npos);
}

// serve's cancel: a progress callback that throws stops the evaluation on every thread, and the exception
// reaches the caller (no thread left running, no std::terminate).
TEST(Search, ProgressCallbackThatThrowsStopsTheSearchOnEveryThread) {
  const config::Scenario base = llama70b();
  SearchRequest q = small_grid(base, 64, 256);
  q.threads = 3;
  struct Stop {};
  size_t calls = 0;
  MemoryStore stopped, next;
  EXPECT_THROW(run_search(base, q, stopped, [&calls](size_t, size_t) {
    ++calls;
    throw Stop{};
  }), Stop);
  EXPECT_EQ(calls, 1u);
  EXPECT_GT(run_search(base, q, next).evaluated, 0u);  // and the next search runs as usual
}

TEST(Search, RankingPutsTheObjectiveFirstThenHeadroom) {
  const config::Scenario base = llama70b();
  const SearchRequest q = small_grid(base, 64, 256);
  MemoryStore store;
  const SearchResult r = run_search(base, q, store);
  ASSERT_GT(r.ranking.size(), 3u);
  for (size_t j = 1; j < r.ranking.size(); ++j) {
    const Evaluation& a = store.at(r.ranking[j - 1]).evaluation;
    const Evaluation& b = store.at(r.ranking[j]).evaluation;
    EXPECT_LE(a.step_time_s, b.step_time_s);
    if (a.step_time_s == b.step_time_s) {
      EXPECT_GE(headroom_bytes(a, r), headroom_bytes(b, r));
    }
    EXPECT_GE(headroom_bytes(b, r), 0);
  }
  EXPECT_EQ(r.evaluated, r.ranking.size() + r.too_big);
}

TEST(Search, MarginAsLargeAsTheGpuIsRefused) {
  const config::Scenario base = llama70b();
  SearchRequest q = small_grid(base, 64, 256);
  q.memory_margin_gib = 180;
  try {
    MemoryStore store;
    run_search(base, q, store);
    FAIL();
  } catch (const common::UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--memory-margin-gib 180 leaves no memory: the GPU of " + kSrc +
                  "/platforms/b200_bf16.json has 180 GiB (accelerator mem_gbs); use a margin between 0 and 180 GiB "
                  "(SimuMax's gmi_error is 6 to 10)");
  }
}

// SimuMax's search_max_micro_batch_size_fixed_gbs on its example finds micro-batch size 1 (8 micro-batches) as the
// largest that fits, with a reserved peak of 54.1334 GiB (first stage) and an iteration of 5.5547 s: so sizes 2
// and 4 (the other candidates with micro_batch_num >= pp) do not fit. The same feasible set here.
TEST(Search, MicroBatchSearchAgreesWithSimuMaxOnItsExample) {
  const config::Scenario base = simumax_example_base();
  SearchRequest q;
  q.mode = SearchMode::kMicroBatch;
  q.space = build_space(q.mode, {}, base, 8);
  q.job = {8, 32, base.strategy.seq_len};
  q.memory_margin_gib = 10;
  MemoryStore store;
  const SearchResult r = run_search(base, q, store);
  std::set<std::pair<int64_t, int64_t>> tried, feasible;
  for (size_t i = 0; i < store.size(); ++i) tried.insert({store.at(i).candidate.mbs, store.at(i).candidate.mbc});
  for (size_t i : r.ranking) feasible.insert({store.at(i).candidate.mbs, store.at(i).candidate.mbc});
  EXPECT_EQ(tried, (std::set<std::pair<int64_t, int64_t>>{{1, 8}, {2, 4}, {4, 2}}));
  EXPECT_EQ(feasible, (std::set<std::pair<int64_t, int64_t>>{{1, 8}}));
  const Evaluation& best = r.best.at(0).evaluation;
  EXPECT_NEAR(common::gib(best.peak_reserved_bytes), 54.1334, 5e-4);
  EXPECT_NEAR(best.step_time_s, 5.5547, 5e-4);
}

// SimuMax's search_best_parallel_strategy on the same example (tp 1 or 2, pp 2, micro-batch size 1, no recompute,
// objective MFU) picks tp1 pp2 dp4 with MFU 0.4866.
TEST(Search, ParallelSearchAgreesWithSimuMaxOnItsExample) {
  const config::Scenario base = simumax_example_base();
  SearchRequest q;
  SpaceArgs a;
  a.tp = "1,2", a.pp = "2", a.mbs = "1", a.recompute = "none";
  q.space = build_space(SearchMode::kGrid, a, base, 8);
  q.job = {8, 32, base.strategy.seq_len};
  q.objective = Objective::kMfu;
  q.memory_margin_gib = 10;
  MemoryStore store;
  const SearchResult r = run_search(base, q, store);
  ASSERT_FALSE(r.best.empty());
  EXPECT_EQ(label(r.best[0].candidate), "tp1 pp2 dp4 mbs1 mbc8 none zero1 sp");
  EXPECT_NEAR(r.best[0].evaluation.mfu, 0.4866, 5e-5);
}

// SimuMax's example layout with micro-batch size 2 does not fit without recompute (72.5 GiB + 10 GiB margin on
// 80 GiB): the recompute search keeps the layout, tries none, the three selective sets and full:1..16, and the
// winner is the fastest that fits. Among full_block counts that is the smallest that fits (SimuMax's binary
// search finds the same count).
TEST(Search, RecomputeSearchFindsTheCheapestRecomputeThatFits) {
  const config::Scenario base = simumax_example_base();
  SearchRequest q;
  q.mode = SearchMode::kRecompute;
  SpaceArgs a;
  a.mbs = "2";
  q.space = build_space(q.mode, a, base, 8);
  q.job = {8, 32, base.strategy.seq_len};
  q.memory_margin_gib = 10;
  MemoryStore store;
  const SearchResult r = run_search(base, q, store);
  ASSERT_EQ(r.candidates, 1u + 3u + 16u);
  int64_t smallest_full_fit = 0;
  for (size_t i = 0; i < store.size(); ++i) {
    const Candidate& c = store.at(i).candidate;
    EXPECT_EQ(label(c).substr(0, 22), "tp1 pp2 dp4 mbs2 mbc4 ") << label(c);
    const bool fits = headroom_bytes(store.at(i).evaluation, r) >= 0;
    if (c.recompute.kind == RecomputeKind::kNone) {
      EXPECT_FALSE(fits);
    }
    if (c.recompute.kind == RecomputeKind::kFull && fits && smallest_full_fit == 0) {
      smallest_full_fit = c.recompute.layers;
    }
  }
  ASSERT_GT(smallest_full_fit, 0);
  const Candidate* best_full = nullptr;
  for (size_t i : r.ranking) {
    if (store.at(i).candidate.recompute.kind == RecomputeKind::kFull) {
      best_full = &store.at(i).candidate;
      break;
    }
  }
  ASSERT_NE(best_full, nullptr);
  EXPECT_EQ(best_full->recompute.layers, smallest_full_fit);
}

TEST(Search, BestScenarioFileReloadsToTheSameStrategy) {
  const config::Scenario base = simumax_example_base();
  Candidate c;
  c.tp = 2, c.pp = 2, c.dp = 2, c.vpp = 2, c.mbs = 2, c.mbc = 8, c.zero = 0;
  c.recompute = {RecomputeKind::kFull, 3};
  Evaluator ev(base, {8, 32, 4096}, true);
  ASSERT_EQ(ev.evaluate(c).status, Status::kEvaluated) << ev.evaluate(c).detail;
  const auto dir = tests::scratch_dir("search-test", "best");
  const std::string path = (dir / "best.json").string();
  std::ofstream(path) << scenario_text(ev.scenario(), c, base, path, "test");
  const config::Scenario back = config::load_scenario(path);
  // Every key the scenario writer sets reads back the same: the two strategies write the same text.
  config::ScenarioFile written, reread;
  written.strategy = ev.scenario().strategy;
  reread.strategy = back.strategy;
  EXPECT_EQ(config::scenario_file_json(reread), config::scenario_file_json(written));
  EXPECT_EQ(back.strategy.use_flash_sdp, base.strategy.use_flash_sdp);
  EXPECT_EQ(back.strategy.enable_straggler_model, base.strategy.enable_straggler_model);
  EXPECT_EQ(simulate(back, {}).summary.step_time_ms, simulate(ev.scenario(), {}).summary.step_time_ms);
}

// search.json is written record by record (a 323k-candidate search ran out of memory building it whole): the text
// must be exactly the document records_json builds in memory.
TEST(Search, StreamedRecordsAreTheWholeDocument) {
  using report::FieldSink;
  const report::Fields meta = [](FieldSink& f) {
    f.text("title", "t");
    f.integer("n", 3);
  };
  const std::vector<report::Fields> records = {[](FieldSink& f) {
                                                 f.integer("a", 1);
                                                 f.text("b", "x\"y");
                                                 f.null("c");
                                               },
                                               [](FieldSink& f) {
                                                 f.integer("a", 2);
                                                 f.number("b", 2.5);
                                                 f.boolean("c", true);
                                               }};
  const std::vector<report::Fields> reasons = {[](FieldSink& f) { f.integer("k", 1); }};
  const std::string path = ::testing::TempDir() + "/streamed_records.json";
  for (size_t count : {size_t{0}, records.size()}) {
    report::RecordsJsonFile out(path, "test_v1", meta, {{"reasons", reasons}}, "candidates");
    for (size_t i = 0; i < count; ++i) out.add(records[i]);
    out.close();
    std::ifstream in(path);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::vector<report::Fields> whole(records.begin(), records.begin() + static_cast<std::ptrdiff_t>(count));
    EXPECT_EQ(text, report::records_json("test_v1", meta, {{"reasons", reasons}, {"candidates", whole}}));
  }
}

}  // namespace
}  // namespace simumax::search
