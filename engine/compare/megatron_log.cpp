#include "engine/compare/megatron_log.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "engine/common/error.hpp"
#include "engine/report/trace_file.hpp"

namespace simumax::compare {

namespace {

// Megatron's own strings (megatron/training/training.py training_log, utils report_memory).
constexpr std::string_view kElapsed = "elapsed time per iteration (ms):";
constexpr std::string_view kMemory = "memory (MB)";
constexpr std::string_view kRank = "[Rank ";

// The figure after a record's words: nullopt when there is none (the line ends, or the next field's '|'); else a
// decimal number as Python prints one ("1234.5", "1.2e+03", "-5"), NaN for anything else. strtod alone also
// reads "0x1p10" (as 1024), "nan" and "inf", which no Megatron log holds: checked() refuses the NaN.
std::optional<double> number_at(const std::string& line, size_t pos) {
  while (pos < line.size() && line[pos] == ' ') ++pos;
  if (pos >= line.size() || line[pos] == '|' || line[pos] == '\r') return std::nullopt;
  const auto digits = [&line](size_t p) {
    while (p < line.size() && std::isdigit(static_cast<unsigned char>(line[p]))) ++p;
    return p;
  };
  size_t end = line[pos] == '-' ? pos + 1 : pos;
  const size_t mantissa = end;
  end = digits(end);
  const bool whole = end > mantissa;
  if (end < line.size() && line[end] == '.') end = digits(end + 1);
  if (!whole && end <= mantissa + 1) return std::nan("");
  if (end < line.size() && (line[end] == 'e' || line[end] == 'E')) {
    size_t p = end + 1;
    if (p < line.size() && (line[p] == '+' || line[p] == '-')) ++p;
    if (const size_t e = digits(p); e > p) end = e;
  }
  if (end < line.size() && std::isalnum(static_cast<unsigned char>(line[end]))) return std::nan("");
  return std::strtod(line.substr(pos, end - pos).c_str(), nullptr);
}

std::optional<double> field(const std::string& line, size_t from, size_t to, std::string_view name) {
  const size_t at = line.find(name, from);
  if (at == std::string::npos || at >= to) return std::nullopt;
  return number_at(line, at + name.size());
}

// The iteration number of the record whose elapsed time is at `elapsed`: the nearest "iteration <N>/" before it
// and after `from` (the previous record), so a line of many records is read in linear time.
int64_t iteration_before(const std::string& line, size_t from, size_t elapsed) {
  size_t at = elapsed;
  while (at > from && (at = line.rfind("iteration", at - 1)) != std::string::npos && at >= from) {
    size_t p = at + std::strlen("iteration");
    while (p < line.size() && line[p] == ' ') ++p;
    const size_t digits = p;
    while (p < line.size() && std::isdigit(static_cast<unsigned char>(line[p]))) ++p;
    const size_t digits_end = p;
    while (p < line.size() && line[p] == ' ') ++p;
    if (digits_end > digits && p < line.size() && line[p] == '/') {
      return std::strtoll(line.substr(digits, digits_end - digits).c_str(), nullptr, 10);
    }
  }
  return -1;
}

// Where the log is read, for messages.
struct Place {
  const std::string& label;
  int64_t line = 0;
};

// A figure the log prints is within what a run can print: a time in [0.001, 1e9] ms (11.6 days a step), memory in
// [0, 1e9] MB. "1e999" (inf), 1e308 and denormals say the run or the log is broken (they printed "MAPE nan %").
double checked(const Place& at, std::optional<double> v, const char* what, bool time) {
  if (!v) return 0;
  const double lo = time ? 1e-3 : 0, hi = 1e9;
  if (!(*v >= lo && *v <= hi)) {
    throw common::ConfigError(at.label, "line " + std::to_string(at.line),
                              std::string(what) + " must be a number in [" + (time ? "0.001" : "0") + ", 1e9]");
  }
  return *v;
}

void parse_iterations(const std::string& line, const Place& place, MegatronLog& log) {
  size_t from = 0;
  for (size_t at = line.find(kElapsed); at != std::string::npos; at = line.find(kElapsed, at + 1)) {
    const auto ms = number_at(line, at + kElapsed.size());
    if (!ms) continue;  // the words without a number: no record
    const double v = checked(place, ms, "elapsed time per iteration (ms)", true);
    log.iterations.push_back(MegatronIteration{iteration_before(line, from, at), v, place.line});
    from = at + kElapsed.size();
  }
}

std::string trimmed(const std::string& s) {
  size_t b = 0, e = s.size();
  while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
  while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
  return s.substr(b, e - b);
}

void parse_memory(const std::string& line, const Place& place, MegatronLog& log) {
  for (size_t at = line.find(kMemory); at != std::string::npos; at = line.find(kMemory, at + 1)) {
    // The record ends where the next rank's output starts (lines of several ranks can run together).
    const size_t end = std::min(line.find(kRank, at), line.find(kMemory, at + 1));
    const auto alloc = field(line, at, end, "| allocated:");
    const auto max_alloc = field(line, at, end, "| max allocated:");
    const auto reserved = field(line, at, end, "| reserved:");
    const auto max_reserved = field(line, at, end, "| max reserved:");
    if (!alloc || !max_alloc || !reserved || !max_reserved) continue;
    MegatronMemory m{-1,
                     "",
                     checked(place, alloc, "memory (MB) allocated", false),
                     checked(place, max_alloc, "memory (MB) max allocated", false),
                     checked(place, reserved, "memory (MB) reserved", false),
                     checked(place, max_reserved, "memory (MB) max reserved", false)};
    const size_t rank_at = line.rfind(kRank, at);
    const size_t close = rank_at == std::string::npos ? std::string::npos : line.find(']', rank_at);
    if (close != std::string::npos && close < at && line.find('|', close) > at) {
      m.rank = std::strtoll(line.c_str() + rank_at + kRank.size(), nullptr, 10);
      m.when = trimmed(line.substr(close + 1, at - close - 1));
    }
    log.memory.push_back(std::move(m));
  }
}

}  // namespace

MegatronLog parse_megatron_log(std::istream& in, const std::string& label) {
  MegatronLog log;
  std::string line;
  Place place{label, 0};
  while (std::getline(in, line)) {
    ++place.line;
    parse_iterations(line, place, log);
    parse_memory(line, place, log);
  }
  return log;
}

namespace {

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace

SteadyState steady_state(const std::vector<MegatronIteration>& its) {
  SteadyState s;
  size_t first = its.size() > 1 ? 1 : 0;
  std::vector<double> rest;
  for (size_t i = first; i < its.size(); ++i) rest.push_back(its[i].elapsed_ms);
  while (rest.size() > 1) {
    const double later = median_of(std::vector<double>(rest.begin() + 1, rest.end()));
    if (rest.front() <= SteadyState::kWarmupFactor * later) break;
    rest.erase(rest.begin());
    ++first;
  }
  s.warmup_records = first;
  for (size_t i = first; i < its.size(); ++i) s.used.push_back(i);
  s.min_ms = *std::min_element(rest.begin(), rest.end());
  s.max_ms = *std::max_element(rest.begin(), rest.end());
  s.median_ms = median_of(rest);
  return s;
}

std::string SteadyState::description(const std::vector<MegatronIteration>& its) const {
  const auto label = [&](size_t i) {
    return its[i].iteration >= 0 ? std::to_string(its[i].iteration) : "? (line " + std::to_string(its[i].line) + ")";
  };
  std::string out = used.size() == 1 ? "iteration " + label(used.front())
                                     : "iterations " + label(used.front()) + "-" + label(used.back());
  out += " (" + std::to_string(used.size()) + (used.size() == 1 ? " record" : " records");
  if (warmup_records > 0) {
    out += "; the first " + (warmup_records == 1 ? std::string() : std::to_string(warmup_records) + " ") +
           "skipped as warm-up";
  }
  return out + ")";
}

MegatronLog load_megatron_log(const std::string& path) {
  report::TraceStreamBuf buf(path);  // a regular file only (a FIFO would block), gzip or not, in bounded memory
  std::istream in(&buf);
  MegatronLog log = parse_megatron_log(in, path);
  if (log.iterations.empty()) {
    throw common::ConfigError(path, "", "no Megatron-LM \"elapsed time per iteration (ms): X\" line found");
  }
  return log;
}

}  // namespace simumax::compare
