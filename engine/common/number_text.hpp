// One number printed with a printf format ("%.2f", "%.10g GiB"): the text tables' cells.
#pragma once

#include <cstdio>
#include <string>

namespace simumax::common {

// `printf_format` takes exactly one double; the text is cut at 63 characters.
inline std::string format_number(const char* printf_format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, printf_format, v);
  return buf;
}

}  // namespace simumax::common
