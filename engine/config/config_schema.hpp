// The config schema as the readers define it (engine/config's ObjectReader calls), for forms built from it:
// serve's editor. One source of truth: a field the readers ask for is in it, with the kind and bounds they check.
#pragma once

#include <string>

namespace simumax::config {

// The fields read when scenario `path` is loaded (its model, strategy and system, by their JSON pointers in the
// files they come from: "/strategy/tp_size", "/system/accelerator/mem_gbs" for an inline scenario), as one JSON
// object: {"<pointer>": {"kind": "integer"|"number"|"boolean"|"string"|"choice"|"strings"|"object", "sign"?:
// "positive"|"non-negative", "choices"?: [...], "required"?: true, "default"?: value}}, sorted by pointer. Fields
// read only in some configurations (an MoE model's expert keys) are in it when this scenario reads them.
// Throws what load_scenario throws.
std::string scenario_schema_json(const std::string& path);

}  // namespace simumax::config
