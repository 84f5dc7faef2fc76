#include "engine/config/config_origin.hpp"

namespace simumax::config {

std::string json_pointer_append(const std::string& pointer, const std::string& key) {
  std::string out = pointer + "/";
  for (char c : key) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

ConfigOrigin ConfigOrigin::of(const std::string& file, const std::string& object_pointer) {
  ConfigOrigin origin;
  origin.file = file;
  origin.pointer = object_pointer;
  return origin;
}

FieldLocation ConfigOrigin::locate(const std::string& key) const {
  if (overridden_keys.count(key) != 0) return {overrides_file, json_pointer_append(overrides_pointer, key)};
  return {file, json_pointer_append(pointer, key)};
}

std::string ConfigOrigin::describe() const { return pointer.empty() ? file : file + " " + pointer; }

}  // namespace simumax::config
