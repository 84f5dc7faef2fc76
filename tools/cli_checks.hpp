// Checks of a parsed command line that CLI11 does not make, shared by simumax-sim and simumax-measure.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>

#include <CLI/CLI.hpp>

namespace simumax::tools {

// CLI11's PositiveNumber / NonNegativeNumber, finite: they accepted "nan" (a comparison it fails passes) and
// printed "inf" as out of the range 0 to 1.797...e308, 300 digits.
inline CLI::Validator finite_number(bool positive) {
  return CLI::Validator(
      [positive](std::string& text) -> std::string {
        char* end = nullptr;
        const double x = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0') return "expected a number, got " + text;
        if (!std::isfinite(x)) return "expected a finite number, got " + text;
        if (positive ? !(x > 0) : !(x >= 0)) {
          return std::string("expected a ") + (positive ? "positive" : "non-negative") + " number, got " + text;
        }
        return "";
      },
      positive ? "POSITIVE" : "NONNEGATIVE");
}
inline CLI::Validator positive_number() { return finite_number(true); }
inline CLI::Validator non_negative_number() { return finite_number(false); }

// "--max-tasks: expected a finite number, got nan" for the first number option of `app` (or of a subcommand it
// parsed) given a value that is not a finite number; "" when none. CLI11 reads "nan" and "inf" into a double,
// and its Range checks compare, which NaN passes (--oversubscription nan reached the platform).
inline std::string non_finite_option(const CLI::App& app) {
  for (const CLI::Option* o : app.get_options()) {
    if (o->count() == 0 || o->get_type_name().find("FLOAT") == std::string::npos) continue;
    for (const std::string& v : o->results()) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end != v.c_str() && !std::isfinite(x)) return o->get_name() + ": expected a finite number, got " + v;
    }
  }
  for (const CLI::App* sub : app.get_subcommands()) {
    if (std::string found = non_finite_option(*sub); !found.empty()) return found;
  }
  return "";
}

}  // namespace simumax::tools
