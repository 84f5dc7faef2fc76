#include "engine/compare/kineto_collectives.hpp"

#include <array>
#include <cctype>
#include <string>
#include <utility>

#include "engine/compare/gemm_shape.hpp"

namespace simumax::compare {

namespace {

// "_reduce_scatter_base" -> "reducescatter": the spellings of one collective across PyTorch versions differ in
// underscores, a "_base" / "_tensor" / "_coalesced" / "_single" / "v" suffix and case.
std::string canonical(std::string_view name) {
  std::string s;
  for (char c : name) {
    if (c != '_') s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* suffix : {"coalesced", "tensor", "into", "base", "single"}) {
    const std::string_view x(suffix);
    while (s.size() > x.size() && s.ends_with(x)) s.resize(s.size() - x.size());
  }
  return s;
}

std::optional<std::string> collective_of_canonical(const std::string& c) {
  static const std::array<std::pair<const char*, const char*>, 14> kNames = {{
      {"allreduce", "all_reduce"},
      {"allgather", "all_gather"},
      {"reducescatter", "reduce_scatter"},
      {"alltoall", "all_to_all"},
      {"alltoallv", "all_to_all"},
      {"broadcast", "broadcast"},
      {"reduce", "reduce"},
      {"send", "send"},
      {"recv", "recv"},
      {"sendrecv", "send_recv"},
      {"gather", "gather"},
      {"scatter", "scatter"},
      {"barrier", "barrier"},
      {"allgatherv", "all_gather"},
  }};
  for (const auto& [key, type] : kNames) {
    if (c == key) return std::string(type);
  }
  return std::nullopt;
}

// The type the CPU side gives the kernel: the kernel's own arg, else the innermost enclosing op naming one.
std::optional<std::string> cpu_type(const KinetoEvents& k, const CpuOpIndex& index, const GpuEvent& g) {
  const auto l = k.launch_of.find(g.correlation);
  if (l != k.launch_of.end()) {
    const Launch& launch = k.launches[l->second];
    for (int64_t i = index.innermost(launch.pid, launch.tid, launch.ts_us, launch.dur_us); i >= 0;
         i = index.parent(i)) {
      const CpuOp& op = k.ops[static_cast<size_t>(i)];
      if (auto t = collective_of_op(k.strings[op.name])) return t;
      if (auto t = collective_of_arg(k.strings[op.collective])) return t;
    }
  }
  return collective_of_arg(k.strings[g.collective]);
}

// What one kernel's CPU side says of its message, filled field by field from the innermost record outwards.
struct Message {
  double in_bytes = -1, out_bytes = -1;
  int64_t group = -1;
};

int64_t product_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > (int64_t{1} << 53) / d)) return -1;
    n *= d;
  }
  return n;
}

void take(Message& m, const CommArgs& a, const std::string& dtype) {
  const auto e = element_bytes(dtype);
  if (m.in_bytes < 0 && a.in_nelems >= 0 && e) m.in_bytes = static_cast<double>(a.in_nelems * *e);
  if (m.out_bytes < 0 && a.out_nelems >= 0 && e) m.out_bytes = static_cast<double>(a.out_nelems * *e);
  if (m.group < 0 && a.group_size > 0) m.group = a.group_size;
}

// nccl:<coll> records its input tensor; c10d::_allgather_base_ / _reduce_scatter_base_ / alltoall_base_ record
// (output, input).
void take(Message& m, const std::string& op, const std::string& dims_text, const std::string& dtype) {
  const auto e = element_bytes(dtype);
  const auto dims = parse_input_dims(dims_text);
  if (!e || !dims || dims->empty()) return;
  const auto& d = *dims;
  if (op.starts_with("nccl:")) {
    const int64_t n = product_of(d[0]);
    if (m.in_bytes < 0 && n >= 0 && !d[0].empty()) m.in_bytes = static_cast<double>(n * *e);
    return;
  }
  if (!op.starts_with("c10d::") || d.size() < 2 || d[0].empty() || d[1].empty()) return;
  const int64_t out = product_of(d[0]), in = product_of(d[1]);
  if (out <= 0 || in <= 0) return;
  if (m.out_bytes < 0) m.out_bytes = static_cast<double>(out * *e);
  if (m.in_bytes < 0) m.in_bytes = static_cast<double>(in * *e);
  const auto type = collective_of_op(op);
  if (m.group < 0 && type == "all_gather" && out % in == 0) m.group = out / in;
  if (m.group < 0 && type == "reduce_scatter" && in % out == 0) m.group = in / out;
}

}  // namespace

std::optional<int64_t> element_bytes(std::string_view type) {
  std::string t;
  for (char c : type) t += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (t.starts_with("c10::")) t.erase(0, 5);
  static const std::array<std::pair<const char*, int64_t>, 22> kSizes = {{
      {"float", 4},         {"float32", 4},       {"double", 8},        {"float64", 8},     {"bfloat16", 2},
      {"half", 2},          {"float16", 2},       {"int", 4},           {"int32", 4},       {"long", 8},
      {"int64", 8},         {"short", 2},         {"int16", 2},         {"char", 1},        {"signed char", 1},
      {"unsigned char", 1}, {"byte", 1},          {"bool", 1},          {"int8", 1},        {"uint8", 1},
      {"float8_e4m3fn", 1}, {"float8_e5m2", 1},
  }};
  for (const auto& [name, bytes] : kSizes) {
    if (t == name) return bytes;
  }
  return std::nullopt;
}

std::vector<CollectiveCall> collective_calls(const KinetoEvents& k, const CpuOpIndex& index,
                                             const KernelClassTable& table, std::optional<int64_t> world_size) {
  std::vector<CollectiveCall> out;
  for (size_t i = 0; i < k.gpu.size(); ++i) {
    const GpuEvent& g = k.gpu[i];
    if (g.step < 0 || table.class_of(g.timed.cls).kind != ClassKind::kComm) continue;
    Message m;
    if (const auto a = k.gpu_comm.find(i); a != k.gpu_comm.end()) take(m, a->second, k.strings[a->second.dtype]);
    if (const auto l = k.launch_of.find(g.correlation); l != k.launch_of.end()) {
      const Launch& launch = k.launches[l->second];
      for (int64_t o = index.innermost(launch.pid, launch.tid, launch.ts_us, launch.dur_us); o >= 0;
           o = index.parent(o)) {
        const CpuOp& op = k.ops[static_cast<size_t>(o)];
        if (const auto a = k.op_comm.find(static_cast<size_t>(o)); a != k.op_comm.end()) {
          take(m, a->second, k.strings[a->second.dtype]);
        }
        take(m, k.strings[op.name], k.strings[op.dims], k.strings[op.dtype]);
      }
    }
    CollectiveCall c;
    c.type = table.subclass_name(g.timed.cls);
    c.us = g.timed.end_us - g.timed.start_us;
    const bool p2p = c.type == "send" || c.type == "recv" || c.type == "send_recv";
    c.group = m.group > 0 ? m.group : p2p ? 2 : -1;
    if (c.group < 0 && world_size && *world_size > 0) {
      c.group = *world_size;
      c.group_is_world = true;
    }
    const double in = m.in_bytes >= 0 ? m.in_bytes : m.out_bytes;
    if (c.type == "all_gather") {
      c.bytes = m.out_bytes >= 0 ? m.out_bytes : (m.in_bytes >= 0 && c.group > 0 ? m.in_bytes * static_cast<double>(c.group) : -1);
    } else if (c.type == "reduce_scatter") {
      c.bytes = m.in_bytes >= 0 ? m.in_bytes : (m.out_bytes >= 0 && c.group > 0 ? m.out_bytes * static_cast<double>(c.group) : -1);
    } else {
      c.bytes = in;
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::optional<std::string> collective_of_op(std::string_view op_name) {
  for (std::string_view prefix : {"nccl:", "c10d::"}) {
    if (op_name.starts_with(prefix)) return collective_of_arg(op_name.substr(prefix.size()));
  }
  return std::nullopt;
}

std::optional<std::string> collective_of_arg(std::string_view collective_name) {
  if (collective_name.empty()) return std::nullopt;
  return collective_of_canonical(canonical(collective_name));
}

CollectiveLabels label_collectives(KinetoEvents& k, const CpuOpIndex& index, KernelClassTable& table) {
  CollectiveLabels out;
  for (auto& g : k.gpu) {
    if (table.class_of(g.timed.cls).kind != ClassKind::kComm) continue;
    if (const auto t = cpu_type(k, index, g)) {
      const uint16_t sub = table.add_subclass(*t);
      if (sub != g.timed.cls.sub) ++out.retyped;
      g.timed.cls.sub = sub;
      ++out.by_cpu_type[*t];
    } else {
      ++out.by_name_type[table.subclass_name(g.timed.cls)];
    }
  }
  return out;
}

}  // namespace simumax::compare
