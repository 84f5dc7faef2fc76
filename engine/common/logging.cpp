#include "engine/common/logging.hpp"

#include <mutex>

#include <spdlog/sinks/stdout_color_sinks.h>

namespace simumax::common {

namespace {
std::mutex g_mutex;
spdlog::level::level_enum g_level = spdlog::level::warn;
}  // namespace

std::shared_ptr<spdlog::logger> logger(const std::string& module) {
  std::lock_guard<std::mutex> lock(g_mutex);
  if (auto existing = spdlog::get(module)) return existing;
  auto created = spdlog::stderr_color_mt(module);
  created->set_pattern("[%n] %l: %v");  // no wall-clock stamps: logs must be reproducible
  created->set_level(g_level);
  return created;
}

void set_log_level(const std::string& level) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_level = spdlog::level::from_str(level);
  spdlog::apply_all([](const std::shared_ptr<spdlog::logger>& l) { l->set_level(g_level); });
}

}  // namespace simumax::common
