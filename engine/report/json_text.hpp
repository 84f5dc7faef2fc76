// Writing large JSON artifacts (traces, memory timelines) as text, without a DOM: a trace of every rank of a
// 512-GPU step has millions of events and must be written in less time than the simulation took.
#pragma once

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace simumax::report {

inline void append_int(std::string& out, int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Shortest text that reads back to the same double; null for NaN / infinity (JSON has neither).
inline void append_double(std::string& out, double v) {
  if (!std::isfinite(v)) {
    out += "null";
    return;
  }
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Nanoseconds as microseconds with exactly three decimals ("1234.567"), the trace's time unit. Integer
// nanoseconds keep ts + dur of one slice equal to the next slice's ts, so slices of a lane never overlap.
inline void append_us(std::string& out, int64_t ns) {
  if (ns < 0) {
    out += '-';
    ns = -ns;
  }
  append_int(out, ns / 1000);
  const int r = static_cast<int>(ns % 1000);
  const char frac[4] = {'.', static_cast<char>('0' + r / 100), static_cast<char>('0' + r / 10 % 10),
                        static_cast<char>('0' + r % 10)};
  out.append(frac, 4);
}

// Rounded to the nearest nanosecond (half away from zero, as llround, without its cost per call).
inline int64_t to_ns(double seconds) {
  const double ns = seconds * 1e9;
  return static_cast<int64_t>(ns < 0 ? ns - 0.5 : ns + 0.5);
}

// A JSON string literal, quotes included.
void append_quoted(std::string& out, std::string_view s);
std::string quoted(std::string_view s);

// Raw-cursor writers for the hottest loops (a trace event is ~20 pieces): the caller reserves room first.
template <size_t N>
inline char* put(char* p, const char (&literal)[N]) {
  std::memcpy(p, literal, N - 1);
  return p + N - 1;
}
inline char* put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}
// Two digits per step from a table: ~2x std::to_chars on the short numbers of a trace (ids, times).
inline char* put_uint(char* p, uint64_t v) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char tmp[20];
  char* end = tmp + sizeof tmp;
  char* q = end;
  while (v >= 100) {
    const auto i = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--q = kPairs[i + 1];
    *--q = kPairs[i];
  }
  if (v >= 10) {
    const auto i = static_cast<unsigned>(v) * 2;
    *--q = kPairs[i + 1];
    *--q = kPairs[i];
  } else {
    *--q = static_cast<char>('0' + v);
  }
  std::memcpy(p, q, static_cast<size_t>(end - q));
  return p + (end - q);
}
inline char* put_int(char* p, int64_t v) {
  if (v < 0) {
    *p++ = '-';
    return put_uint(p, ~static_cast<uint64_t>(v) + 1);
  }
  return put_uint(p, static_cast<uint64_t>(v));
}
inline char* put_us(char* p, int64_t ns) {
  if (ns < 0) {
    *p++ = '-';
    ns = -ns;
  }
  p = put_int(p, ns / 1000);
  const int r = static_cast<int>(ns % 1000);
  p[0] = '.';
  p[1] = static_cast<char>('0' + r / 100);
  p[2] = static_cast<char>('0' + r / 10 % 10);
  p[3] = static_cast<char>('0' + r % 10);
  return p + 4;
}

// Text built in memory through a raw cursor: reserve room, write with put*(), commit the end.
class TextBuffer {
 public:
  char* reserve(size_t n) {
    if (used_ + n > text_.size()) text_.resize(std::max(2 * text_.size(), used_ + n));
    return text_.data() + used_;
  }
  void commit(const char* end) { used_ = static_cast<size_t>(end - text_.data()); }
  void append(std::string_view s) { commit(put(reserve(s.size()), s)); }
  std::string_view view() const { return {text_.data(), used_}; }
  size_t size() const { return used_; }
  void clear() { used_ = 0; }
  void truncate(size_t n) { used_ = std::min(used_, n); }
  // Takes back `tail` when the text ends with it (a separator after the last record).
  void drop_tail(std::string_view tail) {
    if (view().ends_with(tail)) used_ -= tail.size();
  }

 private:
  std::string text_;
  size_t used_ = 0;
};

}  // namespace simumax::report
