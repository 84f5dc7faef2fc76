#include "engine/search/search_space.hpp"

#include <algorithm>
#include <charconv>

#include "engine/common/error.hpp"
#include "engine/common/split_text.hpp"

namespace simumax::search {

using common::UsageError;

std::string to_string(const RecomputeChoice& r) {
  switch (r.kind) {
    case RecomputeKind::kAsBase:
      return "base";
    case RecomputeKind::kNone:
      return "none";
    case RecomputeKind::kSelectiveAll:
      return "selective:all";
    case RecomputeKind::kSelectiveAttn:
      return "selective:attn";
    case RecomputeKind::kSelectiveMlp:
      return "selective:mlp";
    case RecomputeKind::kFull:
      break;
  }
  if (r.layers == RecomputeChoice::kAllLayers) return "full";
  if (r.layers == RecomputeChoice::kEveryCount) return "full:*";
  return "full:" + std::to_string(r.layers);
}

const char* to_string(SearchMode m) {
  switch (m) {
    case SearchMode::kGrid:
      return "grid";
    case SearchMode::kMicroBatch:
      return "micro-batch";
    case SearchMode::kRecompute:
      return "recompute";
  }
  return "?";
}

namespace {

// The items of a comma-separated option, each without its surrounding spaces.
std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  for (std::string_view item : common::split(text, ',')) {
    const size_t first = item.find_first_not_of(' ');
    const size_t end = item.find_last_not_of(' ') + 1;
    out.emplace_back(first == std::string_view::npos ? std::string_view() : item.substr(first, end - first));
  }
  return out;
}

std::optional<int64_t> to_positive(const std::string& s) {
  int64_t v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 1) return std::nullopt;
  return v;
}

template <typename T>
void require_unique(const std::string& option, const std::vector<T>& values, const std::string& text) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (std::find(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(i), values[i]) !=
        values.begin() + static_cast<std::ptrdiff_t>(i)) {
      throw UsageError(option + ": '" + text + "' lists a value twice");
    }
  }
}

std::vector<int64_t> powers_of_two_up_to(int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t v = 1; v <= limit; v *= 2) out.push_back(v);
  return out;
}

std::vector<int64_t> divisors_up_to(int64_t n, int64_t limit) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= std::min(n, limit); ++d) {
    if (n % d == 0) out.push_back(d);
  }
  return out;
}

// The mode's default for each list, from the base strategy where the layout is fixed.
SearchSpace default_space(SearchMode mode, const config::Scenario& base, int64_t world) {
  const auto& st = base.strategy;
  const auto& m = base.model;
  SearchSpace s;
  s.tp = {st.tp_size}, s.cp = {st.cp_size}, s.pp = {st.pp_size}, s.ep = {st.ep_size}, s.etp = {st.etp_size};
  s.vpp = {st.interleaving_size}, s.mbs = {st.micro_batch_size}, s.zero = {st.zero_state}, s.sp = {st.sp()};
  if (mode == SearchMode::kMicroBatch) s.mbs.clear();
  if (mode != SearchMode::kGrid) {
    s.recompute = mode == SearchMode::kRecompute ? parse_recompute_list("none,selective,full:*")
                                                 : std::vector<RecomputeChoice>{{RecomputeKind::kAsBase, 0}};
    return s;
  }
  s.tp = powers_of_two_up_to(std::min<int64_t>({8, std::max<int64_t>(1, base.system.num_per_node), world}));
  s.pp = divisors_up_to(world, m.layer_num);
  s.cp = {1}, s.vpp = {1}, s.etp = {1}, s.mbs = {1, 2, 4}, s.zero = {1}, s.sp = {true};
  s.ep = {1};
  if (m.is_moe()) {
    s.tp = {1};  // SimuMax's search: MoE models scale with ep, not tp (and MLA refuses tp > 1)
    s.ep.clear();
    for (int64_t e : powers_of_two_up_to(world)) {
      if (m.expert_num % e == 0) s.ep.push_back(e);
    }
  }
  s.recompute = parse_recompute_list("none,selective,full:*");
  return s;
}

}  // namespace

std::vector<int64_t> parse_int_list(const std::string& option, const std::string& text) {
  std::vector<int64_t> out;
  for (const auto& item : split(text)) {
    const auto v = to_positive(item);
    if (!v) {
      throw UsageError(option + ": expected a comma-separated list of positive integers (e.g. 1,2,4,8), got '" + text +
                       "'");
    }
    out.push_back(*v);
  }
  require_unique(option, out, text);
  return out;
}

std::vector<RecomputeChoice> parse_recompute_list(const std::string& text) {
  std::vector<RecomputeChoice> out;
  for (const auto& item : split(text)) {
    if (item == "none") {
      out.push_back({RecomputeKind::kNone, 0});
    } else if (item == "base") {
      out.push_back({RecomputeKind::kAsBase, 0});
    } else if (item == "selective") {
      // SimuMax's search tries these three flag sets for selective_recompute.
      out.push_back({RecomputeKind::kSelectiveAll, 0});
      out.push_back({RecomputeKind::kSelectiveAttn, 0});
      out.push_back({RecomputeKind::kSelectiveMlp, 0});
    } else if (item == "selective:all" || item == "selective:attn" || item == "selective:mlp") {
      const char c = item[10];
      out.push_back({c == 'a' && item[11] == 'l' ? RecomputeKind::kSelectiveAll
                     : c == 'a'                  ? RecomputeKind::kSelectiveAttn
                                                 : RecomputeKind::kSelectiveMlp,
                     0});
    } else if (item == "full") {
      out.push_back({RecomputeKind::kFull, RecomputeChoice::kAllLayers});
    } else if (item == "full:*") {
      out.push_back({RecomputeKind::kFull, RecomputeChoice::kEveryCount});
    } else if (const auto n = item.rfind("full:", 0) == 0 ? to_positive(item.substr(5)) : std::nullopt) {
      out.push_back({RecomputeKind::kFull, *n});
    } else {
      throw UsageError(
          "--recompute: unknown choice '" + item +
          "'; choose from base, none, selective, selective:all, selective:attn, selective:mlp, full, full:N, "
          "full:*");
    }
  }
  require_unique("--recompute", out, text);
  return out;
}

std::vector<bool> parse_sp_list(const std::string& text) {
  std::vector<bool> out;
  for (const auto& item : split(text)) {
    if (item != "on" && item != "off") throw UsageError("--sp: expected on, off or on,off, got '" + text + "'");
    out.push_back(item == "on");
  }
  require_unique("--sp", out, text);
  return out;
}

SearchSpace build_space(SearchMode mode, const SpaceArgs& a, const config::Scenario& base, int64_t world) {
  SearchSpace s = default_space(mode, base, world);
  s.uneven_pp = a.uneven_pp;
  const std::pair<const std::optional<std::string>*, std::vector<int64_t>*> ints[] = {
      {&a.tp, &s.tp}, {&a.cp, &s.cp}, {&a.pp, &s.pp}, {&a.ep, &s.ep}, {&a.etp, &s.etp}, {&a.vpp, &s.vpp}};
  const char* names[] = {"--tp", "--cp", "--pp", "--ep", "--etp", "--vpp"};
  for (size_t i = 0; i < std::size(ints); ++i) {
    if (*ints[i].first) *ints[i].second = parse_int_list(names[i], **ints[i].first);
  }
  if (a.mbs) s.mbs = *a.mbs == "auto" ? std::vector<int64_t>{} : parse_int_list("--mbs", *a.mbs);
  if (a.recompute) s.recompute = parse_recompute_list(*a.recompute);
  if (a.sp) s.sp = parse_sp_list(*a.sp);
  if (a.zero) {
    s.zero.clear();
    for (const auto& item : split(*a.zero)) {
      if (item != "0" && item != "1" && item != "2" && item != "3") {
        throw UsageError("--zero: expected ZeRO stages from 0, 1, 2, 3 (e.g. 0,1), got '" + *a.zero + "'");
      }
      s.zero.push_back(item[0] - '0');
    }
    require_unique("--zero", s.zero, *a.zero);
  }
  return s;
}

}  // namespace simumax::search
