#include "engine/report/json_reader.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <memory>
#include <vector>

#include "engine/common/error.hpp"

namespace simumax::report {

namespace {

using Result = FastParse;

class FastReader {
 public:
  FastReader(std::streambuf& in, JsonSax& handler) : in_(in), h_(handler), buf_(new char[kBufferBytes]) {}

  Result run() {
    int c = skip_ws();
    if (c < 0 || c == 0xEF) return Result::kUnsure;  // empty, or a byte-order mark (nlohmann skips one)
    std::vector<char> open;  // 'o' / 'a' for each open container
    bool expect_value = true;
    for (;;) {
      if (expect_value) {
        c = skip_ws();
        if (c == '{') {
          ++pos_;
          if (!h_.start_object(static_cast<std::size_t>(-1))) return Result::kStopped;
          c = skip_ws();
          if (c == '}') {
            ++pos_;
            if (!h_.end_object()) return Result::kStopped;
            expect_value = false;
          } else {
            open.push_back('o');
            const Result r = member_key();
            if (r != Result::kDone) return r;
            continue;
          }
        } else if (c == '[') {
          ++pos_;
          if (!h_.start_array(static_cast<std::size_t>(-1))) return Result::kStopped;
          c = skip_ws();
          if (c == ']') {
            ++pos_;
            if (!h_.end_array()) return Result::kStopped;
            expect_value = false;
          } else {
            open.push_back('a');
            continue;
          }
        } else {
          const Result r = scalar(c);
          if (r != Result::kDone) return r;
          expect_value = false;
        }
      }
      // After a value: the end of the document, a separator or the end of the innermost container.
      c = skip_ws();
      if (open.empty()) return c < 0 && !failed_ ? Result::kDone : Result::kUnsure;
      if (c == ',') {
        ++pos_;
        if (open.back() == 'o') {
          const Result r = member_key();
          if (r != Result::kDone) return r;
        }
        expect_value = true;
      } else if (c == (open.back() == 'o' ? '}' : ']')) {
        ++pos_;
        if (!(open.back() == 'o' ? h_.end_object() : h_.end_array())) return Result::kStopped;
        open.pop_back();
      } else {
        return Result::kUnsure;
      }
    }
  }

 private:
  // Makes a byte available at pos_ (refilling the buffer); false at the end of the input or a read error.
  bool more() {
    if (pos_ < end_) return true;
    if (failed_) return false;
    try {
      end_ = static_cast<size_t>(in_.sgetn(buf_.get(), static_cast<std::streamsize>(kBufferBytes)));
    } catch (const common::ConfigError&) {  // corrupt gzip: nlohmann's reading says what comes first
      failed_ = true;
      end_ = 0;
    }
    pos_ = 0;
    return end_ > 0;
  }
  int peek() { return more() ? static_cast<unsigned char>(buf_[pos_]) : -1; }
  int get() { return more() ? static_cast<unsigned char>(buf_[pos_++]) : -1; }

  int skip_ws() {
    for (;;) {
      while (pos_ < end_) {
        const char c = buf_[pos_];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') return static_cast<unsigned char>(c);
        ++pos_;
      }
      if (!more()) return -1;
    }
  }

  // A key, its colon, and the handler told; the value follows.
  Result member_key() {
    if (skip_ws() != '"') return Result::kUnsure;
    ++pos_;
    if (!string_body()) return Result::kUnsure;
    if (skip_ws() != ':') return Result::kUnsure;
    ++pos_;
    return h_.key(text_) ? Result::kDone : Result::kStopped;
  }

  Result scalar(int c) {
    if (c == '"') {
      ++pos_;
      if (!string_body()) return Result::kUnsure;
      return h_.string(text_) ? Result::kDone : Result::kStopped;
    }
    if (c == 't' || c == 'f' || c == 'n') {
      const char* word = c == 't' ? "true" : c == 'f' ? "false" : "null";
      for (const char* w = word; *w; ++w) {
        if (get() != static_cast<unsigned char>(*w)) return Result::kUnsure;
      }
      const bool ok = c == 'n' ? h_.null() : h_.boolean(c == 't');
      return ok ? Result::kDone : Result::kStopped;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return number();
    return Result::kUnsure;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, as nlohmann types it: an integer that fits int64 (or, not
  // negative, uint64) is one, anything else a finite double.
  Result number() {
    char text[64];
    size_t n = 0;
    bool integral = true;
    const auto take = [&](int c) {
      if (n + 1 >= sizeof text) return false;  // a number this long: let nlohmann read it
      text[n++] = static_cast<char>(c);
      ++pos_;
      return true;
    };
    const auto digits = [&](bool at_least_one) {
      int c = peek();
      if (at_least_one && !(c >= '0' && c <= '9')) return false;
      while (c >= '0' && c <= '9') {
        if (!take(c)) return false;
        c = peek();
      }
      return true;
    };
    int c = peek();
    if (c == '-' && !take(c)) return Result::kUnsure;
    c = peek();
    if (c == '0') {
      if (!take(c)) return Result::kUnsure;
    } else if (!digits(true)) {
      return Result::kUnsure;
    }
    c = peek();
    if (c == '.') {
      integral = false;
      if (!take(c) || !digits(true)) return Result::kUnsure;
      c = peek();
    }
    if (c == 'e' || c == 'E') {
      integral = false;
      if (!take(c)) return Result::kUnsure;
      c = peek();
      if ((c == '+' || c == '-') && !take(c)) return Result::kUnsure;
      if (!digits(true)) return Result::kUnsure;
    }
    if (failed_) return Result::kUnsure;
    const char* end = text + n;
    if (integral) {
      int64_t v = 0;
      if (const auto r = std::from_chars(text, end, v); r.ec == std::errc() && r.ptr == end) {
        return h_.number_integer(v) ? Result::kDone : Result::kStopped;
      }
      uint64_t u = 0;
      if (const auto r = std::from_chars(text, end, u); text[0] != '-' && r.ec == std::errc() && r.ptr == end) {
        return h_.number_unsigned(u) ? Result::kDone : Result::kStopped;
      }
    }
    double d = 0;
    const auto r = std::from_chars(text, end, d);
    if (r.ec != std::errc() || r.ptr != end || !std::isfinite(d)) return Result::kUnsure;
    return h_.number_float(d, raw_) ? Result::kDone : Result::kStopped;
  }

  // The rest of a string after its opening quote, into text_: escapes decoded, UTF-8 checked (RFC 3629), no raw
  // control character. False for anything nlohmann would refuse.
  bool string_body() {
    text_.clear();
    for (;;) {
      // The plain run: printable ASCII up to a quote, a backslash, a control or non-ASCII byte.
      size_t i = pos_;
      while (i < end_ && kPlain[static_cast<unsigned char>(buf_[i])]) ++i;
      text_.append(buf_.get() + pos_, i - pos_);
      pos_ = i;
      const int c = get();
      if (c < 0 || c < 0x20) return false;
      if (c == '"') return true;
      if (c == '\\') {
        if (!escape()) return false;
      } else if (c >= 0x80) {
        if (!utf8(c)) return false;
      } else {
        text_ += static_cast<char>(c);
      }
    }
  }

  bool utf8(int lead) {
    int need = 0, lo = 0x80, hi = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) need = 1;
    else if (lead == 0xE0) need = 2, lo = 0xA0;
    else if ((lead >= 0xE1 && lead <= 0xEC) || lead == 0xEE || lead == 0xEF) need = 2;
    else if (lead == 0xED) need = 2, hi = 0x9F;
    else if (lead == 0xF0) need = 3, lo = 0x90;
    else if (lead >= 0xF1 && lead <= 0xF3) need = 3;
    else if (lead == 0xF4) need = 3, hi = 0x8F;
    else return false;
    text_ += static_cast<char>(lead);
    for (int k = 0; k < need; ++k) {
      const int b = get();
      if (b < (k == 0 ? lo : 0x80) || b > (k == 0 ? hi : 0xBF)) return false;
      text_ += static_cast<char>(b);
    }
    return true;
  }

  int hex4() {
    int v = 0;
    for (int k = 0; k < 4; ++k) {
      const int c = get();
      int d;
      if (c >= '0' && c <= '9') d = c - '0';
      else if (c >= 'a' && c <= 'f') d = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') d = c - 'A' + 10;
      else return -1;
      v = v * 16 + d;
    }
    return v;
  }

  bool escape() {
    const int c = get();
    switch (c) {
      case '"': text_ += '"'; return true;
      case '\\': text_ += '\\'; return true;
      case '/': text_ += '/'; return true;
      case 'b': text_ += '\b'; return true;
      case 'f': text_ += '\f'; return true;
      case 'n': text_ += '\n'; return true;
      case 'r': text_ += '\r'; return true;
      case 't': text_ += '\t'; return true;
      case 'u': break;
      default: return false;
    }
    int cp = hex4();
    if (cp < 0 || (cp >= 0xDC00 && cp <= 0xDFFF)) return false;
    if (cp >= 0xD800 && cp <= 0xDBFF) {  // a high surrogate: its low one must follow
      if (get() != '\\' || get() != 'u') return false;
      const int low = hex4();
      if (low < 0xDC00 || low > 0xDFFF) return false;
      cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
    }
    if (cp < 0x80) {
      text_ += static_cast<char>(cp);
    } else if (cp < 0x800) {
      text_ += static_cast<char>(0xC0 | (cp >> 6));
      text_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      text_ += static_cast<char>(0xE0 | (cp >> 12));
      text_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      text_ += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      text_ += static_cast<char>(0xF0 | (cp >> 18));
      text_ += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      text_ += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      text_ += static_cast<char>(0x80 | (cp & 0x3F));
    }
    return true;
  }

  // Bytes a string holds as they are: printable ASCII but the quote and the backslash.
  static constexpr std::array<bool, 256> kPlain = [] {
    std::array<bool, 256> t{};
    for (int b = 0x20; b < 0x80; ++b) t[static_cast<size_t>(b)] = b != '"' && b != '\\';
    return t;
  }();

  static constexpr size_t kBufferBytes = size_t{1} << 20;

  std::streambuf& in_;
  JsonSax& h_;
  std::unique_ptr<char[]> buf_;  // not zeroed: only the bytes read are looked at
  size_t pos_ = 0, end_ = 0;
  bool failed_ = false;  // the stream threw (corrupt gzip)
  std::string text_;     // the last string or key
  std::string raw_;      // number_float's raw text (the handler does not read it)
};

}  // namespace

FastParse fast_json_parse(std::streambuf& in, JsonSax& sax) { return FastReader(in, sax).run(); }

}  // namespace simumax::report
