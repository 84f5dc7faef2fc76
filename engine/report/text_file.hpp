// A text file written in large blocks by a background thread, so that formatting the next block overlaps the
// kernel's copy of the last one (a trace of every rank of a 512-GPU step is ~250 MB).
#pragma once

#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/report/json_text.hpp"

namespace simumax::report {

// Throws common::UsageError when the file cannot be created or written (a bad output folder is the user's
// to fix): from the constructor, or from reserve() / close() once the writer thread has failed.
class TextFile {
 public:
  explicit TextFile(const std::string& path);
  ~TextFile();
  TextFile(const TextFile&) = delete;
  TextFile& operator=(const TextFile&) = delete;

  // Room for at least n bytes at the end of the text: write through the cursor, then commit() its end.
  char* reserve(size_t n) {
    if (used_ + n > buf_.size()) make_room(n);
    return buf_.data() + used_;
  }
  void commit(const char* end) { used_ = static_cast<size_t>(end - buf_.data()); }
  void append(std::string_view s) { commit(put(reserve(s.size()), s)); }
  // Takes back `tail` when the text so far ends with it (a separator after the last record). The last bytes
  // are only handed to the writer by close(), so this works for any tail of up to 16 bytes.
  void drop_tail(std::string_view tail);
  void close();  // writes the rest, waits for the writer and closes the file; reports write errors

 private:
  static constexpr size_t kBlockBytes = 8u << 20;
  static constexpr size_t kKeepBytes = 16;
  void make_room(size_t n);
  void hand_off(size_t keep);  // gives all but the last `keep` bytes to the writer thread
  void wait_idle(std::unique_lock<std::mutex>& lock);
  void writer_loop();

  std::string path_;
  std::FILE* f_ = nullptr;
  std::vector<char> buf_;   // being filled
  size_t used_ = 0;
  std::vector<char> back_;  // being written by the thread
  size_t back_used_ = 0;
  bool pending_ = false;    // back_ holds a block not yet written
  bool stop_ = false;
  std::string error_;       // the writer's failure, reported by the filling side
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread writer_;
};

// Formats `count` pieces with format(i, buffer) on two threads (the caller's and a helper) and appends them to
// `out` in order of i: a trace of every rank is formatted rank by rank, and the second core would otherwise idle.
// The helper stays at most a few pieces ahead of what was appended, which bounds the memory held. An exception
// from `format` or from `out` stops both threads and is rethrown here.
void append_in_order(TextFile& out, size_t count, const std::function<void(size_t, TextBuffer&)>& format);

}  // namespace simumax::report
