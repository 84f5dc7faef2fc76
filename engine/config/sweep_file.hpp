// A sweep file (`simumax-sim sweep`, docs/sweep.md): a base scenario x lists of override values x platforms,
// expanded to the cartesian product of cases, each of which reads back as an ordinary Scenario.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/config/scenario.hpp"

namespace simumax::config {

namespace detail {
struct SweepBase;  // the base scenario's JSON, private to sweep_file.cpp
}

// One axis of the product: a dotted key into one of the base scenario's configs ("strategy.tp_size",
// "system.networks.inter_node.bandwidth.gbps", "model.layer_num") and the values it takes.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;  // each as compact JSON text
  std::string column;               // its short name in case labels: the key's last part, unless two axes share it
};

// A platform of the product. Without `xml` and `topology`: the base's own (its scenario's "platform", else the
// single switch the sim executor generates).
struct SweepPlatform {
  std::string name;
  std::optional<std::string> xml;  // a platform file (path resolved against the sweep file's folder)
  std::string topology;            // "", "single-switch", "fat-tree" or "rail": generated from each case's system
  double oversubscription = 1;
  int64_t nodes_per_leaf = 0;  // 0: the generator's default
  bool nic_per_node = false;
};

// How every case runs (the sweep file's "run" object; `run`'s options of the same names).
struct SweepRun {
  std::string executor = "fast";  // fast | sim
  std::string ranks = "stages";   // stages | all
  std::string granularity = "layer";
  double memory_margin_gib = 0;
};

// A case: its position in the product, a name ("c0007") and a label ("tp_size=2 gbps=400 platform=ft2").
struct SweepCase {
  size_t index = 0;
  std::string name;
  std::string label;
  std::vector<std::string> values;  // one per axis, compact JSON text
  size_t platform = 0;              // index into Sweep::platforms (0 when there are none)
};

struct Sweep {
  std::string path;  // the sweep file, absolute
  std::string name;  // "name", or the file's stem
  std::string description;
  std::string base_name;  // the base scenario's name
  std::string fingerprint;  // of the sweep file's bytes: shards of another version of the file are refused
  std::vector<SweepAxis> axes;         // in file order; the first varies slowest
  std::vector<SweepPlatform> platforms;  // empty: none; otherwise the fastest-varying axis
  SweepRun run;
  size_t cases = 0;  // the size of the product
  std::shared_ptr<const detail::SweepBase> base;

  // REQUIRES: index < cases.
  SweepCase case_at(size_t index) const;
  // The case as a scenario (named "<sweep name>_<case name>"). Throws ConfigError naming the sweep file, the case
  // and the field at fault when a value does not suit its key (tp 3 with 64 heads).
  Scenario scenario(const SweepCase& c) const;
};

// Reads and checks a sweep file: {"name"?, "description"?, "base": scenario path or inline scenario, "overrides"?:
// {"<part>.<key>...": [values...]}, "platforms"?: [...], "run"?: {...}}. Every override key is checked against
// the base (an unknown key is a ConfigError naming the key, the case and the closest valid name); an empty list
// (no case at all) and a product of more than `max_cases` cases are errors giving the count. Throws ConfigError.
Sweep load_sweep(const std::string& path, size_t max_cases);

}  // namespace simumax::config
