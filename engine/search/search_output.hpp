// What a search writes: the ranked table on screen, search.csv / search.json with every candidate, and the winner
// as a ready-to-run scenario file.
#pragma once

#include <string>

#include "engine/config/scenario.hpp"
#include "engine/report/search_io.hpp"
#include "engine/search/search.hpp"

namespace simumax::search {

// One flat record per candidate (enumeration order): its configuration (with dp and the expert-data-parallel
// size edp derived), status and reason, the fast figures,
// memory fit and headroom (negative: over by that much), rank among those that fit (null otherwise), and the
// sim re-check's figures when it was re-checked. Memory in GiB, time in ms.
std::vector<report::JsonFields> candidate_records(const SearchResult& r, const SearchRequest& request,
                                                 OutcomeStore& store);

// search.csv: a header line, then one line per record (null -> empty cell).
std::string records_csv(const std::vector<report::JsonFields>& records);

// search.csv (records_csv of candidate_records) and search.json (the request, the counts, skip reasons with their
// counts, then every candidate's record) in `dir`, both written record by record as `store` gives them back:
// memory stays bounded whatever the number of candidates. Throws common::UsageError when a file cannot be written.
void write_search_files(const std::string& dir, const SearchResult& r, const SearchRequest& request,
                        const std::string& title, OutcomeStore& store);

// The text printed on screen: the counts, skip reasons, the closest misses on memory, and the best `top` (at most
// the request's `keep`).
std::string ranked_table(const SearchResult& r, const SearchRequest& request, const std::string& title, size_t top);

// The strategy keys the search controls, with the values of `st` (written over the base strategy's object so
// that loading the scenario gives `st` back). `recompute` kAsBase leaves the recompute keys out.
report::JsonFields strategy_fields(const config::StrategyConfig& st, RecomputeKind recompute);

// A scenario file for `s` (a candidate's scenario, from Evaluator::scenario()) to be written at `path`: model and
// system paths relative to its folder, the strategy inline (the base strategy file's keys, then the searched
// ones). `base` supplies the file paths the search was given.
std::string scenario_text(const config::Scenario& s, const Candidate& c, const config::Scenario& base,
                          const std::string& path, const std::string& description);

}  // namespace simumax::search
