// ASCII case folding for keys and labels (SimuMax's comm_stage.lower(), kernel names, file extensions).
#pragma once

#include <cctype>
#include <string>

namespace simumax::common {

// `s` with A-Z as a-z; other bytes (UTF-8 included) unchanged.
inline std::string lower_ascii(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace simumax::common
