#include "engine/measure/nccl_tests.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "engine/common/error.hpp"

namespace simumax::measure {

namespace {

const std::map<std::string, model::Coll>& collectives() {
  static const std::map<std::string, model::Coll> kNames = {
      {"all_reduce", model::Coll::kAllReduce},     {"allreduce", model::Coll::kAllReduce},
      {"all_gather", model::Coll::kAllGather},     {"allgather", model::Coll::kAllGather},
      {"reduce_scatter", model::Coll::kReduceScatter}, {"reducescatter", model::Coll::kReduceScatter},
      {"alltoall", model::Coll::kAllToAll},        {"all2all", model::Coll::kAllToAll},
      {"all_to_all", model::Coll::kAllToAll},      {"sendrecv", model::Coll::kP2p},
      {"p2p", model::Coll::kP2p}};
  return kNames;
}

bool parse_int(const std::string& s, int64_t& v) {
  if (s.empty()) return false;
  size_t i = s[0] == '-' ? 1 : 0;
  if (i == s.size()) return false;
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] < '0' || s[j] > '9') return false;
  }
  try {
    v = std::stoll(s);
  } catch (const std::exception&) {
    return false;
  }
  return true;
}

bool parse_double(const std::string& s, double& v) {
  if (s.empty()) return false;
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return end == s.c_str() + s.size() && std::isfinite(v);
}

std::vector<std::string> split(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string t; in >> t;) out.push_back(t);
  return out;
}

// mpirun --tag-output puts "[rank]" before a line, and sometimes inside it.
std::string strip_tags(const std::string& line) {
  std::string out;
  out.reserve(line.size());
  for (size_t i = 0; i < line.size(); ++i) {
    const size_t close = line[i] == '[' ? line.find(']', i) : std::string::npos;
    int64_t v;
    if (close != std::string::npos && parse_int(line.substr(i + 1, close - i - 1), v)) {
      out += ' ';
      i = close;
    } else {
      out += line[i];
    }
  }
  return out;
}

// The rank count whose bus factor is nearest `ratio`; 0 when none is within 1 % (the printed precision).
int64_t ranks_from_ratio(model::Coll c, double ratio) {
  int64_t best = 0;
  double best_gap = 0.01 * ratio;
  for (int64_t n = 2; n <= 65536; ++n) {
    const double gap = std::abs(bus_factor(c, n) - ratio);
    if (gap < best_gap) best = n, best_gap = gap;
  }
  return best;
}

}  // namespace

double bus_factor(model::Coll c, int64_t ranks) {
  const double n = static_cast<double>(ranks);
  switch (c) {
    case model::Coll::kAllReduce: return 2 * (n - 1) / n;
    case model::Coll::kP2p: return 1;
    default: return (n - 1) / n;
  }
}

std::string simumax_collective(const std::string& name) {
  std::string n = name;
  if (n.size() > 5 && n.ends_with("_perf")) n.resize(n.size() - 5);
  if (n.size() > 4 && n.ends_with("_mpi")) n.resize(n.size() - 4);
  if (n.size() > 5 && n.ends_with("_perf")) n.resize(n.size() - 5);
  auto it = collectives().find(n);
  if (it == collectives().end()) {
    throw common::UsageError("collective '" + name +
                             "': expected one of all_reduce, all_gather, reduce_scatter, alltoall, sendrecv (the "
                             "collectives of SimuMax's network schema)");
  }
  return model::to_string(it->second);
}

namespace {

// A data row (size count type [redop [root]] then time algbw busbw #wrong, out-of-place and in-place); nullopt for
// any other line (NCCL INFO, the launcher's own output).
std::optional<NcclTestsRow> parse_row(const std::vector<std::string>& tok, const std::string& raw, int line_no,
                                      const std::string& source, bool in_place) {
  int64_t bytes, count;
  if (tok.size() < 11 || !parse_int(tok[0], bytes) || !parse_int(tok[1], count)) return std::nullopt;
  const size_t first = tok.size() - 8;
  const size_t at = first + (in_place ? 4 : 0);
  NcclTestsRow row;
  row.bytes = bytes;
  row.line = line_no;
  if (first < 3 || first > 5 || !parse_double(tok[at], row.time_us) || !parse_double(tok[at + 1], row.algbw_gbs) ||
      !parse_double(tok[at + 2], row.busbw_gbs)) {
    throw common::ConfigError(source, "line " + std::to_string(line_no),
                              "expected an nccl-tests row: size count type [redop root] then time algbw busbw "
                              "#wrong, out-of-place and in-place; got '" + raw + "'");
  }
  if (bytes < 0 || !(row.time_us > 0 && row.time_us <= 1e12) || !(row.algbw_gbs >= 0 && row.algbw_gbs <= 1e7) ||
      !(row.busbw_gbs >= 0 && row.busbw_gbs <= 1e7)) {
    throw common::ConfigError(source, "line " + std::to_string(line_no),
                              "expected a size >= 0, a time in (0, 1e12] us and bandwidths in [0, 1e7] GB/s, got '" +
                                  raw + "'");
  }
  // nccl-tests checks the results (-c 1, its default) and counts the wrong ones: such a run's times are of a
  // broken transfer, never a machine's speed. "N/A" (-c 0) is no count.
  if (int64_t wrong = 0; parse_int(tok[at + 3], wrong) && wrong > 0) {
    throw common::ConfigError(source, "line " + std::to_string(line_no),
                              "the run counts " + std::to_string(wrong) + " wrong results (#wrong) at " +
                                  std::to_string(bytes) + " bytes: its times are not fitted; rerun nccl-tests");
  }
  return row;
}

// The rank count: given, else from the "# Rank N" lines, else from the bus factor; checked against the printed
// busbw / algbw of the largest row (the one with the most printed digits).
int64_t resolve_ranks(const NcclTestsTable& t, int64_t given, int64_t max_rank) {
  const NcclTestsRow* big = &t.rows.front();
  for (const auto& r : t.rows) {
    if (r.algbw_gbs > big->algbw_gbs) big = &r;
  }
  const double ratio = big->algbw_gbs > 0 ? big->busbw_gbs / big->algbw_gbs : 0;
  int64_t ranks = given > 0 ? given : max_rank + 1;
  if (ranks <= 0 && t.coll == model::Coll::kP2p) ranks = 2;
  if (ranks <= 0) ranks = ratio > 0 ? ranks_from_ratio(t.coll, ratio) : 0;
  if (ranks < 2) {
    throw common::ConfigError(t.source, "",
                              "cannot tell how many ranks ran: no '# Rank N' lines and no busbw/algbw ratio to read "
                              "it from; give the rank count (FILE:TIER:COLLECTIVE:RANKS)");
  }
  if (ratio > 0 && big->algbw_gbs >= 1 && std::abs(bus_factor(t.coll, ranks) - ratio) > 0.02 * ratio) {
    throw common::ConfigError(t.source, "line " + std::to_string(big->line),
                              "busbw / algbw is " + std::to_string(ratio) + ", but " + t.collective + " over " +
                                  std::to_string(ranks) + " ranks has a bus factor of " +
                                  std::to_string(bus_factor(t.coll, ranks)) +
                                  ": the rank count or the collective is wrong");
  }
  return ranks;
}

}  // namespace

NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& source, const NcclTestsOptions& o) {
  NcclTestsTable t;
  t.source = source;
  std::string collective = o.collective;
  int64_t max_rank = -1;
  std::istringstream in(text);
  int line_no = 0;
  for (std::string raw; std::getline(in, raw);) {
    ++line_no;
    const auto tok = split(strip_tags(raw));
    if (tok.empty()) continue;
    if (tok[0].starts_with("#")) {
      for (size_t i = 0; i + 1 < tok.size(); ++i) {
        int64_t r;
        if (tok[i] == "Rank" && parse_int(tok[i + 1], r)) max_rank = std::max(max_rank, r);
        if (tok[i] == "starting:" && collective.empty()) collective = tok[i + 1];
      }
      continue;
    }
    if (auto row = parse_row(tok, raw, line_no, source, o.in_place); row && row->bytes > 0) t.rows.push_back(*row);
  }
  if (t.rows.empty()) {
    throw common::ConfigError(source, "", "no nccl-tests rows (lines of: size count type redop root time algbw busbw "
                                          "#wrong time algbw busbw #wrong) with a size above 0");
  }
  if (collective.empty()) {
    throw common::ConfigError(source, "", "no 'Collective test starting: <name>_perf' line: name the collective "
                                          "(FILE:TIER:COLLECTIVE)");
  }
  try {
    t.collective = simumax_collective(collective);
  } catch (const common::UsageError& e) {
    throw common::ConfigError(source, "", e.what());
  }
  t.coll = collectives().at(t.collective);
  t.ranks = resolve_ranks(t, o.ranks, max_rank);
  return t;
}

NcclTestsTable read_nccl_tests(const std::string& path, const NcclTestsOptions& o) {
  // Regular files only (a FIFO or /dev/zero would block or never end), and a bound no log of a sweep reaches.
  constexpr uintmax_t kMaxBytes = 64u << 20;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) throw common::ConfigError(path, "", "expected a regular file");
  if (std::filesystem::file_size(path, ec) > kMaxBytes) {
    throw common::ConfigError(path, "", "larger than 64 MiB: not an nccl-tests output");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) throw common::ConfigError(path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  return parse_nccl_tests(text.str(), path, o);
}

}  // namespace simumax::measure
