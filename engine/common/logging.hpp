// Logging set-up: one named spdlog logger per module, on stderr.
#pragma once

#include <memory>
#include <string>

#include <spdlog/spdlog.h>

namespace simumax::common {

// The logger of a module ("config", "graph", ...); created on first use, writing to stderr.
std::shared_ptr<spdlog::logger> logger(const std::string& module);

// Sets the level of every module logger ("warn" by default; "info", "debug", "trace", "off").
void set_log_level(const std::string& level);

}  // namespace simumax::common
