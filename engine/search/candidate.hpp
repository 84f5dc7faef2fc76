// One point of a search space, its enumeration in a fixed order, and the strategy it stands for (or why it is
// illegal: a short reason key under which skipped candidates are counted).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/search/search_space.hpp"

namespace simumax::search {

// What every candidate shares: the job.
struct JobShape {
  int64_t world_size = 0;
  int64_t global_batch_size = 0;
  int64_t seq_len = 0;
};

struct Candidate {
  int64_t tp = 1, cp = 1, pp = 1, ep = 1, etp = 1, vpp = 1, mbs = 1, zero = 1;
  bool sp = true;
  RecomputeChoice recompute;
  // Derived: data-parallel size and micro-batch count (0 when not whole; the candidate is then illegal).
  int64_t dp = 0, mbc = 0;
};

// "tp4 cp1 pp2 dp8 mbs1 mbc32 full:3 zero1 sp" (vpp, ep, etp shown when not 1).
std::string label(const Candidate& c);

// Every combination of `space`, in a fixed order (pp, tp, cp, vpp, ep, etp, mbs, recompute, zero, sp: the
// outer loops first), with `full:*` expanded to every count from 1 to the layers of the layout's largest chunk
// and "auto" micro-batch sizes to every size that gives a whole micro-batch count (micro-batch mode also needs
// micro_batch_num >= pp, SimuMax's rule; when no size does, one candidate with mbs 0 stands for the layout and is
// skipped). `base` supplies the model and the fixed strategy fields.
std::vector<Candidate> enumerate(const SearchSpace& space, SearchMode mode, const config::Scenario& base,
                                 const JobShape& job);
// The same candidates in the same order, one at a time (nothing kept), and their number.
using CandidateFn = std::function<void(const Candidate&)>;
void for_each_candidate(const SearchSpace& space, SearchMode mode, const config::Scenario& base, const JobShape& job,
                        const CandidateFn& visit);
size_t count_candidates(const SearchSpace& space, SearchMode mode, const config::Scenario& base, const JobShape& job);

// The strategy of `c`: `base` with the searched fields replaced (world, groups, batch, seq_len, ZeRO, SP,
// recompute, the VPP group and the uneven last stage). Throws common::ConfigError when `c` is illegal: the
// search's own batch rules, then config::check_scenario's (run on `scratch`, whose strategy it replaces).
// REQUIRES: scratch.model and scratch.system are the base's.
void apply(const Candidate& c, const config::StrategyConfig& base, bool uneven_pp, const JobShape& job,
           config::Scenario& scratch);

// A short key for a rejection, to count skipped candidates by: the field at fault and the rule without its
// numbers, e.g. "tp_size does not divide kv_head_num".
std::string reason_key(const common::ConfigError& e);

// Layers of the largest model chunk (a pipeline stage's layers / vpp) of strategy `st`, for "full" recompute.
int64_t max_layers_per_chunk(const config::StrategyConfig& st, const config::ModelConfig& m);

}  // namespace simumax::search
