// The strategy search for Python: the same enumeration, fast evaluation on every core, fit and ranking as
// `simumax-sim search`, in this process; every candidate's record comes back as a plain dict.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/stl.h>

#include "engine/common/error.hpp"
#include "engine/config/config_text.hpp"
#include "engine/search/search.hpp"
#include "engine/search/search_output.hpp"
#include "python/bindings.hpp"

namespace py = pybind11;

namespace simumax::python {

namespace {

struct SearchRun {
  config::Scenario base;
  search::SearchRequest request;
  search::SearchResult result;
  // Every candidate's outcome (a Python search is small enough to keep them; records() reads them back).
  mutable search::MemoryStore store;
};

// A record's fields as a dict. Records share their keys: each key's Python string is made once (a third of the
// conversion's time).
class DictSink final : public report::FieldSink {
 public:
  py::dict take() {
    next_ = 0;
    return std::exchange(d_, py::dict());
  }
  void null(const std::string& key) override { d_[name(key)] = py::none(); }
  void boolean(const std::string& key, bool v) override { d_[name(key)] = py::bool_(v); }
  void integer(const std::string& key, int64_t v) override { d_[name(key)] = py::int_(v); }
  void number(const std::string& key, double v) override { d_[name(key)] = py::float_(v); }
  void text(const std::string& key, const std::string& v) override { d_[name(key)] = py::str(v); }

 private:
  const py::str& name(const std::string& key) {
    const size_t i = next_++;
    if (i == names_.size()) names_.emplace_back(), keys_.emplace_back();
    if (names_[i] != key) names_[i] = key, keys_[i] = py::str(key);
    return keys_[i];
  }
  py::dict d_;
  size_t next_ = 0;
  std::vector<std::string> names_;
  std::vector<py::str> keys_;
};

search::SearchMode parse_mode(const std::string& mode) {
  if (mode == "grid") return search::SearchMode::kGrid;
  if (mode == "micro-batch") return search::SearchMode::kMicroBatch;
  if (mode == "recompute") return search::SearchMode::kRecompute;
  throw common::UsageError("mode='" + mode + "': expected one of grid, micro-batch, recompute");
}

// The lists in the CLI's syntax ("1,2,4", "none,selective,full:*", "on,off"), keyed by the CLI's option names.
search::SpaceArgs space_args(const std::map<std::string, std::string>& lists, bool uneven_pp) {
  search::SpaceArgs a;
  a.uneven_pp = uneven_pp;
  const std::map<std::string, std::optional<std::string>*> slots = {
      {"tp", &a.tp},   {"cp", &a.cp},   {"pp", &a.pp},   {"ep", &a.ep},   {"etp", &a.etp},
      {"vpp", &a.vpp}, {"mbs", &a.mbs}, {"recompute", &a.recompute}, {"zero", &a.zero}, {"sp", &a.sp}};
  for (const auto& [key, text] : lists) {
    const auto it = slots.find(key);
    if (it == slots.end()) {
      throw common::UsageError("search list '" + key + "': expected tp, cp, pp, ep, etp, vpp, mbs, recompute, zero or sp");
    }
    *it->second = text;
  }
  return a;
}

config::Scenario search_base(const std::string& model, const std::string& model_label,
                             const std::optional<std::string>& strategy, const std::string& strategy_label,
                             const std::string& system, const std::string& system_label, int64_t seq_len,
                             const std::string& fidelity) {
  std::optional<config::ConfigText> strategy_text;
  if (strategy) strategy_text = config::ConfigText{*strategy, strategy_label};
  config::Scenario s = config::scenario_from_texts({model, model_label}, strategy_text, {system, system_label},
                                                   "search", false);
  if (!strategy) s.strategy.micro_batch_size = 1, s.strategy.micro_batch_num = 1;
  if (seq_len > 0) s.strategy.seq_len = seq_len;
  if (s.strategy.seq_len <= 0) throw common::UsageError("seq_len is required without a strategy");
  if (fidelity == "simumax") s.strategy.fidelity = config::Fidelity::kSimuMax;
  else if (fidelity == "megatron") s.strategy.fidelity = config::Fidelity::kMegatron;
  else if (!fidelity.empty()) throw common::UsageError("fidelity='" + fidelity + "': expected megatron or simumax");
  return s;
}

std::shared_ptr<SearchRun> run_search(const config::Scenario& base, int64_t world_size, int64_t global_batch_size,
                                      const std::string& mode, const std::map<std::string, std::string>& lists,
                                      bool uneven_pp, const std::string& objective, double margin_gib, int threads,
                                      size_t max_candidates) {
  if (threads < 0) throw common::UsageError("threads must be 0 (one per core) or positive");
  auto out = std::make_shared<SearchRun>();
  out->base = base;
  search::SearchRequest& q = out->request;
  q.mode = parse_mode(mode);
  q.job = {world_size, global_batch_size, base.strategy.seq_len};
  q.memory_margin_gib = margin_gib;
  search::check_request(base, q);  // before the space: a world of 2^40 GPUs is refused, not enumerated
  q.space = search::build_space(q.mode, space_args(lists, uneven_pp), base, world_size);
  q.objective = search::parse_objective(objective);
  q.threads = threads;
  q.max_candidates = max_candidates;
  py::gil_scoped_release unlocked;
  out->result = search::run_search(out->base, q, out->store);
  return out;
}

}  // namespace

void bind_search(py::module_& m) {
  m.def("search_base", &search_base, py::arg("model"), py::arg("model_label"), py::arg("strategy"),
        py::arg("strategy_label"), py::arg("system"), py::arg("system_label"), py::arg("seq_len") = 0,
        py::arg("fidelity") = "",
        "the base scenario of a search (as `simumax-sim search --model --system [--strategy] [--seq-len]`)");
  py::class_<SearchRun, std::shared_ptr<SearchRun>>(m, "SearchRun", "a finished strategy search")
      .def_property_readonly("candidates", [](const SearchRun& s) { return s.result.candidates; })
      .def_property_readonly("evaluated", [](const SearchRun& s) { return s.result.evaluated; })
      .def_property_readonly("failed", [](const SearchRun& s) { return s.result.failed; })
      .def_property_readonly("too_big", [](const SearchRun& s) { return s.result.too_big; })
      .def_property_readonly("eval_seconds", [](const SearchRun& s) { return s.result.eval_seconds; })
      .def_property_readonly("threads", [](const SearchRun& s) { return s.result.threads; })
      .def_property_readonly("ranking", [](const SearchRun& s) { return s.result.ranking; })
      .def_property_readonly("skip_reasons", [](const SearchRun& s) { return s.result.skip_reasons; })
      .def("records", [](const SearchRun& s) {
        py::list out;
        DictSink sink;
        search::for_each_candidate_record(s.result, s.request, s.store, [&](const report::Fields& record) {
          record(sink);
          out.append(sink.take());
        });
        return out;
      }, "every candidate (enumeration order) as the flat record of search.json")
      .def("table", [](const SearchRun& s, const std::string& title, size_t top) {
        return search::ranked_table(s.result, s.request, title, top);
      }, py::arg("title"), py::arg("top") = 10, "the ranked table `simumax-sim search` prints")
      .def("write_files", [](const SearchRun& s, const std::string& dir, const std::string& title) {
        search::write_search_files(dir, s.result, s.request, title, s.store);
      }, py::arg("dir"), py::arg("title"), "writes search.csv and search.json into the existing folder `dir`")
      .def("scenario", [](const SearchRun& s, size_t index) {
        if (index >= s.store.size()) throw py::index_error("no candidate " + std::to_string(index));
        search::Evaluator ev(s.base, s.request.job, s.request.space.uneven_pp);
        const search::Evaluation e = ev.evaluate(s.store.at(index).candidate);
        if (e.status == search::Status::kSkipped) throw common::UsageError("candidate " + std::to_string(index) +
                                                                           " is illegal: " + e.detail);
        return std::make_shared<config::Scenario>(ev.scenario());
      }, py::arg("index"), "the scenario of candidate `index` (its strategy as the search built it), for run()");
  m.def("search", &run_search, py::arg("base"), py::arg("world_size"), py::arg("global_batch_size"),
        py::arg("mode") = "grid", py::arg("lists") = std::map<std::string, std::string>{}, py::arg("uneven_pp") = true,
        py::arg("objective") = "step-time", py::arg("memory_margin_gib") = 6.0, py::arg("threads") = 0,
        py::arg("max_candidates") = search::SearchRequest{}.max_candidates,
        "evaluates every candidate of the space with the fast executor on `threads` threads (0: every core)");
}

}  // namespace simumax::python
