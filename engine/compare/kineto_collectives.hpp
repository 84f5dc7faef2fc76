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
#include <vector>

#include "engine/compare/kernel_classes.hpp"
#include "engine/compare/kineto_events.hpp"

namespace simumax::compare {

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

// One NCCL kernel of a profiled step with its message, for bus bandwidth (calibrate --trace).
struct CollectiveCall {
  std::string type;             // the comm subclass after label_collectives: all_reduce, all_gather, ...
  double us = 0;                // the kernel's time (it includes waiting for the group's slowest peer)
  double bytes = -1;            // the message as nccl-tests sizes it (-1: not recorded): all-reduce, broadcast,
                                // all-to-all, send/recv: one rank's input; all-gather: the gathered output;
                                // reduce-scatter: the input being reduced
  int64_t group = -1;           // ranks in the group (-1: not recorded)
  bool group_is_world = false;  // no group size recorded: taken as distributedInfo.world_size
};

// Bytes of one element of a recorded type: "float" / "Float" 4, "c10::BFloat16" / "BFloat16" 2, "long" 8, "signed
// char" 1, ...; nullopt for a type it does not know.
std::optional<int64_t> element_bytes(std::string_view type);

// The NCCL kernels of the profiled steps with their messages. The message comes from the kernel's own args (In/Out
// msg nelems, Group size, dtype: PyTorch >= 2.1), else from the enclosing CPU ops: record_param_comms' args, the
// nccl:<coll> annotation's Input Dims (its input tensor), c10d::_allgather_base_ / _reduce_scatter_base_'s
// (output, input) dims, whose ratio is the group size. REQUIRES: label_collectives ran on `events`.
std::vector<CollectiveCall> collective_calls(const KinetoEvents& events, const CpuOpIndex& index,
                                             const KernelClassTable& table, std::optional<int64_t> world_size);

// Re-types every comm-kind GPU event of `events` whose launching CPU op names a collective, adding subclasses to
// `table` where it lacks one (a user table may not declare all_to_all). Other events are left alone.
// `index` is over events.ops.
CollectiveLabels label_collectives(KinetoEvents& events, const CpuOpIndex& index, KernelClassTable& table);

}  // namespace simumax::compare
