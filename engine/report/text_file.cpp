#include "engine/report/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <exception>

#include "engine/common/error.hpp"

namespace simumax::report {

TextFile::TextFile(const std::string& path) : path_(path), f_(std::fopen(path.c_str(), "wb")) {
  if (!f_) throw common::UsageError("cannot write " + path + ": " + std::strerror(errno));
  buf_.resize(2 * kBlockBytes);
  back_.resize(2 * kBlockBytes);
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
    cv_.wait(lock, [&] { return pending_ || stop_; });
    if (!pending_) return;
    lock.unlock();
    const bool ok = std::fwrite(back_.data(), 1, back_used_, f_) == back_used_;
    const std::string why = ok ? "" : std::strerror(errno);
    lock.lock();
    if (!ok && error_.empty()) error_ = why;
    pending_ = false;
    cv_.notify_all();
  }
}

void TextFile::wait_idle(std::unique_lock<std::mutex>& lock) {
  cv_.wait(lock, [&] { return !pending_; });
  if (!error_.empty()) throw common::UsageError("cannot write " + path_ + ": " + error_);
}

void TextFile::hand_off(size_t keep) {
  if (used_ <= keep) return;
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wait_idle(lock);
    std::swap(buf_, back_);
    back_used_ = used_ - keep;
    if (buf_.size() < keep) buf_.resize(2 * kBlockBytes);
    std::memcpy(buf_.data(), back_.data() + back_used_, keep);
    used_ = keep;
    pending_ = true;
  }
  cv_.notify_all();
}

void TextFile::make_room(size_t n) {
  if (used_ >= kBlockBytes) hand_off(kKeepBytes);
  if (used_ + n > buf_.size()) buf_.resize(used_ + n + kBlockBytes);
}

void TextFile::drop_tail(std::string_view tail) {
  if (used_ >= tail.size() && std::string_view(buf_.data() + used_ - tail.size(), tail.size()) == tail) {
    used_ -= tail.size();
  }
}

void TextFile::close() {
  hand_off(0);
  {
    std::unique_lock<std::mutex> lock(mutex_);
    wait_idle(lock);
    stop_ = true;
  }
  cv_.notify_all();
  writer_.join();
  const int rc = std::fclose(f_);
  f_ = nullptr;
  if (rc != 0) throw common::UsageError("cannot write " + path_ + ": " + std::strerror(errno));
}

namespace {

// What the two threads of append_in_order share, under `mutex`.
struct Ordered {
  static constexpr size_t kWindow = 8;  // pieces the helper may format beyond the last one appended
  explicit Ordered(size_t n) : done(n), ready(n, 0), count(n) {}
  std::vector<TextBuffer> done;
  std::vector<char> ready;
  std::vector<TextBuffer> pool;  // appended buffers, reused so their memory is touched only once
  size_t count, next = 0, appended = 0;
  std::exception_ptr failed;
  std::mutex mutex;
  std::condition_variable cv;

  void run(size_t i, const std::function<void(size_t, TextBuffer&)>& format) {
    TextBuffer b;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!pool.empty()) {
        b = std::move(pool.back());
        pool.pop_back();
      }
    }
    b.clear();
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

void helper_loop(Ordered& o, const std::function<void(size_t, TextBuffer&)>& format) {
  try {
    while (true) {
      size_t i = 0;
      {
        std::unique_lock<std::mutex> lock(o.mutex);
        o.cv.wait(lock, [&] { return o.next >= o.count || o.next < o.appended + Ordered::kWindow; });
        if (o.next >= o.count) return;
        i = o.next++;
      }
      o.run(i, format);
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
    if (mine < o.count) o.run(mine, format);
  }
  out.append(o.done[w].view());  // piece w is the caller's alone once ready
  {
    std::lock_guard<std::mutex> lock(o.mutex);
    o.pool.push_back(std::move(o.done[w]));
    o.appended = w + 1;
  }
  o.cv.notify_all();
}

}  // namespace

void append_in_order(TextFile& out, size_t count, const std::function<void(size_t, TextBuffer&)>& format) {
  Ordered o(count);
  std::thread helper([&] { helper_loop(o, format); });
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
