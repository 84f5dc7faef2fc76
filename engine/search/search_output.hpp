// What a search writes: the ranked table on screen, search.csv / search.json with every candidate, and the winner
// as a ready-to-run scenario file.
#pragma once

#include <functional>
#include <string>

#include "engine/config/scenario.hpp"
#include "engine/report/record_fields.hpp"
#include "engine/search/search.hpp"

namespace simumax::search {

// Calls `fn` with one flat record per candidate (enumeration order, as `store` gives them back): its configuration
// (with dp and the expert-data-parallel size edp derived), status and reason, the fast figures, memory fit and
// headroom (negative: over by that much), rank among those that fit (null otherwise), and the sim re-check's
// figures when it was re-checked. Memory in GiB, time in ms. A record is valid only during its call.
void for_each_candidate_record(const SearchResult& r, const SearchRequest& request, OutcomeStore& store,
                               const std::function<void(const report::Fields&)>& fn);

// search.csv's text: a header line, then one line per candidate's record (null -> empty cell).
std::string candidates_csv(const SearchResult& r, const SearchRequest& request, OutcomeStore& store);

// Which candidates search.csv / search.json hold: every one, or those that fit (a 283,500-layout space wrote
// 244 MB of records; the fitting ones are what a user reads). search.json's "records" says which.
enum class RecordScope { kAll, kFit };
const char* to_string(RecordScope s);

// search.csv and search.json (the request, the counts, skip reasons with their
// counts, then the candidates' records, `scope`) in `dir`, both written record by record as `store` gives them
// back: memory stays bounded whatever the number of candidates. Throws common::UsageError when a file cannot be
// written.
void write_search_files(const std::string& dir, const SearchResult& r, const SearchRequest& request,
                        const std::string& title, OutcomeStore& store, RecordScope scope = RecordScope::kAll);

// The text printed on screen: the counts, skip reasons, the closest misses on memory, and the best `top` (at most
// the request's `keep`).
std::string ranked_table(const SearchResult& r, const SearchRequest& request, const std::string& title, size_t top);

// A scenario file for `s` (a candidate's scenario, from Evaluator::scenario()) to be written at `path`: model and
// system paths relative to its folder, the strategy inline (the base strategy file's keys, then the searched
// ones: config::scenario_file_json, so that loading the scenario gives the candidate's strategy back; a candidate
// whose recompute is kAsBase keeps the base file's recompute keys). `base` supplies the file paths the search was
// given.
std::string scenario_text(const config::Scenario& s, const Candidate& c, const config::Scenario& base,
                          const std::string& path, const std::string& description);

}  // namespace simumax::search
