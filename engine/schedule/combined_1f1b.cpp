// Megatron's combined 1F1B (--overlap-moe-expert-parallel-comm with --delay-wgrad-compute), without pipelining
// (megatron/core/pipeline_parallel/combined_1f1b.py, combined_1f1b_schedule_for_no_pipelining) or on interleaved
// 1F1B (combined_1f1b_schedule_for_interleaved_pipelining, interleaved.cpp). One micro-batch's
// forward and the previous one's backward run as one overlapped F&B pair step (ScheduleStep::paired), merged layer
// by layer so that each one's EP all-to-alls hide behind the other's compute (the lowering is the graph stage's
// fb_pair; docs/overlap.md).
#include <string>
#include <vector>

#include <spdlog/fmt/fmt.h>

#include "engine/schedule/program.hpp"
#include "engine/schedule/registry.hpp"

namespace simumax::schedule {

namespace {

// Why it cannot run this layout, or "". Megatron's TransformerConfig.__post_init__ asserts
// expert_model_parallel_size > 1, no full recompute and no moe_shared_expert_overlap with
// overlap_moe_expert_parallel_comm, and a virtual pipeline when pipeline_model_parallel_size > 1.
std::string combined_why(const Layout& l) {
  if (l.pp > 1 && l.vp == 1) {
    return fmt::format("pp_size is {} without a virtual pipeline; Megatron runs it with pp_size 1 or with "
                       "interleaving_size > 1",
                       l.pp);
  }
  if (l.ep == 1 || l.experts <= 1) {
    return fmt::format("ep_size is {} and expert_num {}: it hides expert-parallel all-to-alls, and Megatron asserts "
                       "expert_model_parallel_size > 1",
                       l.ep, l.experts);
  }
  if (l.full_recompute) {
    return "recompute_granularity is \"full_block\", and Megatron asserts no full recompute with it";
  }
  if (l.shared_expert_overlap) return "megatron_moe_shared_expert_overlap is on, and Megatron asserts it off with it";
  return "";
}

std::string combined_refusal(const Layout& l, const std::string& legal) {
  const std::string why = combined_why(l);
  if (why.empty()) return why;
  return fmt::format("\"combined-1f1b\" cannot run this layout: {}; the legal choices for this layout are {}", why,
                     legal);
}

// F0 alone, then F(i + 1)&B(i) pairs, then the last backward alone, each an overlapped pair step (a lone side
// still runs its dispatch-backward all-to-all beside its MLP weight gradient).
// With pp > 1: interleaved 1F1B's programs with every step a pair step (interleaved.cpp).
std::vector<Program> combined_programs(const Layout& l) {
  const int mbc = static_cast<int>(l.micro_batches);
  if (l.pp > 1) {
    return interleaved_one_f_one_b(static_cast<int>(l.pp), static_cast<int>(l.vp), mbc, static_cast<int>(l.group),
                                   true);
  }
  Program p;
  p.pair(0, 0, -1, 0);
  for (int i = 0; i + 1 < mbc; ++i) p.pair(i + 1, 0, i, 0);
  p.pair(-1, 0, mbc - 1, 0);
  return {p};
}

}  // namespace

extern const Schedule kCombined1F1B{"combined-1f1b", Placement::kOwn, false, combined_refusal,
                                    combined_programs};

}  // namespace simumax::schedule
