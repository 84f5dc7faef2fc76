// A text file written in large blocks by a background thread, so that formatting the next block overlaps the
// kernel's copy of the last one (a trace of every rank of a 512-GPU step is ~210 MB).
#pragma once

#include <condition_variable>
#include <cstdio>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "engine/report/json_text.hpp"

namespace simumax::report {

// The text goes to a temporary file beside `path` (temporary_name), renamed over `path` by close() once all of it
// is written and flushed: a reader never sees half a file, and a failure leaves any earlier file as it was (the
// temporary one is removed). A path that exists and is no regular file (a device, a FIFO, a symbolic link) is
// written in place. Throws common::UsageError naming `path` when it cannot be created or written (a bad
// output folder is the user's to fix): from the constructor, or from a later call once the writer has failed.
class TextFile {
 public:
  explicit TextFile(const std::string& path);
  ~TextFile();
  TextFile(const TextFile&) = delete;
  TextFile& operator=(const TextFile&) = delete;

  // Room for at least n bytes at the end of the text: write through the cursor, then commit() its end.
  char* reserve(size_t n) {
    if (cur_.size() >= kBlockBytes) hand_off_current(kKeepBytes);
    return cur_.reserve(n);
  }
  void commit(const char* end) { cur_.commit(end); }
  void append(std::string_view s) { commit(put(reserve(s.size()), s)); }
  // Appends a whole block without copying it: the writer thread writes `b` itself.
  void append_block(TextBuffer&& b);
  // An empty buffer to format the next block into (one the writer is done with, so its memory is reused).
  TextBuffer spare();
  // Takes back `tail` when the text so far ends with it (a separator after the last record). Text appended
  // with append() keeps its last 16 bytes until close(), so this works for a short tail after append().
  void drop_tail(std::string_view tail) { cur_.drop_tail(tail); }
  void close();  // writes the rest, waits for the writer and closes the file; reports write errors

 private:
  static constexpr size_t kBlockBytes = 8u << 20;
  static constexpr size_t kKeepBytes = 16;
  static constexpr size_t kMaxQueued = 4;  // blocks waiting for the writer; bounds the memory held
  void hand_off_current(size_t keep);
  void enqueue(TextBuffer&& b);
  void writer_loop();

  std::string path_;
  std::string tmp_;
  std::FILE* f_ = nullptr;
  TextBuffer cur_;                // small appends
  std::deque<TextBuffer> queue_;  // blocks for the writer, in file order
  bool writing_ = false;          // the writer holds a block outside the queue
  std::vector<TextBuffer> spare_;
  bool stop_ = false;
  std::string error_;             // the writer's failure, reported by the filling side
  std::mutex mutex_;
  std::condition_variable cv_;
  std::thread writer_;
};

// Where TextFile writes `path` until it is complete.
std::string temporary_name(const std::string& path);

// `text` as the whole of `path`, through a TextFile (written completely, or not at all).
void write_file_atomically(const std::string& path, std::string_view text);

// Formats `count` pieces with format(i, buffer) on two threads (the caller's and a helper) and appends them to
// `out` in order of i: a trace of every rank is formatted rank by rank, and the second core would otherwise idle.
// The helper stays at most a few pieces ahead of what was appended, which bounds the memory held. An exception
// from `format` or from `out` stops both threads and is rethrown here.
void append_in_order(TextFile& out, size_t count, const std::function<void(size_t, TextBuffer&)>& format);

}  // namespace simumax::report
