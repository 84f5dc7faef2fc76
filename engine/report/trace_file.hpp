// Reading a trace or log file, inflating it when it is gzip-compressed (PyTorch writes .json.gz): whole, or as a
// stream (a 10 M-event trace is gigabytes of JSON, which must not sit in memory at once).
#pragma once

#include <cstdint>
#include <fstream>
#include <memory>
#include <streambuf>
#include <string>
#include <vector>

namespace simumax::report {

// What read_maybe_gzip reads at most: the files read whole (summary.json, kernel-class tables) are small.
inline constexpr uint64_t kMaxWholeFileBytes = uint64_t{256} << 20;

// The file's bytes; gzip data (recognised by its magic bytes, whatever the name) comes back inflated.
// Throws ConfigError(path, "", ...) when it is not a regular file, cannot be read ("cannot open file: <reason>"),
// inflates wrongly ("corrupt gzip data: <zlib's reason>") or is larger than kMaxWholeFileBytes once inflated.
std::string read_maybe_gzip(const std::string& path);

// The same bytes as a stream buffer read in 1 MiB pieces, in bounded memory whatever the file's size. The
// constructor throws ConfigError for a path that is a folder, a device, a FIFO or a socket, or cannot be opened;
// reading throws ConfigError(path, "", "corrupt gzip data: ...").
class TraceStreamBuf : public std::streambuf {
 public:
  explicit TraceStreamBuf(const std::string& path);
  ~TraceStreamBuf() override;
  TraceStreamBuf(const TraceStreamBuf&) = delete;
  TraceStreamBuf& operator=(const TraceStreamBuf&) = delete;
  // Bytes handed out so far (inflated bytes for gzip).
  uint64_t bytes_read() const { return delivered_ + static_cast<uint64_t>(gptr() - eback()); }

 protected:
  int_type underflow() override;

 private:
  struct Inflater;
  std::string path_;
  std::ifstream in_;
  std::unique_ptr<Inflater> gzip_;  // null for plain text
  std::vector<char> raw_, out_;
  uint64_t delivered_ = 0;  // bytes of the pieces before the current one
};

}  // namespace simumax::report
