// Types each NCCL kernel of a Kineto trace by the collective the CPU asked for. NCCL names its kernels by the
// algorithm it runs, not the call: all-to-all, reduce-scatter and all-gather over point-to-point all run as
// ncclKernel_SendRecv. The CPU side says what was called: the kernel's correlation id leads to its runtime launch,
// whose enclosing CPU ops include nccl:<coll> (ProcessGroupNCCL's record), c10d::<coll>_ (the dispatcher op) or
// carry a "Collective name" arg (PyTorch >= 2.1's record_param_comms); the kernel may carry that arg itself.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "engine/report/kernel_classes.hpp"
#include "engine/report/kineto_events.hpp"

namespace simumax::report {

// The comm subclass (all_reduce, all_gather, reduce_scatter, all_to_all, broadcast, reduce, send, recv,
// send_recv, gather, scatter, barrier) a CPU op name names: "nccl:_all_gather_base", "c10d::alltoall_base_",
// "record_param_comms" (no), "aten::mm" (no).
std::optional<std::string> collective_of_op(std::string_view op_name);
// The same for a "Collective name" arg value: "allreduce", "_reduce_scatter_base", "all_to_allv", "wait" (no).
std::optional<std::string> collective_of_arg(std::string_view collective_name);

struct CollectiveLabels {
  std::map<std::string, int64_t> by_cpu_type;   // comm kernels typed by a CPU op or a Collective name arg
  std::map<std::string, int64_t> by_name_type;  // no launch or no collective op found: the kernel name's type
  int64_t retyped = 0;  // kernels whose CPU type differs from their name's (ncclKernel_SendRecv for an all-to-all)
};

// Re-types every comm-kind GPU event of `events` whose launching CPU op names a collective, adding subclasses to
// `table` where it lacks one (a user table may not declare all_to_all). Other events are left alone.
CollectiveLabels label_collectives(KinetoEvents& events, KernelClassTable& table);

}  // namespace simumax::report
