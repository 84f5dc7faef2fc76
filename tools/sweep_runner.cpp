#include "tools/sweep_runner.hpp"

#include <algorithm>
#include <cmath>
#include <atomic>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "engine/common/error.hpp"
#include "engine/common/units.hpp"
#include "engine/platform/platform_spec.hpp"
#include "engine/platform/platform_xml.hpp"
#include "engine/report/rank_stats.hpp"
#include "engine/report/record_fields.hpp"
#include "engine/report/summary.hpp"
#include "engine/report/text_file.hpp"
#include "engine/simulate.hpp"
#include "tools/child_process.hpp"
#include "tools/cli_options.hpp"

namespace simumax::tools {

namespace fs = std::filesystem;

void run_case_here(const config::Sweep& s, size_t index, const std::string& dir) {
  const config::SweepCase c = s.case_at(index);
  const config::Scenario scenario = s.scenario(c);
  EngineArgs e;
  e.executor = s.run.executor;
  e.ranks = s.run.ranks;
  e.granularity = s.run.granularity;
  RunOptions o = make_run_options(e);
  if (!s.platforms.empty()) {
    const config::SweepPlatform& p = s.platforms[c.platform];
    if (p.xml) {
      o.platform_xml = *p.xml;
    } else if (!p.topology.empty()) {
      platform::PlatformSpec spec = platform::platform_from_system(scenario.system, scenario.strategy.world_size);
      spec.topology = *platform::parse_topology(p.topology);  // the sweep reader checked the name
      spec.oversubscription = p.oversubscription;
      spec.nodes_per_leaf = p.nodes_per_leaf;
      spec.nic_per_node = p.nic_per_node;
      o.platform_xml = dir + "/platform.xml";
      report::write_file_atomically(*o.platform_xml, platform::platform_xml(spec));
    }
  }
  // As `run` does: a base scenario's own "platform" is used on SimGrid unless the sweep gives one.
  if (o.executor == ExecutorKind::kSim && !o.platform_xml && scenario.platform_path) {
    o.platform_xml = scenario.platform_path;
  }
  RunResult r = simulate(scenario, o);
  report::judge_fit(r.summary, s.run.memory_margin_gib * common::kGiB);
  report::write_summary_json(dir, r.summary);
  // Every GPU's row: the case's straggler columns (docs/sweep.md); one row per stage says nothing of stragglers.
  if (s.run.ranks == "all") {
    report::write_ranks_json(dir, {scenario.name, r.summary.executor, r.summary.scope}, r.graph, r.timing, r.memory);
  }
}

void run_cases_here(const config::Sweep& s, size_t first, size_t count, const std::string& cases_dir) {
  for (size_t i = first; i < first + count && i < s.cases; ++i) {
    const std::string dir = cases_dir + "/" + s.case_at(i).name;
    std::string outcome;
    try {
      run_case_here(s, i, dir);
      continue;
    } catch (const common::ConfigError& e) {
      outcome = std::string("invalid\n") + e.what();
    } catch (const common::UsageError& e) {
      outcome = std::string("invalid\n") + e.what();
    } catch (const std::exception& e) {
      outcome = std::string("failed\ninternal error: ") + e.what();
    }
    std::replace(outcome.begin() + static_cast<std::ptrdiff_t>(outcome.find('\n') + 1), outcome.end(), '\n', ' ');
    report::write_file_atomically(dir + "/outcome.txt", outcome + "\n");
  }
}

namespace {

constexpr size_t kFastCasesPerProcess = 32;

// The error line of a child's stderr ("error: ..." without the prefix), else its last line.
std::string child_error(const std::string& err_path) {
  std::ifstream in(err_path);
  std::string line, last;
  while (std::getline(in, line)) {
    if (line.rfind("error: ", 0) == 0) return line.substr(7);
    if (line.rfind("internal error: ", 0) == 0) return line;
    if (!line.empty()) last = line;
  }
  return last;
}

// What became of a case: "ok" (its summary.json), or "invalid" / "failed" with the error.
struct Outcome {
  std::string status = "ok";
  std::string error;
};

// The case's row (a line of sweep.csv): its axis values, what became of it and, when ok, its summary.json's figures.
std::string case_row(const config::Sweep& s, size_t index, const std::string& dir, Outcome out) {
  report::Summary t;
  if (out.status == "ok") {
    try {
      t = report::read_summary(dir + "/summary.json");
    } catch (const common::ConfigError& e) {
      out = {"failed", e.what()};
    }
  }
  // The straggler: the latest rank (ranks.json's slowest_rank, as its late_ms orders them) and the largest
  // exposed communication of any rank; only for cases run with `--ranks all`.
  std::optional<double> late_ms, max_exposed_ms;
  std::optional<int64_t> late_rank;
  if (out.status == "ok" && s.run.ranks == "all") {
    try {
      const report::RankStats ranks = report::read_rank_stats(dir + "/ranks.json");
      const std::vector<size_t> latest = report::slowest_ranks(ranks, 1);
      if (!latest.empty()) {
        late_ms = ranks.ranks[latest[0]].late_ms;
        late_rank = ranks.ranks[latest[0]].rank;
        max_exposed_ms = 0.0;
        for (const report::RankRow& row : ranks.ranks) max_exposed_ms = std::max(*max_exposed_ms, row.exposed_comm_ms);
      }
    } catch (const common::ConfigError& e) {
      out = {"failed", e.what()};
    }
  }
  const bool ok = out.status == "ok";
  auto number = [ok](double v) { return ok ? std::optional<double>(v) : std::nullopt; };
  const config::SweepCase c = s.case_at(index);
  return report::record_line([&](report::FieldSink& f) {
    f.integer("index", static_cast<int64_t>(index));
    f.text("name", c.name);
    f.text("label", c.label);
    for (size_t i = 0; i < s.axes.size(); ++i) f.json_value(s.axes[i].key, c.values[i]);
    if (!s.platforms.empty()) f.text("platform", s.platforms[c.platform].name);
    f.text("status", out.status);
    f.maybe_text("error", out.error.empty() ? std::nullopt : std::optional<std::string>(out.error));
    f.text("executor", s.run.executor);
    f.maybe_number("step_time_ms", number(t.step_time_ms));
    f.maybe_number("mfu", number(t.mfu));
    f.maybe_number("tokens_per_s", number(t.tokens_per_s));
    f.maybe_number("peak_reserved_gib", number(common::gib(t.peak_reserved_bytes_max)));
    f.maybe_number("peak_alloc_gib", number(common::gib(static_cast<double>(t.peak_alloc_bytes_max))));
    f.maybe_boolean("fits", ok ? std::optional<bool>(t.fits) : std::nullopt);
    f.maybe_number("headroom_gib", number(common::gib(t.headroom_bytes)));
    f.maybe_number("straggler_late_ms", ok ? late_ms : std::nullopt);
    f.maybe_integer("straggler_rank", ok ? late_rank : std::nullopt);
    f.maybe_number("max_exposed_comm_ms", ok ? max_exposed_ms : std::nullopt);
  });
}

std::string case_dir(const std::string& cases_dir, const config::Sweep& s, size_t index) {
  return cases_dir + "/" + s.case_at(index).name;
}

// One child process for cases [first, first + count); its stderr goes to the first case's folder.
ChildResult spawn_cases(const config::Sweep& s, const CaseRunner& r, size_t first, size_t count) {
  const std::string cases_dir = r.out_dir + "/cases";
  return run_child(r.self,
                   {"sweep", s.path, "--case", std::to_string(first), "--case-count", std::to_string(count),
                    "--cases-dir", cases_dir, "--max-cases", std::to_string(r.max_cases)},
                   "", case_dir(cases_dir, s, first) + "/stderr.txt", r.case_timeout_s * static_cast<double>(count));
}

std::string seconds_text(double s) {
  char buf[32];
  return std::string(buf, std::to_chars(buf, buf + sizeof buf, s).ptr);
}

bool has_result(const std::string& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir + "/outcome.txt", ec) || fs::is_regular_file(dir + "/summary.json", ec);
}

// Failed when `child` (the process that ran it alone) ran over the timeout, even if it finished before it was
// noticed; else the case's outcome.txt, or ok when it has a summary.json, or failed with what ended `child`.
Outcome outcome_of(const std::string& dir, const ChildResult& child, double timeout_s) {
  Outcome out;
  std::error_code ec;
  if (child.timed_out) {
    out.status = "failed";
    out.error = "timed out after " + seconds_text(timeout_s) + " s (--case-timeout)";
  } else if (fs::is_regular_file(dir + "/outcome.txt", ec)) {
    std::ifstream in(dir + "/outcome.txt");
    std::getline(in, out.status);
    std::getline(in, out.error);
  } else if (!fs::is_regular_file(dir + "/summary.json", ec)) {
    out.status = "failed";
    out.error = "exit " + std::to_string(child.exit_code) + ": " + child_error(dir + "/stderr.txt");
  }
  return out;
}

// Cases [first, first + count) in one child process: the fast executor's cases take milliseconds, process start-up
// about as long, so they go in batches; a sim case is alone (one SimGrid engine per process). When a batch dies
// (a crash) or runs over the timeout, each case it left without a result (every case, after the timeout) runs
// again alone, so that a case's row never depends on the batch it fell in (-j, the shards).
std::vector<std::string> run_batch(const config::Sweep& s, const CaseRunner& r, size_t first, size_t count) {
  const std::string cases_dir = r.out_dir + "/cases";
  for (size_t i = first; i < first + count; ++i) {
    const std::string dir = case_dir(cases_dir, s, i);
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) throw common::UsageError("cannot create " + dir + ": " + ec.message());
    for (const char* stale : {"/summary.json", "/ranks.json", "/outcome.txt", "/stderr.txt"}) fs::remove(dir + stale, ec);
  }
  const ChildResult batch = spawn_cases(s, r, first, count);
  std::vector<std::string> lines;
  for (size_t i = first; i < first + count; ++i) {
    const std::string dir = case_dir(cases_dir, s, i);
    // A batch over the timeout is run again case by case: each case's row depends on its own run time.
    const ChildResult alone = count > 1 && (batch.timed_out || !has_result(dir)) ? spawn_cases(s, r, i, 1) : batch;
    lines.push_back(case_row(s, i, dir, outcome_of(dir, alone, r.case_timeout_s)));
  }
  return lines;
}

}  // namespace

std::vector<std::string> run_cases(const config::Sweep& s, const CaseRunner& r, size_t first, size_t count,
                                   const std::function<void(size_t, size_t)>& progress) {
  const size_t workers = std::max<size_t>(1, std::min<size_t>(static_cast<size_t>(std::max(1, r.jobs)), count));
  // Batches small enough to keep every worker busy to the end and the progress bar moving.
  const size_t batch =
      s.run.executor == "sim" ? 1 : std::clamp<size_t>(count / (workers * 4), 1, kFastCasesPerProcess);
  const size_t batches = (count + batch - 1) / batch;
  std::vector<std::string> lines(count);
  std::atomic<size_t> next{0};
  size_t done = 0;
  std::mutex mutex;
  std::string failure;
  auto worker = [&] {
    for (size_t b = next++; b < batches; b = next++) {
      const size_t begin = b * batch, n = std::min(batch, count - begin);
      try {
        std::vector<std::string> rows = run_batch(s, r, first + begin, n);
        std::move(rows.begin(), rows.end(), lines.begin() + static_cast<std::ptrdiff_t>(begin));
      } catch (const std::exception& e) {
        const std::lock_guard<std::mutex> lock(mutex);
        if (failure.empty()) failure = e.what();
        next = batches;  // stop handing out cases
        return;
      }
      const std::lock_guard<std::mutex> lock(mutex);
      done += n;
      if (progress) progress(done, count);
    }
  };
  std::vector<std::thread> threads;
  for (size_t i = 0; i + 1 < workers; ++i) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  if (!failure.empty()) throw common::UsageError(failure);
  return lines;
}

namespace {

// An ok row's step time and MFU are what a run writes (a shard edited or damaged by hand would be drawn as a
// result).
void check_ok_row(const report::RecordValues& row, const std::string& label) {
  const std::string* st = row.find_text("status");
  if (st == nullptr || *st != "ok") return;
  const double* step = row.find_number("step_time_ms");
  const double* mfu = row.find_number("mfu");
  const std::string problem = report::result_figures_problem(step ? *step : NAN, mfu ? *mfu : NAN);
  if (!problem.empty()) {
    const size_t colon = problem.find(": ");
    throw common::ConfigError(label, problem.substr(0, colon), "an ok row: " + problem.substr(colon + 2));
  }
}

}  // namespace

std::string write_sweep_outputs(const config::Sweep& s, const std::string& dir, const std::vector<std::string>& lines) {
  std::vector<report::Fields> rows;
  rows.reserve(lines.size());
  int64_t ok = 0, invalid = 0, failed = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string label = s.path + " case " + std::to_string(i);
    report::RecordValues row;
    report::replay_record_line(lines[i], label, row);  // a line that is not a record is refused before writing
    if (const std::string* st = row.find_text("status")) (*st == "ok" ? ok : *st == "invalid" ? invalid : failed) += 1;
    check_ok_row(row, label);
    rows.push_back([&line = lines[i], label](report::FieldSink& f) { report::replay_record_line(line, label, f); });
  }
  std::string axes, platforms;
  for (const auto& a : s.axes) axes += (axes.empty() ? "" : ",") + a.key;
  for (const auto& p : s.platforms) platforms += (platforms.empty() ? "" : ",") + p.name;
  const std::string counts = std::to_string(lines.size()) + " cases: " + std::to_string(ok) + " ok, " +
                             std::to_string(invalid) + " invalid, " + std::to_string(failed) + " failed";
  const report::Fields meta = [&](report::FieldSink& f) {
    f.text("sweep", s.path);
    f.text("name", s.name);
    f.text("description", s.description);
    f.text("base", s.base_name);
    f.text("axes", axes);
    f.text("platforms", platforms);
    f.text("executor", s.run.executor);
    f.text("ranks", s.run.ranks);
    f.text("granularity", s.run.granularity);
    f.number("memory_margin_gib", s.run.memory_margin_gib);
    f.integer("case_count", static_cast<int64_t>(lines.size()));
    f.integer("ok", ok);
    f.integer("invalid", invalid);
    f.integer("failed", failed);
  };
  report::write_file_atomically(dir + "/sweep.csv", report::records_csv(rows));
  report::RecordsJsonFile json(dir + "/sweep.json", "simumax_sim_sweep_v1", meta, {}, "cases");
  for (const auto& row : rows) json.add(row);
  json.close();
  return counts;
}

std::pair<size_t, size_t> shard_range(size_t cases, size_t shard, size_t shards) {
  const size_t begin = cases * shard / shards, end = cases * (shard + 1) / shards;
  return {begin, end - begin};
}

std::string shard_path(const std::string& out_dir, size_t shard) {
  return out_dir + "/shards/shard-" + std::to_string(shard) + ".jsonl";
}

void write_shard(const config::Sweep& s, const std::string& out_dir, size_t shard, size_t shards,
                 const std::vector<std::string>& lines) {
  const auto [first, count] = shard_range(s.cases, shard, shards);
  std::string text = report::record_line([&](report::FieldSink& f) {
                       f.text("sweep", s.path);
                       f.text("fingerprint", s.fingerprint);
                       f.integer("shard", static_cast<int64_t>(shard));
                       f.integer("shards", static_cast<int64_t>(shards));
                       f.integer("first", static_cast<int64_t>(first));
                       f.integer("count", static_cast<int64_t>(count));
                     }) +
                     "\n";
  for (const std::string& line : lines) text += line + "\n";
  text += report::record_line([&](report::FieldSink& f) {
            f.boolean("complete", true);
            f.integer("rows", static_cast<int64_t>(lines.size()));
          }) +
          "\n";
  std::error_code ec;
  fs::create_directories(out_dir + "/shards", ec);
  report::write_file_atomically(shard_path(out_dir, shard), text);
}

namespace {

bool int_is(const report::RecordValues& f, const std::string& key, size_t want) {
  const int64_t* v = f.find_integer(key);
  return v != nullptr && *v == static_cast<int64_t>(want);
}

// Why shard `shard` cannot be merged, or "" when its rows were appended to `rows`.
std::string read_shard(const config::Sweep& s, const std::string& path, size_t shard, size_t shards,
                       std::vector<std::string>& rows) {
  std::ifstream in(path);
  if (!in) return "missing (" + path + ")";
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const auto [first, count] = shard_range(s.cases, shard, shards);
  try {
    if (lines.size() < 2) return "incomplete: " + path + " has " + std::to_string(lines.size()) + " line(s)";
    report::RecordValues head, tail;
    report::replay_record_line(lines.front(), path, head);
    try {
      report::replay_record_line(lines.back(), path, tail);
    } catch (const common::ConfigError&) {
      return "incomplete: " + path + " ends in the middle of a line";
    }
    const std::string* fp = head.find_text("fingerprint");
    if (fp == nullptr || *fp != s.fingerprint) {
      return "from another version of " + s.path + " (" + path + "): run the sweep again";
    }
    if (!int_is(head, "shard", shard) || !int_is(head, "shards", shards) || !int_is(head, "first", first) ||
        !int_is(head, "count", count)) {
      return "names another range of cases (" + path + ")";
    }
    if (!tail.has("complete") || !int_is(tail, "rows", count) || lines.size() != count + 2) {
      return "incomplete: " + path + " has " + std::to_string(lines.size() - 1) + " of " + std::to_string(count) +
             " rows and no end line";
    }
  } catch (const common::ConfigError& e) {
    return std::string("unreadable: ") + e.what();
  }
  rows.insert(rows.end(), lines.begin() + 1, lines.end() - 1);
  return "";
}

}  // namespace

std::vector<std::string> read_shards(const config::Sweep& s, const std::string& out_dir, size_t shards) {
  std::vector<std::string> rows;
  rows.reserve(s.cases);
  std::string problems;
  size_t bad = 0;
  for (size_t shard = 0; shard < shards; ++shard) {
    const std::string why = read_shard(s, shard_path(out_dir, shard), shard, shards, rows);
    if (why.empty()) continue;
    if (++bad <= 10) {
      const auto [first, count] = shard_range(s.cases, shard, shards);
      problems += "\n  shard " + std::to_string(shard) + " (cases " + s.case_at(first).name + " to " +
                  s.case_at(first + count - 1).name + "): " + why + "; its task's log: " + out_dir + "/slurm/task-" +
                  std::to_string(shard) + ".out";
    }
  }
  if (bad > 0) {
    throw common::UsageError(std::to_string(bad) + " of " + std::to_string(shards) + " shards of " + out_dir +
                             " cannot be merged (is the Slurm job still running? squeue shows it):" + problems +
                             (bad > 10 ? "\n  ..." : ""));
  }
  return rows;
}

}  // namespace simumax::tools
