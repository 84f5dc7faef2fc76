#include "engine/search/outcome_store.hpp"

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"

namespace simumax::search {

void MemoryStore::add(const Outcome& o) {
  all_.push_back(o);
  all_.back().evaluation.detail.clear();
  all_.back().sim = SimCheck{};
}

void MemoryStore::for_each(const std::function<void(const Outcome&)>& fn) {
  for (const Outcome& o : all_) fn(o);
}

namespace {

// One outcome on disk.
struct Record {
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
  if (o.index != count_) throw common::InternalError("search: outcome " + std::to_string(o.index) + " out of order");
  const Evaluation& e = o.evaluation;
  Record r{};
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
  if (std::fflush(f_) != 0 || std::fseek(f_, 0, SEEK_SET) != 0) {
    throw common::UsageError(file_.path() + ": cannot write the search's scratch file: " + std::strerror(errno));
  }
  Outcome o;
  Record r{};
  for (size_t i = 0; i < count_; ++i) {
    if (std::fread(&r, sizeof r, 1, f_) != 1) {
      throw common::UsageError(file_.path() + ": the search's scratch file ends early (record " + std::to_string(i) + ")");
    }
    o.index = i;
    o.candidate = r.candidate;
    Evaluation& e = o.evaluation;
    e.status = r.status, e.reason = reasons_.at(r.reason);
    e.step_time_s = r.step_time_s, e.peak_reserved_bytes = r.peak_reserved_bytes, e.mfu = r.mfu;
    e.tokens_per_s = r.tokens_per_s, e.peak_alloc_bytes = r.peak_alloc_bytes, e.tasks = r.tasks;
    fn(o);
  }
  // Appending after a read needs a positioning call in between (C17 7.21.5.3).
  std::fseek(f_, 0, SEEK_END);
}

}  // namespace simumax::search
