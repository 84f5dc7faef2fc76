#include "engine/report/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <exception>

#include "engine/common/error.hpp"

namespace simumax::report {

TextFile::TextFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
  if (!f_) throw common::UsageError("cannot write " + path + ": " + std::strerror(errno));
  writer_ = std::thread([this] { writer_loop(); });
}

TextFile::~TextFile() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (f_) std::fclose(f_);
}

void TextFile::writer_loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return !queue_.empty() || stop_; });
    if (queue_.empty()) return;
    TextBuffer b = std::move(queue_.front());
    queue_.pop_front();
    writing_ = true;
    const bool failed = !error_.empty();  // after a failed write, the rest is dropped
    lock.unlock();
    const std::string_view text = b.view();
    const bool ok = failed || std::fwrite(text.data(), 1, text.size(), f_) == text.size();
    const std::string why = ok ? "" : std::strerror(errno);
    lock.lock();
    if (!ok && error_.empty()) error_ = why;
    writing_ = false;
    b.clear();
    spare_.push_back(std::move(b));
    cv_.notify_all();
  }
}

void TextFile::enqueue(TextBuffer&& b) {
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return queue_.size() < kMaxQueued || !error_.empty(); });
    if (!error_.empty()) throw common::UsageError("cannot write " + path_ + ": " + error_);
    queue_.push_back(std::move(b));
  }
  cv_.notify_all();
}

TextBuffer TextFile::spare() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (spare_.empty()) return TextBuffer();
  TextBuffer b = std::move(spare_.back());
  spare_.pop_back();
  return b;
}

void TextFile::hand_off_current(size_t keep) {
  if (cur_.size() <= keep) return;
  TextBuffer next = spare();
  next.append(cur_.view().substr(cur_.size() - keep));
  cur_.truncate(cur_.size() - keep);
  enqueue(std::move(cur_));
  cur_ = std::move(next);
}

void TextFile::append_block(TextBuffer&& b) {
  hand_off_current(0);
  enqueue(std::move(b));
}

void TextFile::close() {
  hand_off_current(0);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return (queue_.empty() && !writing_) || !error_.empty(); });
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (!error_.empty()) throw common::UsageError("cannot write " + path_ + ": " + error_);
  if (rc != 0) throw common::UsageError("cannot write " + path_ + ": " + std::strerror(errno));
}

namespace {

// What the two threads of append_in_order share, under `mutex`.
struct Ordered {
  static constexpr size_t kWindow = 8;  // pieces the helper may format beyond the last one appended
  explicit Ordered(size_t n) : done(n), ready(n, 0), count(n) {}
  std::vector<TextBuffer> done;
  std::vector<char> ready;
  size_t count, next = 0, appended = 0;
  std::exception_ptr failed;
  std::mutex mutex;
  std::condition_variable cv;

  void run(size_t i, TextFile& out, const std::function<void(size_t, TextBuffer&)>& format) {
    TextBuffer b = out.spare();
    format(i, b);
    {
      std::lock_guard<std::mutex> lock(mutex);
      done[i] = std::move(b);
      ready[i] = 1;
    }
    cv.notify_all();
  }
  void fail(std::exception_ptr e) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!failed) failed = e;
      next = count;
    }
    cv.notify_all();
  }
};

void helper_loop(Ordered& o, TextFile& out, const std::function<void(size_t, TextBuffer&)>& format) {
  try {
    while (true) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(o.mutex);
        o.cv.wait(lock, [&] { return o.next >= o.count || o.next < o.appended + Ordered::kWindow; });
        if (o.next >= o.count) return;
        i = o.next++;
      }
      o.run(i, out, format);
    }
  } catch (...) {
    o.fail(std::current_exception());
  }
}

// The caller's side: append piece w once it is ready, formatting pieces itself while it is not.
void append_piece(TextFile& out, Ordered& o, size_t w, const std::function<void(size_t, TextBuffer&)>& format) {
  while (true) {
    size_t mine = o.count;
    {
      std::unique_lock<std::mutex> lock(o.mutex);
      if (o.failed) std::rethrow_exception(o.failed);
      if (o.ready[w]) break;
      if (o.next < o.count) {
        mine = o.next++;
      } else {
        o.cv.wait(lock);
      }
    }
    if (mine < o.count) o.run(mine, out, format);
  }
  out.append_block(std::move(o.done[w]));  // piece w is the caller's alone once ready
  {
    std::lock_guard<std::mutex> lock(o.mutex);
    o.appended = w + 1;
  }
  o.cv.notify_all();
}

}  // namespace

void append_in_order(TextFile& out, size_t count, const std::function<void(size_t, TextBuffer&)>& format) {
  Ordered o(count);
  std::thread helper([&] { helper_loop(o, out, format); });
  try {
    for (size_t w = 0; w < count; ++w) append_piece(out, o, w, format);
  } catch (...) {
    o.fail(std::current_exception());
    helper.join();
    throw;
  }
  helper.join();
}

}  // namespace simumax::report
