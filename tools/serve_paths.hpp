// The files `simumax-sim serve` may read: *.json under the folders it was started with, nothing else.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace simumax::tools {

// The folders, by the name a request uses for each (its last path component, e.g. "models").
struct ServeRoots {
  std::vector<std::pair<std::string, std::string>> named;  // name -> canonical absolute folder
};

// REQUIRES: each folder exists. Throws common::UsageError naming a folder that does not, or two of one name.
ServeRoots make_serve_roots(const std::vector<std::string>& folders);

// Every regular *.json file under the roots (recursively), as "<root name>/<relative path>", sorted; at most
// 10,000 (a root holding more is not what serve is for).
std::vector<std::string> list_serve_files(const ServeRoots& roots);

// The file a request names ("<root name>/<relative path>"), when it is a regular *.json file at most 1 MiB whose
// canonical path lies under its root: no "..", no absolute path, no symbolic link out of the root, only
// [A-Za-z0-9._/-] characters. nullopt otherwise (the request gets 404, whatever the reason).
std::optional<std::string> resolve_serve_file(const ServeRoots& roots, const std::string& requested);

// The real runs `compare` can read under the roots, listed as above but of any size (compare streams them and
// bounds what it holds): *.log and *.txt (Megatron-LM logs, nccl-tests output), and the *.json and *.json.gz
// whose top level is a Chrome trace's (an array of events, or an object with a "traceEvents" key; at most the
// first 4 MiB are read): a model, platform, strategy or scenario file is not listed.
std::vector<std::string> list_real_runs(const ServeRoots& roots);
// A file of those names and rules, whatever its content (compare then says why it is not a trace, 400).
std::optional<std::string> resolve_real_run(const ServeRoots& roots, const std::string& requested);

}  // namespace simumax::tools
