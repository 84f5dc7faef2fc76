// SimGrid's spellings of bandwidths, times and speeds ("25GiBps", "0s", "1Pf"), parsed exactly as SimGrid 3.32
// parses them (xbt_parse_units.cpp), so a platform file can be checked before SimGrid reads it.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace simumax::platform {

enum class Quantity { kBandwidth, kTime, kSpeed };

// The value in base units (bytes/s, seconds, flop/s), or std::nullopt with a one-line reason in *error
// (unparseable number, unknown unit, missing unit on a non-zero value, not finite). Signs are not judged here.
std::optional<double> parse_quantity(Quantity quantity, std::string_view text, std::string* error);

}  // namespace simumax::platform
