// Streams the events of a Chrome Trace Event Format file (plain or gzip JSON) to a callback, without building
// a JSON tree: real profiler traces are tens of MB and only a few fields of each event matter.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

namespace simumax::report {

// The fields of one trace event that compare reads; absent fields keep their defaults.
struct ChromeEvent {
  std::string ph;    // "X" complete event, "M" metadata, "s"/"f" flow, "C" counter, ...
  std::string cat;   // Kineto: "kernel", "gpu_memcpy", "cuda_runtime", "user_annotation", ...
  std::string name;
  int64_t pid = 0;   // string ids that are not integers (Kineto's "Spans") read as 0 with *_numeric false
  int64_t tid = 0;
  bool pid_numeric = false;
  bool tid_numeric = false;
  double ts_us = 0;
  double dur_us = 0;
  int64_t correlation = -1;  // args.correlation: Kineto's link from a CUDA runtime call to the GPU work it launched
  int64_t stream = -1;       // args.stream: the CUDA stream of a GPU event
  std::string arg_name;      // args.name: the thread or process name of a metadata event
  std::string collective;    // args["Collective name"]: PyTorch >= 2.1's record_param_comms / NCCL kernel label
  std::string input_dims;    // args["Input Dims"] of a CPU op (record_shapes=True), compact: "[[8,1024],[1024,512]]"
  std::string input_type;    // the first entry of args["Input type"] of a CPU op: "float", "c10::BFloat16", ...
  double flops = -1;         // args.flops of our own task (-1: none)
  std::string shape_key;     // args.shape_key of our own task: the efficiency-table key it was timed with
  int64_t index = 0;         // the event's place in the event list (for messages)
  std::string arg_pass;      // args.pass of our own task (forward, backward, recompute, step)
  std::string arg_kind;      // args.kind of our own task (compute, tp_comm, ...; before issue 34 it was the cat)
  double arg_bytes = -1;     // args.bytes of our own task (-1: none)
  // A collective's message as PyTorch >= 2.1 records it (record_param_comms, and the NCCL kernel itself):
  // args["In msg nelems"], ["Out msg nelems"], ["Group size"] (-1: absent or not a non-negative integer) and
  // ["dtype"] ("Float", "BFloat16", ...).
  int64_t in_nelems = -1;
  int64_t out_nelems = -1;
  int64_t group_size = -1;
  std::string msg_dtype;
};

struct ChromeTraceInfo {
  int64_t events = 0;                 // objects in traceEvents
  std::optional<int64_t> rank;        // Kineto's top-level distributedInfo.rank
  std::optional<int64_t> world_size;  // distributedInfo.world_size
};

// Calls `on_event` for every object of the trace's event list, in file order. The file is either an object with
// a "traceEvents" array (JSON Object Format) or a bare array of events (JSON Array Format).
// Throws ConfigError(path, "", what) when the file cannot be read, is not JSON ("invalid JSON at line L,
// column C: ..."), or holds no event list ("not a Chrome trace: ..."); ConfigError(path, "/traceEvents/<i>", what)
// for a complete event without a finite ts or a dur >= 0, a numeric pid that is not an integer in the range of an
// int (32 bits: a process id, or the rank in our own traces), or a numeric tid that is not an integer of 64 bits;
// ConfigError(path, "/distributedInfo/rank" or "/distributedInfo/world_size", what) for one outside an int.
// The file is read by a lexer of our own (several times faster than nlohmann's on gigabyte traces); at anything it
// does not take, nlohmann's SAX parser reads the file again and decides, so what is refused and how is nlohmann's.
ChromeTraceInfo read_chrome_trace(const std::string& path, const std::function<void(const ChromeEvent&)>& on_event);

// The same, with nlohmann's SAX parser alone: read_chrome_trace's fallback, and its reference in the tests.
ChromeTraceInfo read_chrome_trace_with_nlohmann(const std::string& path,
                                                const std::function<void(const ChromeEvent&)>& on_event);

}  // namespace simumax::report
