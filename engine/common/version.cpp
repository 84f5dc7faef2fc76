#include "engine/common/version.hpp"

namespace simumax::common {

const char* version() { return SIMUMAX_VERSION; }

}  // namespace simumax::common
