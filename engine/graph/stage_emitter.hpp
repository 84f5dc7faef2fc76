// Emits one stage's forward / backward of a micro-batch, and the end-of-step DP work, at a granularity.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "engine/cost/pair_clock.hpp"
#include "engine/graph/fb_pair.hpp"
#include "engine/graph/graph_builder.hpp"
#include "engine/graph/lowering.hpp"
#include "engine/graph/pipeline_schedule.hpp"
#include "engine/graph/shared_expert_overlap.hpp"
#include "engine/graph/sm_contention.hpp"
#include "engine/model/memory_walk.hpp"

namespace simumax::graph {

class StageEmitter {
 public:
  StageEmitter(GraphBuilder& b, const config::Scenario& s, const model::StepModel& m, const cost::StepCost& c,
               const LoweringOptions& o);

  // One compute step of a schedule program (kForward, kBackward, kInputGrad or kWeightGrad) for micro-batch `mb`
  // in virtual chunk `vchunk`. `lanes`: the graph ranks running this stage in lockstep (a TP group, or one
  // representative rank).
  void pass(schedule::Pass kind, int stage, const std::vector<uint32_t>& lanes, int mb, int vchunk);
  // An overlapped F&B pair (ScheduleStep::paired, fb_pair.hpp): the forward of micro-batch `f_mb` in
  // virtual chunk `f_vchunk` and the backward of `b_mb` in `b_vchunk`, merged layer by layer; -1: that side is
  // absent. Op-sized tasks put the EP all-to-alls on the EP stream and the DAG overlaps them; coarser tasks get
  // the same time from cost::PairClock.
  void pair(int stage, const std::vector<uint32_t>& lanes, int f_mb, int f_vchunk, int b_mb, int b_vchunk);
  // DP gradient reduce, optimizer and parameter gather on every rank, after the pipeline.
  void step_end(int64_t tp, const std::vector<std::vector<std::vector<uint32_t>>>& sets);
  bool network_comm() const { return options_.scope == RankScope::kAll; }
  // Megatron's overlap_p2p_comm: `transfer` leaves `lane` after what it has computed so far, beside its compute.
  void send_async(uint32_t lane, uint32_t transfer);
  // Megatron's batched p2p (p2p_communication.py _communicate, batch_p2p_comm = not overlap_p2p_comm): the host
  // launches the batch's `transfers` sends and receives (before the batch), and torch.cuda.synchronize()
  // (batch_p2p_sync, default True) blocks it until they are done (after the batch). Host lane only.
  void p2p_launches(const std::vector<uint32_t>& lanes, uint32_t transfers, bool forward);
  void p2p_sync(const std::vector<uint32_t>& lanes);

 private:
  // Parameters whose gradients a task finished (last micro-batch's backward) or whose values it first uses
  // (first micro-batch's forward): what Megatron's overlapped DP buckets wait for.
  struct ParamUse {
    uint32_t task = 0;
    int64_t dense_numel = 0;
    int64_t moe_numel = 0;
  };
  void note_params(const std::vector<uint32_t>& lanes, bool forward, int mb, int64_t dense, int64_t moe);
  void overlapped_buckets(const std::vector<uint32_t>& group, bool expert, bool gather);

  // The memory of one pass over a block or a chunk: forward, whole backward, B, W.
  struct BlockMem {
    model::MemSpan fwd, bwd, input, weight;
    const model::MemSpan& of(schedule::Pass kind) const;
  };
  static Task compute_task(schedule::Pass pass, int mb, int vchunk);
  void compute(const std::vector<uint32_t>& lanes, Task t);
  // A chunk- or layer-sized task on each lane, with its memory span, the parameters it touches and its host
  // time and synchronisation (issued before it; the host waits for it).
  void coarse(const std::vector<uint32_t>& lanes, Task t, double seconds, uint32_t name, OpRef ref,
              const model::MemSpan& mem, std::pair<int64_t, int64_t> params, std::pair<double, bool> host);
  // The host lane (docs/host.md): `seconds` of host time issuing what follows on each lane (nothing when the
  // lane is off or the time is zero), named after `base`'s pass; a synchronisation when `sync`.
  void issue(const std::vector<uint32_t>& lanes, double seconds, const Task& base);
  void host_sync(const std::vector<uint32_t>& lanes, bool sync);
  // The host time and synchronisation of one op-sized step, and of one copy of a block or a chunk's micro-batch
  // in pass `kind`.
  static std::pair<double, bool> step_host(const cost::OpCost& oc, const model::MemStep& st);
  static std::pair<double, bool> pass_host(const cost::HostTime& h, schedule::Pass kind);
  void append_compute(const std::vector<uint32_t>& lanes, Task t);
  bool overlapped_tp(const cost::CommCost& cc) const;
  // Appends a collective of the lanes; off the compute stream (TP overlap, or `stream`) it starts after what
  // the lanes have issued and holds the compute stream up only where joined. Its task, or kNoGroup if none.
  uint32_t comm(const std::vector<uint32_t>& lanes, const cost::CommCost& cc, Task t,
                uint8_t stream = kComputeStream);
  // An op pass's collectives before and after its kernel. After the dispatch's or the combine's kernel
  // (`hide`: the pass that has the all-to-alls), the shared-expert steps the plan puts there run beside them.
  void comms_before(const std::vector<uint32_t>& lanes, const std::vector<cost::CommCost>& comms, const Task& base);
  void comms_after(const std::vector<uint32_t>& lanes, const std::vector<cost::CommCost>& comms, const Task& base,
                   const model::MemStep& mem, bool hide = true);
  // One copy of block k of chunk ci at op granularity, in program order (shared experts where the plan says).
  void emit_block(const std::vector<uint32_t>& lanes, int ci, size_t k, schedule::Pass kind, const Task& t);
  void emit_step(const std::vector<uint32_t>& lanes, const model::MemStep& step, const Task& t);
  // The shared-expert plan of each block, for op-sized tasks.
  void plan_overlap();
  static bool contention_on(const config::StrategyConfig& st, const cost::SmShares& shares);
  // One copy of a block, for layer-sized tasks, with what overlap adds (cost::ChunkCost::overlap_seconds, all
  // of the backward's in B).
  double block_seconds(int ci, size_t k, schedule::Pass kind) const;
  void op_forward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                  const model::MemStep& mem, Task base);
  // The whole backward (mem.kind kBackward) or its input gradient alone (kInputGrad).
  void op_backward(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                   const model::MemStep& mem, Task base);
  void op_weight_grad(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                      const model::MemStep& mem, Task base);
  void op_recompute(const std::vector<uint32_t>& lanes, const model::Op& op, const cost::OpCost& oc,
                    const model::MemStep& mem, Task base);
  void index_op_refs();
  // The chunk, embedding, layer and head task names of a pass (kForward, kBackward, kInputGrad or kWeightGrad).
  void intern_names(schedule::Pass pass);
  static int names_row(schedule::Pass pass) { return static_cast<int>(pass); }  // F, B, W, B+W: rows 0 to 3
  // B and W of every block (model::split_backward) and their memory, on the first B or W.
  void split_backward();
  uint32_t op_ref(const model::Op& op, int work);

  // The pair's sides ([0] forward, [1] backward) and its emission at op or coarser granularity (stage_pair.cpp).
  struct PairSide {
    bool present = false;
    int ci = 0, layer0 = 0;
    Task base;
  };
  // What one layer- or chunk-sized task of a pair holds: its memory span, and per side ([0] forward, [1]
  // backward) the first block (its name) and the parameters of the blocks it runs.
  struct PairUnit {
    model::MemSpan mem;
    int block[2] = {-1, -1}, copy[2] = {0, 0};
    std::pair<int64_t, int64_t> params[2] = {};
    std::vector<std::pair<int, int>> seen[2];  // (block, copy) already counted
    double host = 0;    // the host time of its steps, both sides
    bool sync = false;  // one of them holds a host synchronisation
    void add(int side, int block_index, int copy_index, std::pair<int64_t, int64_t> p);
  };
  void pair_unit_task(const std::vector<uint32_t>& lanes, const PairSide (&side)[2], const PairUnit& unit,
                      double seconds, bool layer_sized);
  bool has_all_to_all(const PairSide& side) const;
  // Whether a pass of micro-batch `mb` runs as layer-sized tasks: at layer granularity, and at chunk granularity
  // the passes whose tasks carry the overlapped DP buckets' parameters (note_params: the first micro-batch's
  // forward, the last one's backward), so that the buckets overlap them as at layer granularity; one chunk-sized
  // task would hold every bucket of the chunk until it ends.
  bool per_layer(bool forward, int mb) const;
  void pair_ops(const std::vector<uint32_t>& lanes, const PairSide (&side)[2], const std::vector<PairItem>& items);
  void pair_coarse(const std::vector<uint32_t>& lanes, const PairSide (&side)[2], const std::vector<PairItem>& items);
  // The compute-stream time of one op-sized step as the op emitters lay it out; `defer`: without its EP
  // all-to-alls. Straggler ratio not applied.
  double step_seconds(const cost::OpCost& oc, const model::MemStep& st, bool defer) const;
  // A collective's task (not yet appended).
  Task comm_task(const std::vector<uint32_t>& lanes, const cost::CommCost& cc, Task t);

  GraphBuilder& b_;
  const config::Scenario& s_;
  const model::StepModel& m_;
  const cost::StepCost& c_;
  LoweringOptions options_;
  double ratio_;
  uint32_t host_names_[5] = {};  // host task names per schedule::Pass
  std::vector<std::vector<BlockMem>> block_mem_;  // [chunk][block], one copy of the block
  std::vector<BlockMem> chunk_mem_;               // [chunk], the whole chunk
  uint32_t names_[4][4] = {};  // [names_row(pass)][chunk, embedding, layer, head]
  std::vector<std::vector<model::SplitBackward>> split_;  // [chunk][block]; empty until a B or W is emitted
  std::vector<std::vector<std::pair<int64_t, int64_t>>> block_params_;  // [chunk][block]: dense, expert numel
  bool track_params_ = false;  // a DP overlap option is on
  std::vector<std::pair<uint32_t, uint32_t>> pending_tp_;  // (rank, task): overlapped TP collectives in flight
  cost::SmShares shares_;
  SmContention contention_;
  std::vector<std::vector<SharedExpertOverlap>> shared_plans_;  // [chunk][block]; empty when off
  struct BlockNow {
    const model::Block* block = nullptr;
    const cost::BlockCost* cost = nullptr;
    const SharedExpertOverlap* plan = nullptr;
    const std::vector<model::MemStep>* steps = nullptr;  // the block program's steps being emitted
  } now_;  // the block emit_block is emitting
  std::vector<std::vector<ParamUse>> grads_ready_;  // [graph rank], in execution order
  std::vector<std::vector<ParamUse>> params_used_;  // [graph rank], in execution order
  // [chunk] where each op and collective of the model sits, for Task::op_ref (the trace's FLOPs, bytes, shape
  // keys); `chunk_now_` is the chunk being emitted.
  std::vector<std::unordered_map<const model::Op*, OpRef>> op_where_;
  std::vector<std::unordered_map<const model::Comm*, OpRef>> comm_where_;
  int chunk_now_ = 0;
  cost::PairClock* pair_clock_ = nullptr;  // while an op-sized pair is emitted: its compute under contention
  bool defer_ep_ = false;                  // the step being emitted leaves its EP all-to-alls to the pair
};

}  // namespace simumax::graph
