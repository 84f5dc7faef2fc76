// Where a config object came from (a file, an object inside a file, plus overrides from a scenario file),
// so that every error can name the file and the JSON pointer of the field at fault.
#pragma once

#include <set>
#include <string>

namespace simumax::config {

struct FieldLocation {
  std::string file;
  std::string pointer;  // RFC 6901 JSON pointer inside `file`; empty for the whole document
};

struct ConfigOrigin {
  std::string file;                       // the file holding the object, as the user named it
  std::string pointer;                    // the object's pointer in `file` ("" when it is the whole file)
  std::string overrides_file;             // the scenario file holding overrides; empty if none
  std::string overrides_pointer;          // e.g. "/strategy_overrides"
  std::set<std::string> overridden_keys;  // top-level keys whose value came from the overrides

  // A whole file, or an object at `object_pointer` inside it; no overrides.
  static ConfigOrigin of(const std::string& file, const std::string& object_pointer = "");

  // The file and pointer of top-level field `key`: the override when the key was overridden.
  FieldLocation locate(const std::string& key) const;
  // For messages that mention this config: "llama3-70b.json", or "scenario.json /model" when inline.
  std::string describe() const;
};

// `pointer` + "/" + `key`, with `key` escaped as RFC 6901 requires ("~" -> "~0", "/" -> "~1").
std::string json_pointer_append(const std::string& pointer, const std::string& key);

}  // namespace simumax::config
