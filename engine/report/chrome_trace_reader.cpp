#include "engine/report/chrome_trace_reader.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::report {

namespace {

using Json = nlohmann::json;

// A scalar JSON value as the handler saw it.
struct Scalar {
  bool is_number = false;
  double number = 0;
  int64_t integer = 0;
  bool integral = false;
  const std::string* text = nullptr;
};

std::optional<int64_t> parse_int(std::string_view s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// SAX handler: keeps a stack of open containers with the last key of each object, and reads the fields it
// needs from the event objects (depth known once the event list opens), their "args", and distributedInfo.
class Handler : public nlohmann::json_sax<Json> {
 public:
  explicit Handler(const std::function<void(const ChromeEvent&)>& on_event) : on_event_(on_event) {}

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t v) override { return integer(static_cast<int64_t>(v)); }
  bool number_unsigned(number_unsigned_t v) override { return integer(static_cast<int64_t>(v)); }
  bool number_float(number_float_t v, const string_t&) override {
    Scalar s;
    s.is_number = true;
    s.number = v;
    // Outside int64's range (1e300, nan) the cast is undefined behaviour: such a number is simply not integral.
    const bool in_range = v >= -0x1p63 && v < 0x1p63;
    s.integer = in_range ? static_cast<int64_t>(v) : 0;
    s.integral = in_range && static_cast<double>(s.integer) == v;
    return value(s);
  }
  bool string(string_t& v) override {
    Scalar s;
    s.text = &v;
    return value(s);
  }
  bool binary(binary_t&) override { return true; }
  bool key(string_t& k) override {
    stack_.back().key = k;
    return true;
  }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_object() override {
    if (in_events() && stack_.size() == events_depth_ + 1) {
      // A complete event is a span of time: without a finite start and a duration >= 0 no breakdown is right.
      if (event_.ph == "X" && !(has_ts_ && has_dur_ && std::isfinite(event_.ts_us) && std::isfinite(event_.dur_us) &&
                                event_.dur_us >= 0)) {
        bad_event_ = info_.events;
        return false;
      }
      ++info_.events;
      on_event_(event_);
    }
    stack_.pop_back();
    return true;
  }
  bool end_array() override {
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
  // The index of a complete event without a usable ts or dur (reading stopped there), or -1.
  int64_t bad_event() const { return bad_event_; }
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

  bool in_events() const { return events_depth_ > 0 && !events_done_; }

  bool open(bool object) {
    stack_.push_back(Frame{object, {}});
    const size_t n = stack_.size();
    if (!object && events_depth_ == 0) {
      // The event list: a bare top-level array, or the array under the root object's "traceEvents".
      if (n == 1 || (n == 2 && stack_[0].object && stack_[0].key == "traceEvents")) events_depth_ = n;
    }
    if (object && in_events() && n == events_depth_ + 1) {
      event_ = ChromeEvent{};
      has_ts_ = has_dur_ = false;
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
    if (in_events() && n == events_depth_ + 1) {
      event_field(stack_.back().key, s);
    } else if (in_events() && n == events_depth_ + 2 && stack_[n - 2].key == "args" && stack_.back().object) {
      arg_field(stack_.back().key, s);
    } else if (n == 2 && stack_[0].object && stack_[0].key == "distributedInfo" && s.is_number && s.integral) {
      if (stack_[1].key == "rank") info_.rank = s.integer;
      if (stack_[1].key == "world_size") info_.world_size = s.integer;
    }
    return true;
  }

  static void read_id(const Scalar& s, int64_t& id, bool& numeric) {
    if (s.is_number) {
      id = s.integer;
      numeric = s.integral;
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

  void event_field(const std::string& k, const Scalar& s) {
    if (k == "ph" && s.text) event_.ph = *s.text;
    else if (k == "cat" && s.text) event_.cat = *s.text;
    else if (k == "name" && s.text) event_.name = *s.text;
    else if (k == "pid") read_id(s, event_.pid, event_.pid_numeric);
    else if (k == "tid") read_id(s, event_.tid, event_.tid_numeric);
    else if (k == "ts") event_.ts_us = as_double(s), has_ts_ = true;
    else if (k == "dur") event_.dur_us = as_double(s), has_dur_ = true;
  }

  void arg_field(const std::string& k, const Scalar& s) {
    if (k == "correlation" && s.is_number) event_.correlation = s.integer;
    else if (k == "stream" && s.is_number) event_.stream = s.integer;
    else if (k == "name" && s.text) event_.arg_name = *s.text;
    else if (k == "pass" && s.text) event_.arg_pass = *s.text;
    else if (k == "flops" && s.is_number) event_.arg_flops = s.number;
    else if (k == "bytes" && s.is_number) event_.arg_bytes = s.number;
  }

  const std::function<void(const ChromeEvent&)>& on_event_;
  std::vector<Frame> stack_;
  size_t events_depth_ = 0;  // stack size while inside the event list (0: not met yet)
  bool events_done_ = false;
  ChromeEvent event_;
  bool has_ts_ = false, has_dur_ = false;
  int64_t bad_event_ = -1;
  ChromeTraceInfo info_;
  size_t error_byte_ = 0;
  std::string error_;
};

// nlohmann reports a byte offset; users need the line and column.
std::string position_of(const std::string& text, size_t byte) {
  const size_t end = std::min(byte == 0 ? 0 : byte - 1, text.size());
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < end; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(end - line_start + 1);
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

ChromeTraceInfo read_chrome_trace(const std::string& path, const std::function<void(const ChromeEvent&)>& on_event) {
  const std::string text = read_maybe_gzip(path);
  Handler handler(on_event);
  const bool ok = Json::sax_parse(text, &handler);
  if (handler.bad_event() >= 0) {
    throw common::ConfigError(path, handler.events_pointer() + "/" + std::to_string(handler.bad_event()),
                              "a complete event (ph \"X\") needs a finite \"ts\" and a \"dur\" of at least 0");
  }
  if (!ok) {
    if (text.empty()) throw common::ConfigError(path, "", "not a Chrome trace: the file is empty");
    throw common::ConfigError(path, "", "invalid JSON at " + position_of(text, handler.error_byte()) + ": " +
                                            explanation(handler.error()));
  }
  if (!handler.found_events()) {
    throw common::ConfigError(path, "", "not a Chrome trace: no \"traceEvents\" array (Trace Event Format)");
  }
  return handler.info();
}

}  // namespace simumax::report
