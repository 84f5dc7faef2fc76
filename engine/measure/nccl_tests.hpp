// Reads the table nccl-tests' *_perf binaries print (all_reduce_perf, all_gather_perf, reduce_scatter_perf,
// alltoall_perf, sendrecv_perf), as people paste it into issues and logs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "engine/model/op.hpp"

namespace simumax::measure {

struct NcclTestsRow {
  int64_t bytes = 0;      // the "size (B)" column: the whole buffer (all-gather: the gathered output)
  double time_us = 0;     // out-of-place (or in-place) time
  double algbw_gbs = 0;   // as printed, 1e9 B/s
  double busbw_gbs = 0;   // as printed
  int line = 0;           // 1-based line in the file
};

struct NcclTestsTable {
  std::string source;       // the file
  std::string collective;   // SimuMax's name: all_reduce, all_gather, reduce_scatter, all2all, p2p
  model::Coll coll = model::Coll::kAllReduce;
  int64_t ranks = 0;        // the ranks taking part
  std::vector<NcclTestsRow> rows;  // rows of size > 0, in file order
};

struct NcclTestsOptions {
  std::string collective;  // empty: from the "Collective test starting: <name>_perf" line
  int64_t ranks = 0;       // 0: from the "Rank N" lines, else from busbw / algbw of the largest row
  bool in_place = false;   // read the in-place columns instead of the out-of-place ones
};

// SimuMax's collective name for an nccl-tests binary or collective name ("all_reduce_perf", "alltoall", "all2all",
// "sendrecv", ...). Throws common::UsageError listing the accepted names.
std::string simumax_collective(const std::string& name);

// Parses `text` (read from `source`). Throws common::ConfigError(source, "line N", what) for a row that does not
// parse, no rows, an unknown collective or a rank count that cannot be found or disagrees with the printed
// bandwidths (busbw / algbw is nccl-tests' bus factor of the collective at that rank count).
NcclTestsTable parse_nccl_tests(const std::string& text, const std::string& source, const NcclTestsOptions& o);
// The same from a file. Throws common::ConfigError when it cannot be read.
NcclTestsTable read_nccl_tests(const std::string& path, const NcclTestsOptions& o);

// nccl-tests' bus bandwidth factor: busbw = algbw * factor (all-reduce 2(n-1)/n; gathers, scatters, all-to-all
// (n-1)/n; send/recv 1).
double bus_factor(model::Coll c, int64_t ranks);

}  // namespace simumax::measure
