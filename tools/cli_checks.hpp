// Checks of a parsed command line that CLI11 does not make, shared by simumax-sim and simumax-measure.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/common/edit_distance.hpp"

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

// For a command line CLI11 refused, when an option of the command named by argv[1] (or of `app`, the program
// `program`) is misspelt:
// "run: unknown option '--executer'; did you mean '--executor'?" (CLI11 says only that the argument was not
// expected, or, with fallthrough to the app, that a command is required). "" when no such option is found.
inline std::string unknown_option_message(const CLI::App& app, const std::string& program, int argc, char** argv) {
  if (argc < 2) return "";
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == argv[1]) sub = s;
  }
  if (sub == nullptr) return "";
  std::vector<std::string> names;
  for (const CLI::App* a : {&app, sub}) {
    for (const CLI::Option* o : a->get_options()) {
      for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    }
  }
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.rfind("--", 0) != 0) continue;
    arg = arg.substr(0, arg.find('='));
    if (std::find(names.begin(), names.end(), arg) != names.end()) continue;
    const std::string* best = nullptr;
    size_t best_distance = std::max<size_t>(2, arg.size() / 3) + 1;
    for (const std::string& n : names) {
      if (const size_t d = common::edit_distance(arg, n, /*ignore_case=*/true); d < best_distance) {
        best = &n;
        best_distance = d;
      }
    }
    return sub->get_name() + ": unknown option '" + arg + "'; " +
           (best ? "did you mean '" + *best + "'?" : "'" + program + " " + sub->get_name() + " --help' lists them");
  }
  return "";
}

}  // namespace simumax::tools
