// The readers a hostile file reaches, as fuzz targets: each takes raw bytes the way a user's file would arrive.
// Shared by the libFuzzer drivers (`make fuzz`) and the corpus replay that the test suite runs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace simumax::fuzz {

// The target names, in the order `make fuzz` runs them; each has a corpus folder fuzz/corpus/<name>/.
const std::vector<std::string>& target_names();

// Feeds `data` to the reader named `target`. Returns normally when the reader accepts the input or refuses it
// as the user's fault (common::ConfigError or common::UsageError); anything else escapes — another exception,
// a crash, a sanitizer report — and is a finding. Readers that take a path read a file in a private scratch
// folder (removed at exit) that also holds a valid model, strategy and system for scenarios to name.
// Throws common::UsageError for an unknown target name.
void fuzz_one(const std::string& target, std::string_view data);

}  // namespace simumax::fuzz
