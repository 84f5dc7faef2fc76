#include "tests/trace_event_check.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace simumax::tests {

namespace {

using nlohmann::json;
using Thread = std::pair<int64_t, int64_t>;  // pid, tid

struct FlowEnd {
  int count = 0;
  std::string name, cat;
  Thread thread;
  double ts = 0;
};

class Checker {
 public:
  TraceFacts facts;

  void event(const json& e, size_t i);
  void finish();

 private:
  void error(size_t i, const std::string& what) {
    if (facts.errors.size() < 50) facts.errors.push_back("event " + std::to_string(i) + ": " + what);
  }
  bool keys(const json& e, size_t i, const std::set<std::string>& required, const std::set<std::string>& optional);
  bool integer(const json& e, size_t i, const char* key) {
    if (e.contains(key) && e[key].is_number_integer()) return true;
    error(i, std::string(key) + " is not an integer");
    return false;
  }
  bool time(const json& e, size_t i, const char* key) {
    if (e.contains(key) && e[key].is_number() && e[key].get<double>() >= 0) return true;
    error(i, std::string(key) + " is not a number >= 0");
    return false;
  }
  void slice(const json& e, size_t i);
  void metadata(const json& e, size_t i);
  void counter(const json& e, size_t i);
  void flow(const json& e, size_t i);
  bool enclosed(const FlowEnd& end) const;

  std::map<Thread, std::vector<std::pair<double, double>>> slices_;
  std::set<int64_t> pids_, named_pids_;
  std::set<Thread> named_threads_;
  std::map<int64_t, FlowEnd> starts_, finishes_;
};

bool Checker::keys(const json& e, size_t i, const std::set<std::string>& required,
                   const std::set<std::string>& optional) {
  bool ok = true;
  for (const auto& k : required) {
    if (!e.contains(k)) {
      error(i, "missing " + k);
      ok = false;
    }
  }
  for (auto it = e.begin(); it != e.end(); ++it) {
    if (!required.count(it.key()) && !optional.count(it.key())) {
      error(i, "unexpected key " + it.key());
      ok = false;
    }
  }
  if (e.contains("name") && (!e["name"].is_string() || e["name"].get<std::string>().empty())) {
    error(i, "name is not a non-empty string");
    ok = false;
  }
  return ok && integer(e, i, "pid");
}

void Checker::slice(const json& e, size_t i) {
  if (!keys(e, i, {"ph", "pid", "tid", "ts", "dur", "name", "cat", "args"}, {})) return;
  if (!integer(e, i, "tid") || !time(e, i, "ts") || !time(e, i, "dur")) return;
  if (!e["cat"].is_string() || !e["args"].is_object()) return error(i, "cat or args of the wrong type");
  if (!e["args"].contains("pass") || !e["args"]["pass"].is_string()) error(i, "args.pass missing");
  for (const char* k : {"mb", "layer", "chunk", "flops", "bytes"}) {
    if (e["args"].contains(k) && !e["args"][k].is_number()) error(i, std::string("args.") + k + " not a number");
  }
  const double ts = e["ts"].get<double>(), end = ts + e["dur"].get<double>();
  slices_[{e["pid"].get<int64_t>(), e["tid"].get<int64_t>()}].emplace_back(ts, end);
  pids_.insert(e["pid"].get<int64_t>());
  facts.last_end_us = std::max(facts.last_end_us, end);
  ++facts.slices;
}

void Checker::metadata(const json& e, size_t i) {
  if (!keys(e, i, {"ph", "pid", "name", "args"}, {"tid"})) return;
  const std::string name = e["name"];
  const json& args = e["args"];
  const bool thread = name == "thread_name" || name == "thread_sort_index";
  if (thread != e.contains("tid") || (thread && !integer(e, i, "tid"))) return error(i, "tid does not fit " + name);
  if (name == "process_name" || name == "thread_name") {
    if (!args.is_object() || !args.contains("name") || !args["name"].is_string()) return error(i, "args.name");
    if (thread) named_threads_.insert({e["pid"].get<int64_t>(), e["tid"].get<int64_t>()});
    if (!thread) named_pids_.insert(e["pid"].get<int64_t>());
  } else if (name == "process_sort_index" || name == "thread_sort_index") {
    if (!args.is_object() || !args.contains("sort_index") || !args["sort_index"].is_number_integer()) {
      error(i, "args.sort_index");
    }
  } else {
    error(i, "unknown metadata " + name);
  }
  ++facts.metadata;
}

void Checker::counter(const json& e, size_t i) {
  if (!keys(e, i, {"ph", "pid", "name", "ts", "args"}, {}) || !time(e, i, "ts")) return;
  if (!e["args"].is_object() || e["args"].empty()) return error(i, "counter without values");
  for (auto it = e["args"].begin(); it != e["args"].end(); ++it) {
    if (!it->is_number()) error(i, "counter value " + it.key() + " is not a number");
  }
  ++facts.counters;
}

void Checker::flow(const json& e, size_t i) {
  const bool start = e["ph"] == "s";
  const std::set<std::string> required = start ? std::set<std::string>{"ph", "pid", "tid", "ts", "name", "cat", "id"}
                                               : std::set<std::string>{"ph", "pid", "tid", "ts", "name", "cat", "id",
                                                                       "bp"};
  if (!keys(e, i, required, {}) || !integer(e, i, "tid") || !integer(e, i, "id") || !time(e, i, "ts")) return;
  if (!start && e["bp"] != "e") return error(i, "flow end without bp \"e\"");
  FlowEnd& end = (start ? starts_ : finishes_)[e["id"].get<int64_t>()];
  end.count += 1;
  end.name = e["name"];
  end.cat = e["cat"];
  end.thread = {e["pid"].get<int64_t>(), e["tid"].get<int64_t>()};
  end.ts = e["ts"].get<double>();
  ++facts.flows;
}

void Checker::event(const json& e, size_t i) {
  if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) return error(i, "not an event with ph");
  const std::string ph = e["ph"];
  if (ph == "X") return slice(e, i);
  if (ph == "M") return metadata(e, i);
  if (ph == "C") return counter(e, i);
  if (ph == "s" || ph == "f") return flow(e, i);
  error(i, "unexpected ph " + ph);
}

bool Checker::enclosed(const FlowEnd& end) const {
  const auto it = slices_.find(end.thread);
  if (it == slices_.end()) return false;
  return std::any_of(it->second.begin(), it->second.end(),
                     [&](const auto& s) { return s.first <= end.ts && end.ts <= s.second; });
}

void Checker::finish() {
  for (auto& [thread, list] : slices_) {
    std::sort(list.begin(), list.end());
    for (size_t k = 1; k < list.size(); ++k) {
      if (list[k].first < list[k - 1].second - 1e-9) {
        error(0, "slices overlap on pid " + std::to_string(thread.first) + " tid " + std::to_string(thread.second));
      }
    }
    if (!named_threads_.count(thread)) error(0, "no thread_name for tid " + std::to_string(thread.second));
  }
  for (int64_t pid : pids_) {
    if (!named_pids_.count(pid)) error(0, "no process_name for pid " + std::to_string(pid));
  }
  for (const auto& [id, s] : starts_) {
    const auto f = finishes_.find(id);
    if (s.count != 1 || f == finishes_.end() || f->second.count != 1) {
      error(0, "flow " + std::to_string(id) + " is not one s and one f");
      continue;
    }
    if (s.name != f->second.name || s.cat != f->second.cat || s.ts > f->second.ts) error(0, "flow mismatch");
    if (!enclosed(s) || !enclosed(f->second)) error(0, "flow " + std::to_string(id) + " not bound to a slice");
  }
  if (finishes_.size() != starts_.size()) error(0, "flow ends without starts");
  facts.processes = pids_.size();
}

}  // namespace

TraceFacts check_trace_event_format(const json& doc) {
  Checker c;
  if (!doc.is_object() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) {
    c.facts.errors.push_back("no traceEvents array");
    return c.facts;
  }
  if (!doc.contains("displayTimeUnit") || doc["displayTimeUnit"] != "ms") c.facts.errors.push_back("displayTimeUnit");
  if (!doc.contains("otherData") || !doc["otherData"].is_object()) c.facts.errors.push_back("otherData");
  const auto& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) c.event(events[i], i);
  c.finish();
  return c.facts;
}

}  // namespace simumax::tests
