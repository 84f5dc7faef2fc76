// A list written in one string ("0,8,16-23", "strategy.tp_size", "1,2;4,8"): the one splitter of the readers.
#pragma once

#include <string_view>
#include <vector>

namespace simumax::common {

// The pieces of `text` between its `sep`s, empty ones included: n separators give n + 1 pieces, and "" gives
// {""}. The pieces view `text`, which must outlive them.
inline std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  for (size_t start = 0;;) {
    const size_t at = text.find(sep, start);
    out.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) return out;
    start = at + 1;
  }
}

}  // namespace simumax::common
