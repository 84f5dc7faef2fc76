// tracing_logs.json in SimuMax's layout (../shared/reference/simumax-memory-simulator-search.md §4.7a): a bare
// list of events, pids "rank{N}", SimuMax's lane names as tids, call stacks and gids in args, "comm_pair"
// flows for pipeline transfers, and "mem" counters (start / peak / end of each memory task).
#include <array>
#include <cstdio>

#include "engine/report/json_text.hpp"
#include "engine/report/simumax_strings.hpp"
#include "engine/report/text_file.hpp"
#include "engine/report/trace_args.hpp"
#include "engine/report/trace_internal.hpp"

namespace simumax::report::trace {

namespace {

constexpr uint16_t kLanes = 4;
constexpr std::array<const char*, kLanes> kLaneNames = {"02_fwd_compute", "03_bwd_compute", "07_pp_detail",
                                                        "08_comm"};

// SimuMax logs no zero-length spans and has no barrier or host lane; our optimizer runs on its compute lane.
uint16_t simumax_lane(const graph::Task& t) {
  if (t.seconds == 0 || t.kind == graph::TaskKind::kBarrier || t.kind == graph::TaskKind::kHost) return kSkip;
  switch (t.kind) {
    case graph::TaskKind::kCompute: return t.pass == schedule::Pass::kBackward ? 1 : 0;
    case graph::TaskKind::kRecompute: return 1;
    case graph::TaskKind::kOptimizer: return 0;
    case graph::TaskKind::kPpComm: return 2;
    default: return 3;
  }
}

std::string tid_name(uint16_t lane, uint16_t sub) {
  std::string s = kLaneNames[lane];
  if (lane == 2) return s + "_" + std::to_string(sub);  // SimuMax's packed sync send/recv sub-lanes
  return sub == 0 ? s : s + "_" + std::to_string(sub);
}

// The name without our pass suffix: "attn.linear_qkv.fwd" -> "attn.linear_qkv".
std::string base_of(const std::string& name) {
  const size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(0, dot);
}

struct Names {
  std::string base;  // SimuMax's base_name
  std::string gid;   // collectives and transfers; empty for compute
};

// SimuMax's group ids (core/utils.py:get_rank_group): the rank's coordinates outside the group's dimension.
std::string group_id(const RunView& v, const char* group, uint32_t rank) {
  const RankCoords c = coords_of(v.scenario, v.graph.global_rank[rank]);
  const std::string g = group;
  char buf[96];
  if (g == "tp" || g == "etp") {
    std::snprintf(buf, sizeof buf, "tp_group:pp:%lld-cp:%lld-dp:%lld", static_cast<long long>(c.pp),
                  static_cast<long long>(c.cp), static_cast<long long>(c.dp));
  } else if (g == "cp") {
    std::snprintf(buf, sizeof buf, "cp_group:tp:%lld-pp:%lld-dp:%lld", static_cast<long long>(c.tp),
                  static_cast<long long>(c.pp), static_cast<long long>(c.dp));
  } else {  // dp, ep: SimuMax's ids name tp and pp
    std::snprintf(buf, sizeof buf, "%s_group:tp:%lld-pp:%lld", group, static_cast<long long>(c.tp),
                  static_cast<long long>(c.pp));
  }
  return buf;
}

Names names_of(const RunView& v, const graph::Task& t, uint32_t rank, uint32_t task_id) {
  const auto& g = v.graph;
  Names n;
  const graph::OpRef r = t.op_ref == graph::kNoOpRef ? graph::OpRef{} : g.op_refs[t.op_ref];
  const model::Op* op = op_of(v, r);
  if (t.kind == graph::TaskKind::kPpComm) {
    const bool fwd = t.pass == schedule::Pass::kForward, sends = pp_sender(g, t) == rank;
    n.base = sends ? (fwd ? "send_next" : "send_prev") : (fwd ? "recv_prev" : "recv_next");
    n.gid = "send_recv-" + std::to_string(g.global_rank[pp_sender(g, t)]) + "-" +
            std::to_string(g.global_rank[pp_receiver(g, t)]) + (fwd ? "-forward-" : "-backward-") +
            std::to_string(t.microbatch) + "-pp_group";
  } else if (op != nullptr && r.comm >= 0) {
    const model::Comm& c = op->comm[r.work][r.comm];
    n.base = model::to_string(c.coll);
    n.gid = n.base + "-microbatch:" + std::to_string(t.microbatch) + "-layer:" + std::to_string(t.layer) +
            "-name:" + c.stage + "-" + group_id(v, model::to_string(c.group), rank);
  } else if (t.kind == graph::TaskKind::kDpComm) {
    // Our task id tells the buckets apart (SimuMax numbers collectives per thread).
    n.base = g.names[t.name];
    n.gid = n.base + std::to_string(task_id) + "-" + group_id(v, "dp", rank);
  } else {
    n.base = base_of(g.names[t.name]);
  }
  return n;
}

void call_stack(std::string& b, const RunView& v, const graph::Task& t, uint32_t rank, const std::string& base) {
  b += "[";
  if (t.microbatch >= 0) {
    b += "\"microbatch" + std::to_string(t.microbatch) + "\",";
    const int ci = v.model.chunk_of_stage[v.graph.pp_stage[rank]];
    b += "\"GPTModel_" + std::string(model::to_string(v.model.chunks[ci].stage)) + "_pp_stage\",";
    if (t.layer >= 0) b += "\"TransformerLayer" + std::to_string(t.layer) + "\",";
  } else {
    b += "\"step\",";
  }
  append_quoted(b, base);
  b += "]";
}

void slice_event(std::string& b, const RunView& v, const Slice& s, uint32_t rank, const std::string& pid,
                 uint64_t id, bool paired) {
  const graph::Task& t = v.graph.tasks[s.task];
  const Names n = names_of(v, t, rank, s.task);
  const bool comm = s.lane >= 2;
  b += "{\"name\":";
  append_quoted(b, n.base);
  b += comm ? ",\"cat\":\"comm\",\"ph\":\"X\",\"ts\":" : ",\"cat\":\"compute\",\"ph\":\"X\",\"ts\":";
  append_us(b, s.ts_ns);
  b += ",\"dur\":";
  append_us(b, s.dur_ns);
  b += ",\"pid\":" + pid + ",\"tid\":\"" + tid_name(s.lane, s.sub) + "\",\"id\":";
  append_int(b, static_cast<int64_t>(id));
  b += ",\"args\":{\"call_stack\":";
  call_stack(b, v, t, rank, n.base);
  // SimuMax's values (core/generate_tracing.py): stream_type "compute" or "comm"; a pipeline send/recv's lane is
  // its packed sub-lane "pp_detail_<k>" (lane_base "pp_detail", detail_lane_idx k), a collective's "comm".
  if (!comm) {
    b += ",\"stream_type\":\"compute\",\"lane\":\"compute\",\"lane_base\":\"compute\"";
  } else if (s.lane == 2) {
    b += ",\"stream_type\":\"comm\",\"lane\":\"pp_detail_" + std::to_string(s.sub) +
         "\",\"lane_base\":\"pp_detail\",\"detail_lane_idx\":" + std::to_string(s.sub);
  } else {
    b += ",\"stream_type\":\"comm\",\"lane\":\"comm\",\"lane_base\":\"comm\"";
  }
  b += ",\"direction\":\"";
  b += simumax_phase(t.pass);
  b += "\",\"gid\":";
  b += n.gid.empty() ? "null" : quoted(n.gid);
  b += ",\"correlation_id\":null,\"base_name\":";
  append_quoted(b, n.base);
  b += ",\"post_ts\":null,\"post_order\":null}},\n";
  if (!paired) return;
  // The arrow runs from the sender's slice to the receiver's; SimuMax nudges its anchors inside the slices.
  const bool sends = pp_sender(v.graph, t) == rank;
  b += "{\"name\":" + quoted("pair:" + n.gid) + ",\"cat\":\"comm_pair\",\"ph\":\"";
  b += sends ? "s" : "f\",\"bp\":\"e";
  b += "\",\"ts\":";
  append_us(b, s.ts_ns + s.dur_ns / 2);
  b += ",\"pid\":" + pid + ",\"tid\":\"" + tid_name(s.lane, s.sub) + "\",\"id\":";
  append_int(b, s.task);
  b += ",\"args\":{\"gid\":" + quoted(n.gid) + "}},\n";
}

void mem_event(std::string& b, const std::string& pid, double seconds, int64_t stat, int64_t cached, int64_t temp,
               int64_t tokens, const char* phase, const std::string& op, const char* kind) {
  b += "{\"name\":\"mem\",\"cat\":\"memory\",\"ph\":\"C\",\"ts\":";
  append_us(b, to_ns(seconds));
  b += ",\"pid\":" + pid + ",\"args\":{\"allocated_bytes\":";
  append_int(b, stat + cached + temp);
  b += ",\"static_bytes\":";
  append_int(b, stat);
  b += ",\"cached_bytes\":";
  append_int(b, cached);
  b += ",\"temp_bytes\":";
  append_int(b, temp);
  b += ",\"cached_token_count\":";
  append_int(b, tokens);
  b += ",\"phase\":\"" + std::string(phase) + "\",\"op_name\":";
  append_quoted(b, op);
  b += ",\"kind\":\"" + std::string(kind) + "\"}},\n";
}

void mem_events(TextFile& out, const RunView& v, const TracePlan& p, size_t i, const std::string& pid) {
  const auto& g = v.graph;
  const uint32_t rank = p.ranks[i];
  const int64_t stat = g.rank_static[rank].total();
  int64_t cached = 0, tokens = 0;
  std::string b;
  mem_event(b, pid, 0.0, stat, 0, 0, 0, "init", "", "init");
  for (uint32_t t : p.tasks[i]) {
    const auto& task = g.tasks[t];
    if (!memory::is_memory_task(task, rank)) continue;
    const char* phase = simumax_phase(task.pass);
    const std::string& op = g.names[task.name];
    mem_event(b, pid, v.timeline.start[t], stat, cached, 0, tokens, phase, op, "start");
    mem_event(b, pid, v.timeline.start[t], stat, cached, task.mem_peak_bytes, tokens, phase, op, "peak");
    cached += task.mem_delta_bytes;
    tokens += task.mem_delta_bytes > 0 ? 1 : (task.mem_delta_bytes < 0 ? -1 : 0);
    mem_event(b, pid, v.timeline.end[t], stat, cached, 0, tokens, phase, op, "end");
    out.append(b);
    b.clear();
  }
  out.append(b);
}

// One metadata event; GCC 12 misreports chained std::string + as overlapping copies, so append piecewise.
void meta(std::string& b, const char* what, const std::string& pid, const std::string& tid, const char* key,
          const std::string& value) {
  b += "{\"name\":\"";
  b += what;
  b += "\",\"ph\":\"M\",\"pid\":";
  b += pid;
  if (!tid.empty()) {
    b += ",\"tid\":";
    b += tid;
  }
  b += ",\"args\":{\"";
  b += key;
  b += "\":";
  b += value;
  b += "}},\n";
}

// SimuMax's thread order (generate_tracing.py _thread_sort_index): fwd compute 2, bwd compute 3, pipeline
// sub-lane k 60 + k, collectives 80, any other lane (our extra sub-lanes) 100.
int thread_sort_index(uint16_t lane, uint16_t sub) {
  constexpr int kIndex[kLanes] = {2, 3, 60, 80};
  if (lane == 2) return kIndex[lane] + sub;
  return sub == 0 ? kIndex[lane] : 100;
}

void metadata(std::string& b, const RankSlices& rs, const std::string& pid, uint32_t job) {
  meta(b, "process_name", pid, "", "name", pid);
  meta(b, "process_sort_index", pid, "", "sort_index", std::to_string(job));
  for (uint16_t lane = 0; lane < kLanes; ++lane) {
    for (uint16_t sub = 0; sub < rs.subs_per_lane[lane]; ++sub) {
      const std::string tid = quoted(tid_name(lane, sub));
      meta(b, "thread_name", pid, tid, "name", tid);
      meta(b, "thread_sort_index", pid, tid, "sort_index", std::to_string(thread_sort_index(lane, sub)));
    }
  }
}

}  // namespace

TraceSize estimate_simumax(const RunView& v, const TracePlan& p) {
  TraceSize size;
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    for (uint32_t t : p.tasks[i]) {
      const auto& task = v.graph.tasks[t];
      if (simumax_lane(task) == kSkip) continue;
      // An X event is ~420 bytes of keys, times and call stack, plus its name twice.
      size.bytes += 420 + 2 * v.graph.names[task.name].size();
      size.events += task.kind == graph::TaskKind::kPpComm ? 2 : 1;
      if (memory::is_memory_task(task, p.ranks[i])) {
        size.bytes += 3 * (250 + v.graph.names[task.name].size());
        size.events += 3;
      }
    }
    size.bytes += 2000;
    size.events += 12;
  }
  return size;
}

void write_simumax(const std::string& path, const RunView& v, const TracePlan& p) {
  TextFile out(path);
  out.append("[\n");
  std::string b;
  uint64_t id = 0;
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    const uint32_t job = v.graph.global_rank[p.ranks[i]];
    const std::string pid = "\"rank" + std::to_string(job) + "\"";
    const RankSlices rs = rank_slices(v, p.ranks[i], p.tasks[i], simumax_lane, kLanes);
    metadata(b, rs, pid, job);
    out.append(b);
    b.clear();
    for (const Slice& s : rs.slices) {
      const auto& t = v.graph.tasks[s.task];
      // An arrow needs both sides of the transfer in the trace.
      const bool paired = t.kind == graph::TaskKind::kPpComm && p.traced[pp_sender(v.graph, t)] &&
                          p.traced[pp_receiver(v.graph, t)];
      slice_event(b, v, s, p.ranks[i], pid, id++, paired);
      out.append(b);
      b.clear();
    }
    mem_events(out, v, p, i, pid);
  }
  out.drop_tail(",\n");
  out.append("\n]\n");
  out.close();
}

}  // namespace simumax::report::trace
