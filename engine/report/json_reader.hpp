// A JSON reader for the common case, several times faster than nlohmann's SAX parser on gigabyte traces: its
// lexer reads bytes straight from a buffer and drives the same SAX calls. It takes JSON at least as strictly as
// nlohmann (RFC 8259 numbers, strings with valid escapes and UTF-8, no trailing text) and gives up at anything
// else, so that the caller lets nlohmann decide (chrome_trace_reader.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <streambuf>
#include <string>

namespace simumax::report {

// The SAX calls, with nlohmann::json_sax's signatures: one handler serves both readers. A call returning false
// stops the reading.
class JsonSax {
 public:
  virtual ~JsonSax() = default;
  virtual bool null() = 0;
  virtual bool boolean(bool value) = 0;
  virtual bool number_integer(std::int64_t value) = 0;
  virtual bool number_unsigned(std::uint64_t value) = 0;
  virtual bool number_float(double value, const std::string& text) = 0;
  virtual bool string(std::string& value) = 0;  // the reader's buffer: the handler may take it (swap)
  virtual bool key(std::string& value) = 0;     // likewise
  virtual bool start_object(std::size_t elements) = 0;
  virtual bool end_object() = 0;
  virtual bool start_array(std::size_t elements) = 0;
  virtual bool end_array() = 0;
};

enum class FastParse {
  kDone,     // the whole text was read, every call accepted
  kStopped,  // a call returned false (the handler knows why)
  kUnsure,   // an error, a form this reader leaves to nlohmann (a byte-order mark, a number of over 63
             // characters), or the stream threw: read the text again with nlohmann. The calls made so far were
             // those nlohmann would have made.
};

// Reads the JSON text of `in` (from its current position to its end) into `sax`.
FastParse fast_json_parse(std::streambuf& in, JsonSax& sax);

}  // namespace simumax::report
