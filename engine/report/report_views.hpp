// The parts of the HTML report's data, one per input file (internal to engine/report's report_*.cpp). Each
// returns the compact JSON the page's script (web/report.js) draws; see docs/report.md for the fields.
#pragma once

#include <cstddef>
#include <string>

#include "engine/report/rank_stats.hpp"
#include "engine/report/report_json_read.hpp"
#include "engine/report/summary.hpp"

namespace simumax::report::html {

// trace.json: lanes (one per rank and thread), slice columns, the kind of each slice, and the decimation done
// to keep at most `max_slices`. Throws ConfigError(path, ...) for a file that is not a Chrome trace.
Json trace_view(const std::string& path, size_t max_slices);

// summary.json (read_summary's): headline figures and per-stage rows with summary.json's fit verdict and headroom.
Json summary_view(const Summary& summary);

// memory_timeline.json (+ memory_snapshot.json when given: the largest allocations live at each rank's peak).
Json memory_view(const JsonDoc& timeline, const JsonDoc* snapshot, size_t max_points);

// search.json: every evaluated candidate (step time, peak reserved, fits, rank), the Pareto front of those
// that fit (indices into the candidate list), and the meta fields.
Json search_view(const JsonDoc& search);

// sweep.json (`simumax-sim sweep`): the meta fields, the axes (key, column, whether it sets the layout), every case
// (its override values as shown, platform, status, error, figures or null, fit verdict, layout, and its series and
// group in the step-time chart: the series is the fastest-varying axis, the group the other values), and per layout
// the best case that fits. Throws ConfigError(path, pointer, ...) for a file that is not what sweep writes.
Json sweep_view(const JsonDoc& sweep);

// ranks.json (read_rank_stats'): the slowest ranks view: the header figures, the `top` latest ranks (job rank,
// stage, late_ms, exposed communication per kind, peak memory) latest first (ties: the lower job rank), and a
// histogram of lateness over every rank (`bins` equal bins from 0 to the largest late_ms), never one row per rank.
Json ranks_view(const RankStats& stats, size_t top, size_t bins);

// links.json: the busiest links (at most 20), their scalar fields as written.
Json links_view(const JsonDoc& links);

// compare.json (`compare --json`): the summary row's metrics (time and counts: ours, real, error), the first
// `max_ops` op-by-op lines (and how many there are), the per-rank busy times and the straggler when several
// rank traces were compared, and peak memory against a log's.
Json compare_view(const JsonDoc& compare, size_t max_ops);

// Two runs' summary.json: {"scenario": [...], "platform": [...]}, each a list of {"field" (a JSON pointer
// without the leading '/'), "a", "b"} where the two differ. "scenario" holds the fields that define the
// workload (layout, batch, model size, precision, recompute, fidelity, executor, granularity, rank scope):
// empty when the two ran the same scenario. "platform" holds the system's fields summary.json records (GPU
// memory, the tier of each parallel group, the calibration). Values that are not scalars are shown as null.
Json whatif_differences(const Summary& a, const Summary& b);

}  // namespace simumax::report::html
