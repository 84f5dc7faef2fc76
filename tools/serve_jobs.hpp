// simumax-sim serve's work on a request: the live run, the files of a run to download, a compare against a real
// run, and a search in the background with progress and cancel (docs/report.md, "simumax-sim serve").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace simumax::tools {

// A scratch folder for one request, removed with everything in it when it goes out of scope: the engine writes
// files, the answer is read back from them. Every live one is also removed by remove_scratch_dirs.
class ScratchDir {
 public:
  ScratchDir();  // throws common::InternalError when no folder can be made under the temp directory
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Removes every live ScratchDir (serve's SIGINT / SIGTERM: the process then exits without unwinding).
void remove_scratch_dirs();

// The most tasks one request may lower to (the CLI's --max-tasks is 4e8): a bigger step held the run lock for
// seconds and hundreds of MB of the server's memory (issue 32); the CLI runs it.
inline constexpr double kServeMaxTasks = 5e6;

// The files of a run the app offers for download (everything `run --trace --memory --simumax-outputs --html`
// writes, and the scenario with its configs inline).
const std::vector<std::string>& serve_run_files();

// POST /api/run: one run of the fast executor on the request's scenario (an inline scenario, see
// report::inline_scenario_text): the report page's data. Errors name the field as the CLI does, with the file
// as "scenario.json" (common::UsageError) or the request (common::ConfigError).
std::string run_request(const std::string& body);

// POST /api/schema: the fields the config readers ask for when they read the request's scenario
// (config::scenario_schema_json, pointers "/model/...", "/strategy/...", "/system/..."): the app's form.
std::string schema_request(const std::string& body);

// POST /api/download?file=NAME: the bytes of `file` (one of serve_run_files(), else common::UsageError) of the
// request's run: the same bytes `run` writes for that scenario.
std::string run_file_request(const std::string& body, const std::string& file);

// POST /api/compare?real=PATH: the request's run (trace at op granularity) compared with the real run at
// `real_path` (already resolved under the served folders): the report data with its "compare" part.
std::string compare_request(const std::string& body, const std::string& real_path, const std::string& kernel_classes);

// One search at a time, in a thread of its own (POST /api/search, GET /api/search, POST /api/search/cancel).
class SearchJob {
 public:
  ~SearchJob();  // cancels a running search and waits for it

  // Starts a search of the request's model and system, its strategy as the base, with `params` (the query:
  // world_size, global_batch_size, seq_len, mode, objective, memory_margin_gib, tp, cp, pp, ep, etp, vpp, mbs,
  // recompute, zero, sp, as `simumax-sim search` takes them). Throws common::UsageError for a bad or unknown
  // parameter or when a search is already running, common::ConfigError for a bad config.
  void start(const std::string& body, const std::map<std::string, std::string>& params);
  // {"state": "idle"|"running"|"done"|"cancelled"|"error", "done": N, "total": N, "error"?: text, "result"?: the
  // report data of the search}. Waits up to `wait_ms` for the state to move on first (a long poll).
  std::string status_json(int wait_ms);
  // Asks a running search to stop; false when none runs.
  bool cancel();
  // search.json or search.csv of the last search that finished (empty when none did, or another name).
  std::string file(const std::string& name);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::thread worker_;
  std::atomic<bool> cancel_{false};
  std::string state_ = "idle";
  size_t done_ = 0, total_ = 0;
  uint64_t version_ = 0;  // bumped on every change, for the long poll
  std::string error_, result_;
  std::map<std::string, std::string> files_;
};

}  // namespace simumax::tools
