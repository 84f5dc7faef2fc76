// The memory files of `run --memory`: memory_timeline.json (allocated bytes over time, split static /
// activation / transient), memory_snapshot.json (named allocations, the peak and what is live at it) and
// memory_snapshot.pickle (PyTorch's torch.cuda.memory._snapshot() structure, for memory_viz). Formats:
// docs/memory-artifacts.md.
#pragma once

#include <string>
#include <vector>

#include "engine/memory/memory_allocations.hpp"
#include "engine/report/trace_writer.hpp"

namespace simumax::report {

// Writes the three files into the existing folder `dir`, for the graph ranks `ranks` (select_ranks); returns
// their paths. Throws common::UsageError when a file cannot be written.
std::vector<std::string> write_memory_artifacts(const std::string& dir, const RunView& v,
                                                const std::vector<uint32_t>& ranks);

// The bytes the three files would take for these ranks, estimated from the ranks' memory tasks in O(tasks) (no
// allocation is built), so that a run can refuse before writing them. Within about 25 % of the real sizes.
uint64_t estimate_memory_artifact_bytes(const RunView& v, const std::vector<uint32_t>& ranks);

// The pickled snapshot dict of these ranks' allocations: {"segments": [...], "device_traces": [...]}, one
// device per job rank (device_traces has an empty list for the job ranks not given).
std::string memory_viz_pickle(const RunView& v, const std::vector<memory::RankAllocations>& ranks);

}  // namespace simumax::report
