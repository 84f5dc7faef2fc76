#include "engine/search/outcome_store.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <type_traits>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"

namespace simumax::search {

void MemoryStore::add(const Outcome& o) {
  if (o.index >= all_.size()) all_.resize(o.index + 1);
  Outcome& kept = all_[o.index];
  kept = o;
  kept.evaluation.detail.clear();
  kept.sim = SimCheck{};
}

void MemoryStore::for_each(const std::function<void(const Outcome&)>& fn) {
  for (const Outcome& o : all_) fn(o);
}

namespace {

// One outcome on disk.
struct Record {
  uint64_t index;
  Candidate candidate;
  double step_time_s;
  double peak_reserved_bytes;
  double mfu;
  double tokens_per_s;
  int64_t peak_alloc_bytes;
  uint64_t tasks;
  uint32_t reason;
  Status status;
};
static_assert(std::is_trivially_copyable_v<Record>);

constexpr size_t kBufferBytes = 1u << 20;
constexpr size_t kRunBufferRecords = 512;

// The records [next, end) of one run, read a buffer at a time.
class RunReader {
 public:
  RunReader(const std::string& path, int fd, size_t begin, size_t end)
      : path_(path), fd_(fd), next_(begin), end_(end) {}
  bool done() const { return at_ == buffer_.size() && next_ == end_; }
  // REQUIRES: !done().
  const Record& head() {
    if (at_ == buffer_.size()) fill();
    return buffer_[at_];
  }
  void pop() { ++at_; }

 private:
  void fill() {
    buffer_.resize(std::min(kRunBufferRecords, end_ - next_));
    const size_t bytes = buffer_.size() * sizeof(Record);
    const auto got = ::pread(fd_, buffer_.data(), bytes, static_cast<off_t>(next_ * sizeof(Record)));
    if (got != static_cast<ssize_t>(bytes)) {
      throw common::UsageError(path_ + ": cannot read the search's scratch file back: " +
                               (got < 0 ? std::strerror(errno) : "it ends early"));
    }
    next_ += buffer_.size();
    at_ = 0;
  }
  const std::string& path_;
  int fd_;
  size_t next_, end_, at_ = 0;
  std::vector<Record> buffer_;
};

}  // namespace

SpillStore::SpillStore(std::string path) : file_(std::move(path)) {  // removed on Ctrl-C too
  f_ = std::fopen(file_.path().c_str(), "w+b");
  if (!f_) throw common::UsageError(file_.path() + ": cannot create the search's scratch file: " + std::strerror(errno));
  std::setvbuf(f_, nullptr, _IOFBF, kBufferBytes);
}

SpillStore::~SpillStore() {
  if (f_) std::fclose(f_);
}

uint32_t SpillStore::reason_id(const std::string& reason) {
  // Few distinct reasons: the most recent ones are found first.
  for (size_t k = reasons_.size(); k-- > 0;) {
    if (reasons_[k] == reason) return static_cast<uint32_t>(k);
  }
  reasons_.push_back(reason);
  return static_cast<uint32_t>(reasons_.size() - 1);
}

void SpillStore::add(const Outcome& o) {
  if (count_ == 0 || o.index < last_index_) {
    if (run_starts_.size() == kMaxRuns) {
      throw common::InternalError("search: outcomes in more than " + std::to_string(kMaxRuns) + " runs");
    }
    run_starts_.push_back(count_);
  }
  last_index_ = o.index;
  const Evaluation& e = o.evaluation;
  Record r{};
  r.index = o.index;
  r.candidate = o.candidate;
  r.step_time_s = e.step_time_s, r.peak_reserved_bytes = e.peak_reserved_bytes, r.mfu = e.mfu;
  r.tokens_per_s = e.tokens_per_s, r.peak_alloc_bytes = e.peak_alloc_bytes, r.tasks = e.tasks;
  r.reason = reason_id(e.reason);
  r.status = e.status;
  if (std::fwrite(&r, sizeof r, 1, f_) != 1) {
    throw common::UsageError(file_.path() + ": cannot write the search's scratch file: " + std::strerror(errno));
  }
  ++count_;
}

void SpillStore::for_each(const std::function<void(const Outcome&)>& fn) {
  if (std::fflush(f_) != 0) {
    throw common::UsageError(file_.path() + ": cannot write the search's scratch file: " + std::strerror(errno));
  }
  std::vector<RunReader> runs;
  for (size_t k = 0; k < run_starts_.size(); ++k) {
    runs.emplace_back(file_.path(), fileno(f_), run_starts_[k],
                      k + 1 < run_starts_.size() ? run_starts_[k + 1] : count_);
  }
  Outcome o;
  for (size_t i = 0; i < count_; ++i) {
    RunReader* from = nullptr;  // the run whose next record has the lowest index
    for (RunReader& run : runs) {
      if (!run.done() && (!from || run.head().index < from->head().index)) from = &run;
    }
    const Record& r = from->head();
    if (r.index != i) throw common::InternalError("search: outcome " + std::to_string(i) + " was not stored once");
    o.index = i;
    o.candidate = r.candidate;
    Evaluation& e = o.evaluation;
    e.status = r.status, e.reason = reasons_.at(r.reason);
    e.step_time_s = r.step_time_s, e.peak_reserved_bytes = r.peak_reserved_bytes, e.mfu = r.mfu;
    e.tokens_per_s = r.tokens_per_s, e.peak_alloc_bytes = r.peak_alloc_bytes, e.tasks = r.tasks;
    from->pop();
    fn(o);
  }
}

}  // namespace simumax::search
