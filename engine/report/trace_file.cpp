#include "engine/report/trace_file.hpp"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/common/error.hpp"

namespace simumax::report {

namespace {

bool is_gzip(const std::string& bytes) {
  return bytes.size() >= 2 && static_cast<unsigned char>(bytes[0]) == 0x1f &&
         static_cast<unsigned char>(bytes[1]) == 0x8b;
}

std::string inflate_gzip(const std::string& path, const std::string& in) {
  z_stream zs{};
  // 15 + 32: the largest window, and let zlib detect the gzip (or zlib) header itself.
  if (inflateInit2(&zs, 15 + 32) != Z_OK) throw common::ConfigError(path, "", "corrupt gzip data: inflateInit2 failed");
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  std::string out;
  out.reserve(in.size() * 8);
  char buf[1 << 16];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    zs.next_out = reinterpret_cast<Bytef*>(buf);
    zs.avail_out = sizeof buf;
    rc = inflate(&zs, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      const std::string why = zs.msg ? zs.msg : (rc == Z_BUF_ERROR ? "truncated file" : "error " + std::to_string(rc));
      inflateEnd(&zs);
      throw common::ConfigError(path, "", "corrupt gzip data: " + why);
    }
    out.append(buf, sizeof buf - zs.avail_out);
    // Concatenated gzip members (what `cat a.gz b.gz` makes) are one stream for gunzip: go on with the next.
    if (rc == Z_STREAM_END && zs.avail_in > 0) {
      inflateReset(&zs);
      rc = Z_OK;
    }
  }
  inflateEnd(&zs);
  return out;
}

}  // namespace

std::string read_maybe_gzip(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw common::ConfigError(path, "", "is a folder, not a file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::ConfigError(path, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  std::string bytes = std::move(ss).str();
  if (in.bad()) throw common::ConfigError(path, "", "cannot read file");
  return is_gzip(bytes) ? inflate_gzip(path, bytes) : bytes;
}

}  // namespace simumax::report
