// simumax-sim's version: CMakeLists.txt's project VERSION, for `--version` on both binaries and Python's
// simumax_sim.__version__.
#pragma once

namespace simumax::common {

const char* version();  // "0.12.0"

}  // namespace simumax::common
