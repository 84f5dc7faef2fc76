// The per-link part of `simumax-sim run --executor sim`: links.json and the busiest links on screen.
#pragma once

#include <string>

#include "engine/executor/timeline.hpp"

namespace simumax::tools {

// Writes `dir`/links.json: the step's makespan and every link that carried a flow (name, bandwidth, bytes,
// flows, busy time, busy fraction, utilisation = bytes / (bandwidth x makespan)), busiest first, the busiest 20
// also over time (busy_series, utilisation_series in buckets of series_bucket_s, at most 128). Returns its
// path. Throws common::UsageError if the file cannot be written.
std::string write_links_json(const std::string& dir, const executor::Timeline& tl);

// The `count` busiest links as a small text table ("" when no link carried a flow).
std::string busiest_links_table(const executor::Timeline& tl, size_t count);

}  // namespace simumax::tools
