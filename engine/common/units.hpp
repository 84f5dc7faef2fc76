// Units used across the engine: time in seconds (double), memory in bytes (int64).
#pragma once

#include <cstdint>

namespace simumax::common {

inline constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;  // SimuMax's "GB" (gbps fields are GiB/s)
inline constexpr double kMiB = 1024.0 * 1024.0;
inline constexpr double kTera = 1e12;                     // TFLOPS are decimal
inline constexpr double kMsPerSecond = 1e3;

inline double ms(double seconds) { return seconds * kMsPerSecond; }
inline double gib(double bytes) { return bytes / kGiB; }

}  // namespace simumax::common
