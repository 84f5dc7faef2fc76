// Where a search keeps what it learnt of each candidate until its files are written: all of it in memory (a
// small space, the Python API), or spilled to a scratch file in the output folder (the CLI), so that the memory
// a search holds does not grow with the space.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/interrupt.hpp"
#include "engine/search/candidate.hpp"
#include "engine/search/evaluator.hpp"

namespace simumax::search {

// A candidate re-run on SimGrid (in its own process).
struct SimCheck {
  bool done = false;
  std::string error;  // non-empty: the run failed
  double step_time_s = 0;
  double peak_reserved_bytes = 0;
  int64_t peak_alloc_bytes = 0;
  double mfu = 0;
  double tokens_per_s = 0;
};

// One candidate: what it is, what the fast evaluation gave and, for a re-checked one, the sim's figures.
struct Outcome {
  size_t index = 0;  // in enumeration order
  Candidate candidate;
  Evaluation evaluation;
  SimCheck sim;
};

// Receives every outcome once, in any order, and gives them back in enumeration order (index 0, 1, 2, ...).
// What is kept of an outcome: the candidate, the status, the reason and the figures (not the evaluation's
// `detail`, nor `sim`, which only the best few have: the search keeps those).
class OutcomeStore {
 public:
  virtual ~OutcomeStore() = default;
  virtual void add(const Outcome& o) = 0;
  virtual void for_each(const std::function<void(const Outcome&)>& fn) = 0;
};

class MemoryStore : public OutcomeStore {
 public:
  void add(const Outcome& o) override;
  void for_each(const std::function<void(const Outcome&)>& fn) override;
  size_t size() const { return all_.size(); }  // one past the highest index added
  const Outcome& at(size_t index) const { return all_.at(index); }

 private:
  std::vector<Outcome> all_;
};

// Fixed-size binary records in a scratch file `path` (created, truncated, and removed by the destructor), appended
// as they come; the reasons, which repeat, are kept once each in memory. The outcomes may come as a few runs of
// rising indices (the search's stripes, kMaxRuns at most), which for_each merges. Throws common::UsageError naming
// the path when the file cannot be created, written or read back, common::InternalError past kMaxRuns runs.
class SpillStore : public OutcomeStore {
 public:
  explicit SpillStore(std::string path);
  ~SpillStore() override;
  SpillStore(const SpillStore&) = delete;
  SpillStore& operator=(const SpillStore&) = delete;
  void add(const Outcome& o) override;
  void for_each(const std::function<void(const Outcome&)>& fn) override;
  static constexpr size_t kMaxRuns = 16;

 private:
  uint32_t reason_id(const std::string& reason);
  common::ScratchFile file_;
  std::FILE* f_ = nullptr;
  size_t count_ = 0;
  std::vector<size_t> run_starts_;  // the record each run of rising indices starts at
  size_t last_index_ = 0;
  std::vector<std::string> reasons_;  // id -> text
};

}  // namespace simumax::search
