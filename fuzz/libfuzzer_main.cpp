// libFuzzer's entry points for one target (SIMUMAX_FUZZ_TARGET, set by CMake per executable).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/common/logging.hpp"
#include "fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  simumax::common::set_log_level("off");  // "unknown key ignored" warnings would flood the fuzzer's output
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  simumax::fuzz::fuzz_one(SIMUMAX_FUZZ_TARGET, std::string_view(reinterpret_cast<const char*>(data), size));
  return 0;
}
