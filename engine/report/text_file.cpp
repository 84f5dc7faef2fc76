#include "engine/report/text_file.hpp"

#include <cerrno>
#include <cstdio>
#include <filesystem>
#include <cstring>
#include <exception>

#include "engine/common/error.hpp"
#include "engine/common/interrupt.hpp"

namespace simumax::report {

namespace {

// A folder where `path` would be: the file itself cannot be written (UsageError naming it).
void check_not_a_folder(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw common::UsageError("cannot write " + path + ": it is a folder");
}

// Renames the finished temporary file over `path`; a failure removes it and names `path`.
void rename_into_place(const std::string& tmp, const std::string& path) {
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw common::UsageError("cannot write " + path + ": " + ec.message());
  }
}

}  // namespace

std::string temporary_name(const std::string& path) { return path + ".tmp"; }

TextFile::TextFile(const std::string& path) : path_(path), tmp_(temporary_name(path)) {
  check_not_a_folder(path);
  // A device, FIFO or symbolic link is written in place: renaming over it would replace it, not write to it.
  std::error_code ec;
  const auto st = std::filesystem::symlink_status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) tmp_ = path;
  f_ = std::fopen(tmp_.c_str(), "wb");
  if (!f_) throw common::UsageError("cannot write " + path + ": " + std::strerror(errno));
  if (tmp_ != path_) common::register_temporary(tmp_.c_str());
  writer_ = std::thread([this] { writer_loop(); });
}

TextFile::~TextFile() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (writer_.joinable()) writer_.join();
  if (f_) {  // not closed: an error stopped the writing, so the unfinished file goes
    std::fclose(f_);
    if (tmp_ != path_) std::remove(tmp_.c_str());
  }
  common::unregister_temporary(tmp_.c_str());
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
  const bool flushed = std::fflush(f_) == 0;
  const int saved = errno;
  const int rc = std::fclose(f_);
  f_ = nullptr;
  std::string failure = !error_.empty() ? error_ : !flushed ? std::strerror(saved) : rc != 0 ? std::strerror(errno) : "";
  if (!failure.empty()) {
    if (tmp_ != path_) std::remove(tmp_.c_str());
    throw common::UsageError("cannot write " + path_ + ": " + failure);
  }
  if (tmp_ != path_) rename_into_place(tmp_, path_);
}

void write_file_atomically(const std::string& path, std::string_view text) {
  TextFile f(path);
  f.append(text);
  f.close();
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
