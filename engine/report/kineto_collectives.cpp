#include "engine/report/kineto_collectives.hpp"

#include <array>
#include <cctype>
#include <utility>

namespace simumax::report {

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

}  // namespace

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

CollectiveLabels label_collectives(KinetoEvents& k, KernelClassTable& table) {
  CollectiveLabels out;
  const CpuOpIndex index(k.ops);
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

}  // namespace simumax::report
