#include "engine/report/calibrated_system.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/common/error.hpp"

namespace simumax::report {

std::string calibrated_system_json(const std::string& system_path, const config::Calibration& c,
                                   const std::string& note) {
  std::ifstream in(system_path);
  if (!in) throw common::ConfigError(system_path, "", "cannot open file");
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::ordered_json j = nlohmann::ordered_json::parse(text.str(), nullptr, false);
  if (j.is_discarded() || !j.is_object()) throw common::ConfigError(system_path, "", "is not a JSON object");
  nlohmann::ordered_json cal;
  cal["_note"] = note;
  cal["compute_derate"] = c.compute_derate;
  if (c.kernel_floor_us) cal["kernel_floor_us"] = *c.kernel_floor_us;
  j["calibration"] = cal;
  return j.dump(1) + "\n";
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::filesystem::path target(path);
  if (std::filesystem::is_directory(target)) throw common::UsageError(path + ": is a folder, not a file");
  std::filesystem::path tmp = target;
  tmp += ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (f == nullptr) throw common::UsageError(path + ": cannot write (" + std::strerror(errno) + ")");
  const bool written = std::fwrite(text.data(), 1, text.size(), f) == text.size() && std::fflush(f) == 0;
  const int saved = errno;
  if (std::fclose(f) != 0 || !written) {
    std::remove(tmp.c_str());
    throw common::UsageError(path + ": cannot write (" + std::strerror(written ? errno : saved) + ")");
  }
  std::error_code ec;
  std::filesystem::rename(tmp, target, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw common::UsageError(path + ": cannot write (" + ec.message() + ")");
  }
}

}  // namespace simumax::report
