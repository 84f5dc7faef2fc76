// How deeply a JSON text nests, checked before it is parsed. nlohmann parses any depth, but copying, printing or
// walking a value recurses once per level: ~150,000 levels overflow the stack (issue 32). No file or request
// simumax-sim reads nests more than a few levels, so every reader refuses a text beyond kMaxJsonDepth.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "engine/common/error.hpp"

namespace simumax::common {

inline constexpr size_t kMaxJsonDepth = 100;

// The offset of the first '{' or '[' (outside strings) that opens level `max_depth` + 1; npos when the text
// nests no deeper. A light scan: it does not check that the text is JSON.
inline size_t json_too_deep_at(std::string_view text, size_t max_depth = kMaxJsonDepth) {
  size_t depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i) {
        if (text[i] == '\\') ++i;
      }
    } else if (c == '{' || c == '[') {
      if (++depth > max_depth) return i;
    } else if ((c == '}' || c == ']') && depth > 0) {
      --depth;
    }
  }
  return std::string_view::npos;
}

// "line L, column C" of the byte at `offset` in `text`.
inline std::string line_column(std::string_view text, size_t offset) {
  size_t line = 1, line_start = 0;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

// Throws ConfigError(label) when `text` nests deeper than kMaxJsonDepth: "nested deeper than 100 levels (line L,
// column C)".
inline void require_json_depth(std::string_view text, const std::string& label) {
  if (const size_t at = json_too_deep_at(text); at != std::string_view::npos) {
    throw ConfigError(label, "", "nested deeper than " + std::to_string(kMaxJsonDepth) + " levels (" +
                                     line_column(text, at) + "): no input of simumax-sim nests so deep");
  }
}

}  // namespace simumax::common
