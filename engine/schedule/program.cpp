#include "engine/schedule/program.hpp"

#include <tuple>

namespace simumax::schedule {

bool P2p::operator<(const P2p& o) const {
  return std::tie(forward, target, microbatch, sender, receiver) <
         std::tie(o.forward, o.target, o.microbatch, o.sender, o.receiver);
}

bool P2p::operator==(const P2p& o) const {
  return std::tie(forward, target, microbatch, sender, receiver) ==
         std::tie(o.forward, o.target, o.microbatch, o.sender, o.receiver);
}

void Program::comm(std::initializer_list<const P2p*> batch) {
  ScheduleStep s;
  s.kind = std::nullopt;
  s.first_comm = static_cast<uint32_t>(comms.size());
  for (const P2p* p : batch) {
    if (p) comms.push_back(*p);
  }
  s.num_comms = static_cast<uint32_t>(comms.size()) - s.first_comm;
  if (s.num_comms > 0) steps.push_back(s);
}

}  // namespace simumax::schedule
