#include "engine/common/error.hpp"

namespace simumax::common {

namespace {
std::string format(const std::string& file, const std::string& pointer, const std::string& message) {
  std::string out = file;
  if (!pointer.empty()) out += ": " + pointer;
  out += ": " + message;
  return out;
}
}  // namespace

ConfigError::ConfigError(std::string file, std::string pointer, std::string message)
    : std::runtime_error(format(file, pointer, message)),
      file_(std::move(file)),
      pointer_(std::move(pointer)),
      message_(std::move(message)) {}

}  // namespace simumax::common
