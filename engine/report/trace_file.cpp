#include "engine/report/trace_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "engine/common/error.hpp"

namespace simumax::report {

namespace {

// Only regular files: /dev/zero would stream without end and a FIFO would block until someone writes to it.
void check_regular_file(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) return;  // opening it says why
  if (std::filesystem::is_directory(status)) throw common::ConfigError(path, "", "is a folder, not a file");
  if (!std::filesystem::is_regular_file(status)) {
    throw common::ConfigError(path, "", "is not a regular file (a device, a FIFO or a socket)");
  }
}

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  TraceStreamBuf buf(path);
  std::string bytes;
  char piece[1 << 16];
  while (const auto n = buf.sgetn(piece, sizeof piece)) {
    bytes.append(piece, static_cast<size_t>(n));
    // A gzip bomb inflates without end: what is read whole is small by nature.
    if (bytes.size() > kMaxWholeFileBytes) {
      throw common::ConfigError(path, "", "is larger than 256 MiB (once inflated): not a file read whole");
    }
  }
  return bytes;
}

struct TraceStreamBuf::Inflater {
  z_stream zs{};
  bool ended = false;
};

TraceStreamBuf::TraceStreamBuf(const std::string& path) : path_(path), out_(1 << 20) {
  check_regular_file(path);
  in_.open(path, std::ios::binary);
  if (!in_) throw common::ConfigError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  char magic[2] = {0, 0};
  in_.read(magic, 2);
  const auto got = in_.gcount();
  in_.clear();
  in_.seekg(0);
  if (got == 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b) {
    gzip_ = std::make_unique<Inflater>();
    raw_.resize(1 << 20);  // compressed input: only a gzip file needs it
    if (inflateInit2(&gzip_->zs, 15 + 32) != Z_OK) {
      throw common::ConfigError(path, "", "corrupt gzip data: inflateInit2 failed");
    }
  }
  setg(out_.data(), out_.data(), out_.data());
}

TraceStreamBuf::~TraceStreamBuf() {
  if (gzip_) inflateEnd(&gzip_->zs);
}

TraceStreamBuf::int_type TraceStreamBuf::underflow() {
  if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
  delivered_ += static_cast<uint64_t>(egptr() - eback());
  size_t produced = 0;
  if (!gzip_) {
    in_.read(out_.data(), static_cast<std::streamsize>(out_.size()));
    produced = static_cast<size_t>(in_.gcount());
  } else {
    z_stream& zs = gzip_->zs;
    while (produced == 0 && !gzip_->ended) {
      if (zs.avail_in == 0) {
        in_.read(raw_.data(), static_cast<std::streamsize>(raw_.size()));
        zs.next_in = reinterpret_cast<Bytef*>(raw_.data());
        zs.avail_in = static_cast<uInt>(in_.gcount());
      }
      zs.next_out = reinterpret_cast<Bytef*>(out_.data());
      zs.avail_out = static_cast<uInt>(out_.size());
      const bool no_input = zs.avail_in == 0;
      const int rc = inflate(&zs, Z_NO_FLUSH);
      produced = out_.size() - zs.avail_out;
      if (rc == Z_STREAM_END) {
        // Concatenated gzip members (what `cat a.gz b.gz` makes) are one stream for gunzip: go on with the next.
        if (zs.avail_in > 0 || in_.peek() != std::char_traits<char>::eof()) inflateReset(&zs);
        else gzip_->ended = true;
      } else if (rc != Z_OK && !(rc == Z_BUF_ERROR && produced > 0)) {
        const std::string why = zs.msg ? zs.msg : (rc == Z_BUF_ERROR ? "truncated file" : "error " + std::to_string(rc));
        throw common::ConfigError(path_, "", "corrupt gzip data: " + why);
      } else if (no_input && produced == 0) {
        throw common::ConfigError(path_, "", "corrupt gzip data: truncated file");
      }
    }
  }
  setg(out_.data(), out_.data(), out_.data() + produced);
  return produced == 0 ? traits_type::eof() : traits_type::to_int_type(*gptr());
}

}  // namespace simumax::report
