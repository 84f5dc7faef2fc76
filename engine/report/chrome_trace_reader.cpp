#include "engine/report/chrome_trace_reader.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <istream>
#include <limits>
#include <memory>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/report/json_reader.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::json;
using namespace std::string_view_literals;

// A scalar JSON value as the handler saw it.
struct Scalar {
  bool is_number = false;
  double number = 0;
  int64_t integer = 0;
  bool integral = false;
  std::string* text = nullptr;  // the parser's buffer: a field may take its text (swap), it is cleared next
};

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// SAX handler: keeps a stack of open containers with the last key of each object, and reads the fields it
// needs from the event objects (depth known once the event list opens), their "args", and distributedInfo.
class Handler : public nlohmann::json_sax<Json>, public JsonSax {
 public:
  explicit Handler(const std::function<void(const ChromeEvent&)>& on_event) : on_event_(on_event) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return integer(static_cast<int64_t>(v)); }
  bool number_unsigned(number_unsigned_t v) override {
    if (v > static_cast<number_unsigned_t>(std::numeric_limits<int64_t>::max())) {
      return number_float(static_cast<double>(v), {});
    }
    return integer(static_cast<int64_t>(v));
  }
  bool number_float(number_float_t v, const string_t&) override {
    Scalar s;
    s.is_number = true;
    s.number = v;
    // Converting a double outside int64 is undefined: such a number is no integer here.
    constexpr double kLimit = 9.2e18;
    s.integral = std::abs(v) < kLimit && std::trunc(v) == v;
    s.integer = s.integral ? static_cast<int64_t>(v) : 0;
    return value(s);
  }
  bool string(string_t& v) override {
    Scalar s;
    s.text = &v;
    return value(s);
  }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override {
    stack_.back().key.swap(k);  // the parser's buffer: it is cleared before its next use
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override {
    if (in_dims()) event_.input_dims += '}';
    if (in_events() && stack_.size() == events_depth_ + 1) {
      // A complete event is a span of time: without a finite start and a duration in [0, 1e12] us (11.6 days;
      // 1e300 gave efficiencies of 1e-303 and steps of 1e297 ms) no breakdown is right.
      if (event_.ph == "X"sv && !(has_ts_ && has_dur_ && std::isfinite(event_.ts_us) && event_.dur_us >= 0 &&
                                event_.dur_us <= 1e12)) {
        return refuse("a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" in [0, 1e12] us");
      }
      if (!id_ok_) return refuse(id_problem_);
      event_.index = info_.events;
      ++info_.events;
      on_event_(event_);
    }
    stack_.pop_back();
    return true;
  }
  bool end_array() override {
    if (dims_depth_ > 0 && stack_.size() >= dims_depth_) {
      event_.input_dims += ']';
      if (stack_.size() == dims_depth_) dims_depth_ = 0;
    }
    if (in_events() && stack_.size() == events_depth_) events_done_ = true;
    stack_.pop_back();
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& e) override {
    error_byte_ = position;
    error_ = e.what();
    return false;
  }

  bool found_events() const { return events_depth_ > 0; }
  // The index of an event refused (reading stopped there), or -1, and why.
  int64_t bad_event() const { return bad_event_; }
  const std::string& bad_event_reason() const { return bad_reason_; }
  // A distributedInfo field outside an int ("" when none).
  const std::string& bad_info() const { return bad_info_; }
  // The JSON pointer of the event list: "/traceEvents" under the root object, "" for a bare array.
  std::string events_pointer() const { return events_depth_ == 2 ? "/traceEvents" : ""; }
  const ChromeTraceInfo& info() const { return info_; }
  size_t error_byte() const { return error_byte_; }
  const std::string& error() const { return error_; }

 private:
  struct Frame {
    bool object = false;
    std::string key;
  };

  // The open containers. A popped frame is kept for the next push, its key's buffer with it: a trace opens and
  // closes a few containers per event, millions of times.
  class FrameStack {
   public:
    size_t size() const { return n_; }
    Frame& back() { return frames_[n_ - 1]; }
    const Frame& operator[](size_t i) const { return frames_[i]; }
    void push(bool object) {
      if (n_ == frames_.size()) frames_.emplace_back();
      frames_[n_].object = object;
      frames_[n_].key.clear();
      ++n_;
    }
    void pop_back() { --n_; }

   private:
    std::vector<Frame> frames_;
    size_t n_ = 0;
  };

  bool in_events() const { return events_depth_ > 0 && !events_done_; }

  bool refuse(const std::string& why) {
    bad_event_ = info_.events;
    bad_reason_ = why;
    return false;
  }

  // Input Dims is a list of lists of integers (one per argument of the op); it is kept as compact text.
  bool in_dims() const { return dims_depth_ > 0 && stack_.size() >= dims_depth_; }
  void dims_separator() {
    std::string& d = event_.input_dims;
    if (!d.empty() && d.back() != '[') d += ',';
  }

  bool open(bool object) {
    if (!object && in_events() && stack_.size() == events_depth_ + 2 && stack_.back().key == "Input Dims"sv &&
        stack_[stack_.size() - 2].key == "args"sv) {
      dims_depth_ = stack_.size() + 1;
    }
    if (in_dims() || (dims_depth_ > 0 && stack_.size() + 1 == dims_depth_)) {
      dims_separator();
      event_.input_dims += object ? "{" : "[";
    }
    stack_.push(object);
    const size_t n = stack_.size();
    if (!object && events_depth_ == 0) {
      // The event list: a bare top-level array, or the array under the root object's "traceEvents".
      if (n == 1 || (n == 2 && stack_[0].object && stack_[0].key == "traceEvents"sv)) events_depth_ = n;
    }
    if (object && in_events() && n == events_depth_ + 1) {
      event_ = ChromeEvent{};
      has_ts_ = has_dur_ = false;
      id_ok_ = true;
    }
    return true;
  }

  bool integer(int64_t v) {
    Scalar s;
    s.is_number = true;
    s.number = static_cast<double>(v);
    s.integer = v;
    s.integral = true;
    return value(s);
  }

  bool value(const Scalar& s) {
    const size_t n = stack_.size();
    if (in_dims()) {
      dims_separator();
      event_.input_dims += s.is_number && s.integral ? std::to_string(s.integer) : "?";
      return true;
    }
    if (in_events() && n == events_depth_ + 3 && s.text && event_.input_type.empty() &&
        stack_[n - 2].key == "Input type"sv && stack_[n - 3].key == "args"sv && !stack_.back().object) {
      event_.input_type.swap(*s.text);
    }
    if (in_events() && n == events_depth_ + 1) {
      event_field(stack_.back().key, s);
    } else if (in_events() && n == events_depth_ + 2 && stack_[n - 2].key == "args"sv && stack_.back().object) {
      arg_field(stack_.back().key, s);
    } else if (n == 2 && stack_[0].object && stack_[0].key == "distributedInfo"sv && s.is_number) {
      const std::string_view k = stack_[1].key;
      if (k != "rank"sv && k != "world_size"sv) return true;
      if (!s.integral || !fits_int(s.number)) {
        bad_info_ = k;
        return false;
      }
      (k == "rank"sv ? info_.rank : info_.world_size) = s.integer;
    }
    return true;
  }

  static bool fits_int(double v) {
    return v >= std::numeric_limits<int32_t>::min() && v <= std::numeric_limits<int32_t>::max();
  }

  // A numeric id must be an integer: a pid (a process, or a rank in our traces) of 32 bits, a tid of 64 (Kineto
  // writes truncated 32-bit thread ids; other writers pthread ids).
  void read_id(const Scalar& s, int64_t& id, bool& numeric, bool pid) {
    if (s.is_number) {
      id = s.integer;
      numeric = s.integral;
      if (!s.integral || (pid && !fits_int(s.number))) {
        id_ok_ = false;
        id_problem_ = std::string(pid ? "\"pid\" must be an integer in the range of an int (a process id or rank)"
                                      : "\"tid\" must be an integer of at most 64 bits");
      }
    } else if (s.text) {
      const auto v = parse_int(*s.text);
      id = v.value_or(0);
      numeric = v.has_value();
    }
  }

  // Some writers quote numbers ("ts": "123.5"); the Trace Event Format allows it, so both forms are read. Anything
  // else (null, "abc") is not a number.
  static double as_double(const Scalar& s) {
    if (s.is_number) return s.number;
    if (!s.text || s.text->empty()) return std::nan("");
    char* end = nullptr;
    const double v = std::strtod(s.text->c_str(), &end);
    return *end == '\0' ? v : std::nan("");
  }

  void event_field(std::string_view k, const Scalar& s) {
    if (k == "ph"sv && s.text) event_.ph.swap(*s.text);
    else if (k == "cat"sv && s.text) event_.cat.swap(*s.text);
    else if (k == "name"sv && s.text) event_.name.swap(*s.text);
    else if (k == "pid"sv) read_id(s, event_.pid, event_.pid_numeric, true);
    else if (k == "tid"sv) read_id(s, event_.tid, event_.tid_numeric, false);
    else if (k == "ts"sv) event_.ts_us = as_double(s), has_ts_ = true;
    else if (k == "dur"sv) event_.dur_us = as_double(s), has_dur_ = true;
  }

  void arg_field(std::string_view k, const Scalar& s) {
    if (k == "correlation"sv && s.is_number) event_.correlation = s.integer;
    else if (k == "stream"sv && s.is_number) event_.stream = s.integer;
    else if (k == "name"sv && s.text) event_.arg_name.swap(*s.text);
    else if (k == "Collective name"sv && s.text) event_.collective.swap(*s.text);
    else if (k == "flops"sv && s.is_number) event_.flops = s.number;
    else if (k == "shape_key"sv && s.text) event_.shape_key.swap(*s.text);
    else if (k == "pass"sv && s.text) event_.arg_pass.swap(*s.text);
    else if (k == "kind"sv && s.text) event_.arg_kind.swap(*s.text);
    else if (k == "bytes"sv && s.is_number) event_.arg_bytes = s.number;
    else if (k == "In msg nelems"sv) event_.in_nelems = count_of(s);
    else if (k == "Out msg nelems"sv) event_.out_nelems = count_of(s);
    else if (k == "Group size"sv) event_.group_size = count_of(s);
    else if (k == "dtype"sv && s.text) event_.msg_dtype.swap(*s.text);
  }

  // A count (elements, ranks): a non-negative integer, else -1 (the field is then ignored, not refused).
  static int64_t count_of(const Scalar& s) { return s.is_number && s.integral && s.integer >= 0 ? s.integer : -1; }

  const std::function<void(const ChromeEvent&)>& on_event_;
  FrameStack stack_;
  size_t events_depth_ = 0;  // stack size while inside the event list (0: not met yet)
  bool events_done_ = false;
  ChromeEvent event_;
  bool has_ts_ = false, has_dur_ = false;
  size_t dims_depth_ = 0;  // stack size of the Input Dims array while inside it (0: not inside)
  bool id_ok_ = true;
  std::string id_problem_;
  int64_t bad_event_ = -1;
  std::string bad_reason_;
  std::string bad_info_;
  ChromeTraceInfo info_;
  size_t error_byte_ = 0;
  std::string error_;
};

// nlohmann reports a byte offset; users need the line and column. The text is streamed once more to find them.
std::string position_of(const std::string& path, size_t byte) {
  TraceStreamBuf buf(path);
  const size_t end = byte == 0 ? 0 : byte - 1;
  size_t line = 1, line_start = 0, i = 0;
  for (; i < end; ++i) {
    const auto c = buf.sbumpc();
    if (c == std::char_traits<char>::eof()) break;
    if (c == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(i - line_start + 1);
}

// Keeps nlohmann's explanation ("syntax error while parsing value - ...") without its own position prefix.
// Drops its quote of what it last read too: the file's text is not ours to echo.
std::string explanation(const std::string& what) {
  const size_t col_at = what.find("column ");
  const size_t colon = col_at == std::string::npos ? what.find(": ") : what.find(": ", col_at);
  std::string out = colon == std::string::npos ? what : what.substr(colon + 2);
  if (const size_t last = out.find("; last read:"); last != std::string::npos) out.erase(last);
  return out;
}

}  // namespace

namespace {

// The outcome of a parse (`ok`: the whole document was read and the handler accepted it), as the caller sees it.
ChromeTraceInfo finish(const std::string& path, const Handler& handler, bool ok, const TraceStreamBuf& buf) {
  if (handler.bad_event() >= 0) {
    throw common::ConfigError(path, handler.events_pointer() + "/" + std::to_string(handler.bad_event()),
                              handler.bad_event_reason());
  }
  if (!handler.bad_info().empty()) {
    throw common::ConfigError(path, "/distributedInfo/" + handler.bad_info(), "must be an integer in the range of an int");
  }
  if (!ok) {
    if (buf.bytes_read() == 0) throw common::ConfigError(path, "", "not a Chrome trace: the file is empty");
    throw common::ConfigError(path, "", "invalid JSON at " + position_of(path, handler.error_byte()) + ": " +
                                            explanation(handler.error()));
  }
  if (!handler.found_events()) {
    throw common::ConfigError(path, "", "not a Chrome trace: no \"traceEvents\" array (Trace Event Format)");
  }
  return handler.info();
}

}  // namespace

ChromeTraceInfo read_chrome_trace(const std::string& path, const std::function<void(const ChromeEvent&)>& on_event) {
  int64_t delivered = 0;
  {
    TraceStreamBuf buf(path);
    Handler handler(on_event);
    const FastParse r = fast_json_parse(buf, handler);
    if (r != FastParse::kUnsure) return finish(path, handler, r == FastParse::kDone, buf);
    delivered = handler.info().events;
  }
  // Something the fast reader does not take (most often an error): nlohmann reads the file again, from the start,
  // and decides; the events already delivered are not delivered twice.
  return read_chrome_trace_with_nlohmann(path, [&](const ChromeEvent& e) {
    if (e.index >= delivered) on_event(e);
  });
}

ChromeTraceInfo read_chrome_trace_with_nlohmann(const std::string& path,
                                                const std::function<void(const ChromeEvent&)>& on_event) {
  TraceStreamBuf buf(path);
  std::istream in(&buf);
  Handler handler(on_event);
  const bool ok = Json::sax_parse(in, &handler);
  return finish(path, handler, ok, buf);
}

}  // namespace simumax::report
