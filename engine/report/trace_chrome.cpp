// trace.json in Chrome's Trace Event Format: X slices per task and rank, M metadata naming ranks and lanes,
// s/f flow arrows for pipeline transfers, C counters of allocated memory. It is also shaped as PyTorch's Kineto
// traces are, so that Kineto readers (Holistic Trace Analysis, TensorBoard's profiler) load it: GPU work has cat
// "kernel" with args.device and args.stream (the lane), the host thread's tasks "cpu_op", pipeline barriers
// "gpu_user_annotation"; collectives are named "nccl:<task>"; the top level has schemaVersion, distributedInfo
// (backend, rank, world_size) and deviceProperties. Our own kind of task is args.kind (docs/report.md).
#include <algorithm>
#include <array>
#include <optional>
#include <set>

#include "engine/common/units.hpp"
#include "engine/common/version.hpp"
#include "engine/report/json_text.hpp"
#include "engine/report/text_file.hpp"
#include "engine/report/trace_args.hpp"
#include "engine/report/trace_internal.hpp"

namespace simumax::report::trace {

namespace {

constexpr uint16_t kLanes = graph::kNumTaskKinds;  // one per graph::TaskKind
constexpr std::array<const char*, kLanes> kLaneNames = {
    "compute", "recompute", "tp comm", "cp comm", "ep comm", "pp send/recv", "dp comm", "optimizer", "sync", "host"};
constexpr size_t kMaxFixedBytes = 320;  // an event's text besides its name and op args

uint16_t chrome_lane(const graph::Task& t) { return static_cast<uint16_t>(t.kind); }

// Sub-lane 0 is the lane itself (tid = lane); overflow sub-lanes sort right after it.
int64_t tid_of(uint16_t lane, uint16_t sub) { return sub == 0 ? lane : 100 * (lane + 1) + sub; }

// args.pass: B and W count as the backward; tasks outside every pass are the step's end.
constexpr int kPassSlots = 6;  // none, then schedule::Pass's five
static_assert(kPassSlots == 2 + static_cast<int>(schedule::Pass::kRecompute));
int pass_slot(std::optional<schedule::Pass> p) { return p ? 1 + static_cast<int>(*p) : 0; }
const char* pass_name(int slot) {
  if (slot == 0) return "step";
  switch (static_cast<schedule::Pass>(slot - 1)) {
    case schedule::Pass::kForward: return "forward";
    case schedule::Pass::kRecompute: return "recompute";
    default: return "backward";
  }
}

// Text that does not change from one event to the next, made once: names, op args, category + pass.
struct Fixed {
  std::vector<std::string> names;    // per name index: ,"name":"..."
  std::vector<std::string> nccl_names;  // the same for a collective: ,"name":"nccl:..." (Kineto's NCCL kernels)
  ArgsTable args;                    // per op_ref and pass
  std::string pp_args;               // pipeline transfers: the message size
  // [kind * kPassSlots + slot]: ,"cat":"..","args":{"kind":"..","pass":".." (Kineto's category, our kind)
  std::array<std::string, kLanes * kPassSlots> cat_pass;
};

bool is_collective(graph::TaskKind k) { return k >= graph::TaskKind::kTpComm && k <= graph::TaskKind::kDpComm; }

// Kineto's event category of a task: the GPU's work is a kernel, the host thread's an operator.
const char* kineto_category(graph::TaskKind k) {
  if (k == graph::TaskKind::kHost) return "cpu_op";
  if (k == graph::TaskKind::kBarrier) return "gpu_user_annotation";  // waiting, no kernel (HTA drops these)
  return "kernel";
}

// A task's ,"name":"..." (a collective's with Kineto's nccl prefix).
const std::string& slice_name(const Fixed& f, const graph::Task& t) {
  return is_collective(t.kind) ? f.nccl_names[t.name] : f.names[t.name];
}

// Kineto's device of a rank: the GPU's index in its node.
int64_t device_of(const RunView& v, int64_t global_rank) {
  return global_rank % std::max<int64_t>(1, v.scenario.system.num_per_node);
}

Fixed make_fixed(const RunView& v) {
  Fixed f;
  for (const auto& n : v.graph.names) {
    f.names.push_back(",\"name\":" + quoted(n));
    f.nccl_names.push_back(",\"name\":" + quoted("nccl:" + n));
  }
  f.args = make_args_table(v);
  f.pp_args = ",\"bytes\":";
  append_double(f.pp_args, v.model.p2p_bytes);
  for (int k = 0; k < kLanes; ++k) {
    for (int p = 0; p < kPassSlots; ++p) {
      const auto kind = static_cast<graph::TaskKind>(k);
      f.cat_pass[k * kPassSlots + p] = std::string(",\"cat\":\"") + kineto_category(kind) + "\",\"args\":{\"kind\":\"" +
                                       graph::to_string(kind) + "\",\"pass\":\"" + pass_name(p) + "\"";
    }
  }
  return f;
}

const std::string& task_args(const Fixed& f, const graph::Task& t) {
  static const std::string kNone;
  if (t.op_ref != graph::kNoOpRef) return f.args.get(t.op_ref, t.pass);
  return t.kind == graph::TaskKind::kPpComm ? f.pp_args : kNone;
}

// Per rank: the start of its events, with the pid already in.
struct RankText {
  std::string slice;    // {"ph":"X","pid":N,"tid":
  std::string counter;  // {"ph":"C","pid":N,"name":"memory","ts":
  std::string pid;      // N
  std::string device;   // ,"device":D (the GPU's index in its node, Kineto's args.device)
};

RankText rank_text(const RunView& v, int64_t pid) {
  RankText r;
  r.pid = std::to_string(pid);
  r.device = ",\"device\":" + std::to_string(device_of(v, pid));
  r.slice = "{\"ph\":\"X\",\"pid\":" + r.pid + ",\"tid\":";
  r.counter = "{\"ph\":\"C\",\"pid\":" + r.pid + ",\"name\":\"memory\",\"ts\":";
  return r;
}

void slice_event(TextBuffer& out, const Fixed& f, const RankText& rt, const graph::Task& t, const Slice& s) {
  const std::string& name = slice_name(f, t);
  const std::string& args = task_args(f, t);
  char* p = out.reserve(kMaxFixedBytes + rt.slice.size() + name.size() + args.size());
  p = put(p, rt.slice);
  p = put_int(p, tid_of(s.lane, s.sub));
  p = put(p, ",\"ts\":");
  p = put_us(p, s.ts_ns);
  p = put(p, ",\"dur\":");
  p = put_us(p, s.dur_ns);
  p = put(p, name);
  p = put(p, f.cat_pass[static_cast<int>(t.kind) * kPassSlots + pass_slot(t.pass)]);
  if (t.kind != graph::TaskKind::kHost) p = put_int(put(put(p, rt.device), ",\"stream\":"), tid_of(s.lane, s.sub));
  if (t.microbatch >= 0) p = put_int(put(p, ",\"mb\":"), t.microbatch);
  if (t.layer >= 0) p = put_int(put(p, ",\"layer\":"), t.layer);
  if (t.chunk >= 0) p = put_int(put(p, ",\"chunk\":"), t.chunk);
  p = put(p, args);
  out.commit(put(p, "}},\n"));
}

// A flow arrow end, in the middle of the transfer's slice on this rank.
void flow_event(TextBuffer& out, char ph, uint32_t id, const RankText& rt, const Slice& s) {
  char* p = out.reserve(kMaxFixedBytes + rt.pid.size());
  p = put(p, ph == 's' ? std::string_view("{\"ph\":\"s\"") : std::string_view("{\"ph\":\"f\",\"bp\":\"e\""));
  p = put(p, ",\"name\":\"pp transfer\",\"cat\":\"pp_flow\",\"id\":");
  p = put_int(p, id);
  p = put(p, ",\"pid\":");
  p = put(p, rt.pid);
  p = put(p, ",\"tid\":");
  p = put_int(p, tid_of(s.lane, s.sub));
  p = put(p, ",\"ts\":");
  p = put_us(p, s.ts_ns + s.dur_ns / 2);
  out.commit(put(p, "},\n"));
}

void counter_events(TextBuffer& out, const RankText& rt, const memory::MemoryTimeline& mt) {
  const auto& samples = mt.samples;
  for (size_t i = 0; i < samples.size(); ++i) {
    const int64_t ts = to_ns(samples[i].seconds);
    const int64_t bytes = samples[i].allocated_bytes();
    // A value replaced at the same instant by one at least as large is never visible: drop it (halves the
    // counter events; zero-length spikes, such as a free task's transient, are kept).
    if (i + 1 < samples.size() && to_ns(samples[i + 1].seconds) == ts && samples[i + 1].allocated_bytes() >= bytes) {
      continue;
    }
    char* p = out.reserve(kMaxFixedBytes + rt.counter.size());
    p = put(p, rt.counter);
    p = put_us(p, ts);
    p = put(p, ",\"args\":{\"allocated_bytes\":");
    p = put_int(p, bytes);
    out.commit(put(p, "}},\n"));
  }
}

void metadata_events(TextBuffer& out, const RunView& v, const RankSlices& rs, const RankText& rt) {
  std::string b = "{\"ph\":\"M\",\"pid\":" + rt.pid + ",\"name\":\"process_name\",\"args\":{\"name\":";
  append_quoted(b, process_label(v, rs.rank));
  b += "}},\n{\"ph\":\"M\",\"pid\":" + rt.pid + ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":";
  b += rt.pid + "}},\n";
  for (uint16_t lane = 0; lane < kLanes; ++lane) {
    for (uint16_t sub = 0; sub < rs.subs_per_lane[lane]; ++sub) {
      const std::string tid = std::to_string(tid_of(lane, sub));
      b += "{\"ph\":\"M\",\"pid\":" + rt.pid + ",\"tid\":" + tid + ",\"name\":\"thread_name\",\"args\":{\"name\":\"";
      b += kLaneNames[lane];
      if (sub > 0) b += " #" + std::to_string(sub + 1);
      b += "\"}},\n{\"ph\":\"M\",\"pid\":" + rt.pid + ",\"tid\":" + tid;
      b += ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(100 * lane + sub) + "}},\n";
    }
  }
  out.append(b);
}

void write_rank(TextBuffer& out, const RunView& v, const TracePlan& p, const Fixed& f, size_t i) {
  const auto& g = v.graph;
  const RankSlices rs = rank_slices(v, p.ranks[i], p.tasks[i], chrome_lane, kLanes);
  const RankText rt = rank_text(v, g.global_rank[rs.rank]);
  metadata_events(out, v, rs, rt);
  for (const Slice& s : rs.slices) {
    const graph::Task& t = g.tasks[s.task];
    slice_event(out, f, rt, t, s);
    if (t.kind != graph::TaskKind::kPpComm || t.group == graph::kNoGroup) continue;
    const uint32_t from = pp_sender(g, t), to = pp_receiver(g, t);
    if (!p.traced[from] || !p.traced[to]) continue;
    if (from == rs.rank) flow_event(out, 's', s.task, rt, s);
    if (to == rs.rank) flow_event(out, 'f', s.task, rt, s);
  }
  counter_events(out, rt, memory::memory_timeline(g, v.timeline, p.ranks[i], p.tasks[i]));
}

std::string other_data(const RunView& v, const TracePlan& p) {
  std::string b = "\n],\n\"displayTimeUnit\":\"ms\",\n\"otherData\":{\"generator\":\"simumax-sim\",\"schema\":"
                  "\"simumax_sim_trace_v1\",\"version\":";
  append_quoted(b, common::version());
  b += ",\"scenario\":";
  append_quoted(b, v.scenario.name);
  b += ",\"fidelity\":";
  append_quoted(b, config::to_string(v.scenario.strategy.fidelity));
  b += ",\"executor\":";
  append_quoted(b, v.timeline.executor);
  b += ",\"granularity\":";
  append_quoted(b, v.granularity);
  b += ",\"rank_scope\":";
  b += v.graph.num_ranks < v.scenario.strategy.world_size ? "\"stages\"" : "\"all\"";
  b += ",\"time_unit\":\"us\",\"step_time_us\":";
  append_us(b, to_ns(v.timeline.makespan));
  b += ",\"step_time_ms\":";
  append_double(b, common::ms(v.timeline.makespan));
  b += ",\"traced_ranks\":[";
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    if (i) b += ',';
    append_int(b, v.graph.global_rank[p.ranks[i]]);
  }
  b += "]}}\n";
  return b;
}

// Kineto's top-level keys. distributedInfo is the first traced rank's (a Kineto file holds one rank; HTA reads a
// folder of them, one per rank: write one with --trace-ranks R). "rank": N keeps the space HTA's scan requires.
std::string kineto_header(const RunView& v, const TracePlan& p) {
  const auto& g = v.graph;
  std::string b = "{\"schemaVersion\": 1,\n\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": ";
  append_int(b, p.ranks.empty() ? 0 : g.global_rank[p.ranks[0]]);
  b += ", \"world_size\": ";
  append_int(b, v.scenario.strategy.world_size);
  b += "},\n\"deviceProperties\": [";
  std::set<int64_t> listed;
  bool first = true;
  for (uint32_t r : p.ranks) {
    const int64_t device = device_of(v, g.global_rank[r]);
    if (!listed.insert(device).second) continue;
    b += first ? "{\"id\": " : ", {\"id\": ";
    first = false;
    append_int(b, device);
    b += ", \"name\": ";
    append_quoted(b, v.scenario.system.sys_name);
    b += ", \"totalGlobalMem\": ";
    append_int(b, static_cast<int64_t>(v.scenario.system.mem_gbs * common::kGiB));
    b += "}";
  }
  b += "],\n\"traceEvents\":[\n";
  return b;
}

}  // namespace

TraceSize estimate_chrome(const RunView& v, const TracePlan& p) {
  const Fixed f = make_fixed(v);
  TraceSize size;
  for (size_t i = 0; i < p.ranks.size(); ++i) {
    // A slice is ~160 bytes of keys, ids, times, kind, device and stream plus its name and args; a pipeline
    // transfer adds an arrow end (~100 bytes), a memory task about one counter event (~95 bytes); metadata a few
    // hundred bytes per lane (measured on the 512-GPU benchmark: within 2% of the file).
    for (uint32_t t : p.tasks[i]) {
      const graph::Task& task = v.graph.tasks[t];
      size.bytes += 160 + slice_name(f, task).size() + task_args(f, task).size();
      size.events += 1;
      if (task.kind == graph::TaskKind::kPpComm) {
        size.bytes += 100;
        size.events += 1;
      }
      if (memory::is_memory_task(task, p.ranks[i])) {
        size.bytes += 95;
        size.events += 1;
      }
    }
    size.bytes += 400 + 200 * kLanes;
    size.events += 2 + 2 * kLanes;
  }
  return size;
}

void write_chrome(const std::string& path, const RunView& v, const TracePlan& p) {
  const Fixed f = make_fixed(v);
  TextFile out(path);
  out.append(kineto_header(v, p));
  append_in_order(out, p.ranks.size(), [&](size_t i, TextBuffer& b) {
    write_rank(b, v, p, f, i);
    if (i + 1 == p.ranks.size()) b.drop_tail(",\n");  // every event ends with ",\n"; JSON allows no trailing comma
  });
  out.append(other_data(v, p));
  out.close();
}

}  // namespace simumax::report::trace
