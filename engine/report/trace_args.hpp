// The model facts a trace slice carries (op, FLOPs, bytes, efficiency shape key, table hit, collective), made
// once per graph::OpRef and pass rather than once per event.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/report/trace_writer.hpp"

namespace simumax::report::trace {

// Args text of each op_ref, starting with a comma (",\"op\":...,\"flops\":..."), ready to paste into an
// event's args object. Whole-block and whole-chunk refs differ between forward and backward.
class ArgsTable {
 public:
  const std::string& get(uint32_t op_ref, std::optional<schedule::Pass> pass) const {
    return text_[2 * op_ref + (pass == schedule::Pass::kBackward ? 1 : 0)];
  }
  std::vector<std::string> text_;  // [2 * op_ref + backward]
};

ArgsTable make_args_table(const RunView& v);

// The op an OpRef names (nullptr for a whole block or chunk).
const model::Op* op_of(const RunView& v, const graph::OpRef& r);

}  // namespace simumax::report::trace
