// Reading a trace or log file whole, inflating it when it is gzip-compressed (PyTorch writes .json.gz).
#pragma once

#include <string>

namespace simumax::report {

// The file's bytes; gzip data (recognised by its magic bytes, whatever the name) comes back inflated.
// Throws ConfigError(path, "", "cannot open file: <reason>") when it cannot be read, and
// ConfigError(path, "", "corrupt gzip data: <zlib's reason>") when inflating fails.
std::string read_maybe_gzip(const std::string& path);

}  // namespace simumax::report
