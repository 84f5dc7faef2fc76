// links.json, the per-link usage of a `run --executor sim` step (the bottlenecks of a what-if platform), and the
// busiest links as the CLI prints them. Read back by the HTML report (report_views.hpp, links_view).
#pragma once

#include <string>

#include "engine/executor/timeline.hpp"

namespace simumax::report {

// links.json's text: the step's makespan and every link that carried a flow (name, bandwidth, bytes, flows, busy
// time, busy fraction, utilisation = bytes / (bandwidth x makespan)), busiest first, the busiest 20 also over time
// (busy_series, utilisation_series in buckets of series_bucket_s, at most 128). Deterministic.
std::string links_json(const executor::Timeline& tl);

// Writes links_json(tl) as `dir`/links.json; returns its path. Throws common::UsageError if the file cannot be
// written.
std::string write_links_json(const std::string& dir, const executor::Timeline& tl);

// The `count` busiest links as a small text table ("" when no link carried a flow).
std::string busiest_links_table(const executor::Timeline& tl, size_t count);

}  // namespace simumax::report
