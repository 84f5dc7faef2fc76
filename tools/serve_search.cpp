// simumax-sim serve's search in the background: one at a time, its progress read by a long poll, cancelled
// through the evaluation's progress callback (see search::ProgressFn).
#include <chrono>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <utility>

#include "engine/common/error.hpp"
#include "engine/report/html_report.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/serve_request.hpp"
#include "engine/report/text_file.hpp"
#include "engine/search/search.hpp"
#include "engine/search/search_output.hpp"
#include "tools/serve_jobs.hpp"

namespace simumax::tools {

namespace {

struct Cancelled {};

const char* const kParams =
    "world_size, global_batch_size, seq_len, mode, objective, memory_margin_gib, tp, cp, pp, ep, etp, vpp, mbs, "
    "recompute, zero, sp";

int64_t positive_int(const std::string& name, const std::string& text) {
  size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty() || v <= 0 || v > (1LL << 40)) {
    throw common::UsageError(name + ": expected a positive integer");
  }
  return v;
}

// The search the query asks for, as `simumax-sim search` builds it from its options.
search::SearchRequest make_request(const config::Scenario& base, const std::map<std::string, std::string>& p) {
  search::SearchRequest q;
  const auto get = [&p](const char* k) { return p.count(k) ? p.at(k) : std::string(); };
  const std::string mode = get("mode");
  if (!mode.empty() && mode != "grid" && mode != "micro-batch" && mode != "recompute") {
    throw common::UsageError("mode: expected grid, micro-batch or recompute");
  }
  q.mode = mode == "micro-batch" ? search::SearchMode::kMicroBatch
           : mode == "recompute" ? search::SearchMode::kRecompute
                                 : search::SearchMode::kGrid;
  search::SpaceArgs space;
  for (auto [key, slot] : {std::pair{"tp", &space.tp}, {"cp", &space.cp}, {"pp", &space.pp}, {"ep", &space.ep},
                           {"etp", &space.etp}, {"vpp", &space.vpp}, {"mbs", &space.mbs},
                           {"recompute", &space.recompute}, {"zero", &space.zero}, {"sp", &space.sp}}) {
    if (p.count(key)) *slot = p.at(key);
  }
  const int64_t world = positive_int("world_size", get("world_size"));
  q.job = {world, positive_int("global_batch_size", get("global_batch_size")), base.strategy.seq_len};
  if (p.count("memory_margin_gib")) {
    try {
      q.memory_margin_gib = std::stod(p.at("memory_margin_gib"));
    } catch (const std::exception&) {
      q.memory_margin_gib = NAN;
    }
    if (!std::isfinite(q.memory_margin_gib)) throw common::UsageError("memory_margin_gib: expected a number");
  }
  search::check_request(base, q);  // here, so that the request gets the error (400), not the search later
  q.space = search::build_space(q.mode, space, base, world);
  if (p.count("objective")) q.objective = search::parse_objective(p.at("objective"));
  return q;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

SearchJob::~SearchJob() {
  cancel_ = true;
  if (worker_.joinable()) worker_.join();
}

void SearchJob::start(const std::string& body, const std::map<std::string, std::string>& params) {
  for (const auto& [k, v] : params) {
    if ((", " + std::string(kParams) + ",").find(", " + k + ",") == std::string::npos) {
      throw common::UsageError("unknown parameter '" + (k.size() <= 40 ? k : k.substr(0, 40)) + "'; accepted: " + kParams);
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (state_ == "running") throw common::UsageError("a search is already running: cancel it first");
  }
  if (worker_.joinable()) worker_.join();  // the last one has finished: its thread only returns
  // Everything the user can get wrong is checked here, so that the request itself gets the error.
  const report::InlineConfigs configs = report::inline_config_texts(body);
  auto dir = std::make_shared<ScratchDir>();
  config::Scenario base;
  search::SearchRequest q;
  try {
    report::write_file_atomically(dir->path() + "/model.json", configs.model);
    report::write_file_atomically(dir->path() + "/strategy.json", configs.strategy);
    report::write_file_atomically(dir->path() + "/system.json", configs.system);
    const int64_t seq_len = params.count("seq_len") ? positive_int("seq_len", params.at("seq_len")) : 0;
    base = search::load_base(dir->path() + "/model.json", dir->path() + "/system.json", dir->path() + "/strategy.json",
                             seq_len);
    q = make_request(base, params);
  } catch (const common::ConfigError& e) {
    std::string what = e.what();
    for (size_t at; (at = what.find(dir->path() + "/")) != std::string::npos;) what.erase(at, dir->path().size() + 1);
    throw common::UsageError(what);
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    state_ = "running";
    done_ = total_ = 0;
    error_.clear();
    result_.clear();
    files_.clear();
    ++version_;
  }
  cancel_ = false;
  changed_.notify_all();
  worker_ = std::thread([this, dir, base = std::move(base), q = std::move(q)]() mutable {
    std::string state = "done", error, result;
    std::map<std::string, std::string> files;
    try {
      // The outcomes wait in the job's own folder, as the CLI's do in its output folder.
      search::SpillStore store(dir->path() + "/search-outcomes.bin.tmp");
      const search::SearchResult r = search::run_search(base, q, store, [this](size_t done, size_t total) {
        {
          std::lock_guard<std::mutex> lock(mutex_);
          done_ = done, total_ = total;
          ++version_;
        }
        changed_.notify_all();
        if (cancel_) throw Cancelled{};
      });
      if (cancel_) throw Cancelled{};  // asked after the last progress call
      search::write_search_files(dir->path(), r, q, "search from simumax-sim serve", store);
      result = report::report_data_json(dir->path(), report::HtmlReportOptions{});
      for (const char* name : {"search.json", "search.csv"}) files[name] = slurp(dir->path() + "/" + name);
      if (cancel_) throw Cancelled{};
    } catch (const Cancelled&) {
      state = "cancelled";
    } catch (const std::exception& e) {
      state = "error";
      error = e.what();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      state_ = state, error_ = error, result_ = std::move(result), files_ = std::move(files);
      ++version_;
    }
    changed_.notify_all();
  });
}

std::string SearchJob::status_json(int wait_ms) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (state_ == "running" && wait_ms > 0) {
    const uint64_t seen = version_;
    changed_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return version_ != seen; });
  }
  std::string out = "{\"state\":" + report::quoted(state_) + ",\"done\":" + std::to_string(done_) +
                    ",\"total\":" + std::to_string(total_);
  if (!error_.empty()) out += ",\"error\":" + report::quoted(error_);
  if (!result_.empty()) out += ",\"result\":" + result_;
  return out + "}";
}

bool SearchJob::cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (state_ != "running") return false;
  cancel_ = true;
  return true;
}

std::string SearchJob::file(const std::string& name) {
  std::lock_guard<std::mutex> lock(mutex_);
  const auto it = files_.find(name);
  return it == files_.end() ? std::string() : it->second;
}

}  // namespace simumax::tools
