#include "engine/platform/simgrid_units.hpp"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <unordered_map>
#include <vector>

namespace simumax::platform {

namespace {

using UnitTable = std::unordered_map<std::string, double>;

// SimGrid's unit_scale: a base unit, then each prefix multiplies by 1000 ("k","M",...) or 1024 ("Ki","Mi",...).
void add_prefixed(UnitTable& table, const std::string& unit, double value, const std::vector<std::string>& prefixes,
                  double step) {
  table.emplace(unit, value);
  for (const std::string& prefix : prefixes) {
    value *= step;
    table.emplace(prefix + unit, value);
  }
}

const std::vector<std::string> kDecimal = {"k", "M", "G", "T", "P", "E", "Z", "Y"};
const std::vector<std::string> kBinary = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"};

const UnitTable& bandwidth_units() {
  static const UnitTable table = [] {
    UnitTable t;
    for (const auto& [unit, value] : {std::pair<const char*, double>{"bps", 0.125}, {"Bps", 1.0}}) {
      add_prefixed(t, unit, value, kBinary, 1024.0);
      add_prefixed(t, unit, value, kDecimal, 1000.0);
    }
    return t;
  }();
  return table;
}

const UnitTable& time_units() {
  static const UnitTable table = {{"w", 7 * 24 * 3600.0}, {"d", 24 * 3600.0}, {"h", 3600.0}, {"m", 60.0},  {"s", 1.0},
                                  {"ms", 1e-3},           {"us", 1e-6},       {"ns", 1e-9},  {"ps", 1e-12}};
  return table;
}

const UnitTable& speed_units() {
  static const UnitTable table = [] {
    UnitTable t;
    add_prefixed(t, "f", 1.0, kDecimal, 1000.0);
    add_prefixed(t, "flops", 1.0, {"kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta"}, 1000.0);
    return t;
  }();
  return table;
}

const char* unit_hint(Quantity quantity) {
  switch (quantity) {
    case Quantity::kBandwidth:
      return "Bps, kBps, MBps, GBps, TBps, KiBps, MiBps, GiBps, TiBps, or the same with bps for bits";
    case Quantity::kTime:
      return "s, ms, us, ns, ps";
    case Quantity::kSpeed:
      return "f, kf, Mf, Gf, Tf, Pf";
  }
  return "";
}

}  // namespace

std::optional<double> parse_quantity(Quantity quantity, std::string_view text, std::string* error) {
  const std::string s(text);
  const UnitTable& units = quantity == Quantity::kBandwidth ? bandwidth_units()
                           : quantity == Quantity::kTime    ? time_units()
                                                            : speed_units();
  char* end = nullptr;
  errno = 0;
  const double number = std::strtod(s.c_str(), &end);
  if (end == s.c_str()) {
    *error = "\"" + s + "\" is not a number followed by a unit (" + unit_hint(quantity) + ")";
    return std::nullopt;
  }
  if (errno == ERANGE || !std::isfinite(number)) {
    *error = "\"" + s + "\" is out of range";
    return std::nullopt;
  }
  const std::string unit(end);
  if (unit.empty()) {
    if (number == 0) return 0.0;
    *error = "\"" + s + "\" has no unit (SimGrid units: " + unit_hint(quantity) + ")";
    return std::nullopt;
  }
  auto it = units.find(unit);
  if (it == units.end()) {
    *error = "unknown unit \"" + unit + "\" in \"" + s + "\" (SimGrid units: " + unit_hint(quantity) +
             "; no space between number and unit)";
    return std::nullopt;
  }
  return number * it->second;
}

}  // namespace simumax::platform
