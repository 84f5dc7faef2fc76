// simumax-sim's version: CMakeLists.txt's project VERSION, for `--version` on both binaries, Python's
// simumax_sim.__version__ and the "version" key of every JSON file we write (beside its "schema" key,
// "simumax_sim_<file>_v<N>": N changes when a key changes meaning or goes away; docs/report.md).
#pragma once

namespace simumax::common {

const char* version();  // "0.12.0"

}  // namespace simumax::common
