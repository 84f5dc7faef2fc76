// Where simumax-sim's own files lie, found from the binary that holds this code (the simumax-sim executable or the
// Python module), never from a path compiled in: an installed tree works wherever it is copied or moved.
#pragma once

#include <filesystem>

namespace simumax::common {

// The layout, the same in an install prefix and in the build tree (where tools/ stands for bin/):
//   <root>/bin/simumax-sim                          the executable
//   <root>/lib/libsimumax_sim.so                     the SimGrid executor, loaded on first use
//   <root>/lib/python3/dist-packages/simumax_sim/    the Python package and its module (_core)
//   <root>/share/simumax-sim/{data,models,platforms,scenarios}
// install_root() is <root>: the executable's folder/.. or the module's folder/../../../.. . Empty when the
// binary cannot be located (no /proc).
std::filesystem::path install_root();

// The folder holding data/, models/, platforms/ and scenarios/: $SIMUMAX_DATA_DIR when set, else
// install_root()/share/simumax-sim. Throws UsageError when that folder lacks data/kernel_classes.json, naming
// where it looked and the variable that overrides it.
std::filesystem::path data_dir();

}  // namespace simumax::common
