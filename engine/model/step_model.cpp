#include "engine/model/step_model.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include "engine/common/error.hpp"
#include "engine/model/low_precision.hpp"
#include "engine/model/op_builder.hpp"
#include "engine/model/op_cache.hpp"
#include "engine/schedule/registry.hpp"

namespace simumax::model {

const char* to_string(StageKind k) {
  switch (k) {
    case StageKind::kFirst: return "first";
    case StageKind::kMiddle: return "middle";
    case StageKind::kLast: return "last";
  }
  return "?";
}

int layers_on_stage(const config::StrategyConfig& st, const config::ModelConfig& m, StageKind stage,
                    int virtual_index) {
  const auto& first = st.num_layers_in_first_pipeline_stage;
  const auto& last = st.num_layers_in_last_pipeline_stage;
  int64_t per;
  if (first || last) {
    int64_t left = m.layer_num, stages = st.pp_size;
    if (first) left -= *first, --stages;
    if (last) left -= *last, --stages;
    per = stages > 0 ? left / stages : 0;
    if (stage == StageKind::kFirst && first) per = *first;
    if (stage == StageKind::kLast && last) per = *last;
  } else {
    per = (m.layer_num + (st.account_for_embedding_in_pipeline_split ? 1 : 0) +
           (st.account_for_loss_in_pipeline_split ? 1 : 0)) /
          st.pp_size;
  }
  const int64_t vp = st.interleaving_size;
  const bool embedding_chunk = virtual_index < 0 || virtual_index == 0;
  const bool loss_chunk = virtual_index < 0 || virtual_index == vp - 1;
  if (virtual_index >= 0) per /= vp;
  if (stage == StageKind::kFirst && st.account_for_embedding_in_pipeline_split && embedding_chunk) --per;
  if (stage == StageKind::kLast && st.account_for_loss_in_pipeline_split && loss_chunk) --per;
  return static_cast<int>(per);
}

namespace {

ChunkParams chunk_params(const config::StrategyConfig& st, const Chunk& c) {
  ChunkParams p;
  std::set<std::tuple<int64_t, int64_t, int64_t>> dummy_shapes;  // TE keeps one buffer per distinct shape
  int64_t weight_bytes = 0;
  double dense_weight_bytes = 0, moe_weight_bytes = 0;  // megatron fidelity
  int64_t largest_block_numel = 0;                      // one copy, for Megatron-FSDP's buffers
  for (const Block& b : c.blocks) {
    int64_t block_numel = 0;
    for (const Op& op : *b.ops) {
      p.dense_numel += op.dense_numel * b.repeat;
      p.moe_numel += op.moe_numel * b.repeat;
      block_numel += op.dense_numel + op.moe_numel;
      weight_bytes += (op.dense_numel + op.moe_numel) * op.weight_elem_bytes * b.repeat;
      // Megatron keeps the bf16 weight of an fp8 GEMM (SimuMax counts its fp8 byte) and TE its quantized copies.
      const double per = op.weight_elem_bytes == 1 ? static_cast<double>(st.element_bytes()) +
                                                         weight_copy_bytes_per_element(st)
                                                   : static_cast<double>(op.weight_elem_bytes);
      dense_weight_bytes += static_cast<double>(op.dense_numel * b.repeat) * per;
      moe_weight_bytes += static_cast<double>(op.moe_numel * b.repeat) * per;
      if (op.te_dummy_wgrad[0] > 0) {
        dummy_shapes.insert({op.te_dummy_wgrad[0], op.te_dummy_wgrad[1], op.te_dummy_wgrad[2]});
      }
    }
    largest_block_numel = std::max(largest_block_numel, block_numel);
  }
  const int64_t g_dense = st.dp_size() * st.cp_size, g_moe = st.edp_size();
  const int64_t mg = st.main_grad_bytes();
  p.dense_grad_bytes = p.dense_numel * mg;
  p.moe_grad_bytes = p.moe_numel * mg;
  if (st.zero_state >= 2) {
    p.dense_grad_bytes /= g_dense;
    p.moe_grad_bytes /= g_moe;
  }
  p.grad_bytes = p.dense_grad_bytes + p.moe_grad_bytes;
  p.dense_state_bytes = 12.0 * static_cast<double>(p.dense_numel) / (st.zero_state >= 1 ? g_dense : 1);
  p.moe_state_bytes = 12.0 * static_cast<double>(p.moe_numel) / (st.zero_state >= 1 ? g_moe : 1);
  p.optimizer_state_bytes = p.dense_state_bytes + p.moe_state_bytes;
  p.weight_bytes = st.zero_state >= 3 ? weight_bytes / g_dense : weight_bytes;
  if (st.megatron() && (st.fp8 || st.megatron_fsdp)) {
    const bool shard = st.zero_state >= 3;
    p.weight_bytes = static_cast<int64_t>(dense_weight_bytes / (shard ? static_cast<double>(g_dense) : 1.0) +
                                          moe_weight_bytes / (shard ? static_cast<double>(g_moe) : 1.0));
  }
  if (st.fsdp()) {
    // Megatron-FSDP's unsharded buffers (--fsdp-double-buffer): the parameters of the layer running and of the
    // one prefetched, and one layer's gradients before their reduce-scatter.
    p.weight_bytes += largest_block_numel * (2 * st.element_bytes() + st.main_grad_bytes());
  }
  for (const auto& [r, cl, e] : dummy_shapes) p.te_dummy_wgrad_bytes += r * cl * e;
  return p;
}

// The op lists of a step come from the cache: blocks built alike, here or in an earlier step, share one.
struct Builders {
  const OpBuilder& ob;
  OpCache& cache;

  // Gives `b` the ops of its kind that `build` appends (returning the rows they output), built on the first
  // request; returns those rows.
  template <typename Build>
  int64_t fill(Block& b, bool rec, bool dense, int64_t rows, Build&& build) const {
    const OpCache::Entry& e = cache.get({b.kind, rec, dense, rows}, [&] {
      auto ops = std::make_shared<OpList>();
      const int64_t out_rows = build(*ops);
      ob.megatron_deterministic_fills(*ops, rows);
      auto program = std::make_shared<const BlockProgram>(block_program(*ops));
      return OpCache::Entry{std::move(ops), std::move(program), out_rows};
    });
    b.ops = e.ops;
    b.program = e.program;
    return e.rows;
  }
};

// Consecutive layers of a chunk that are built identically share one block.
void add_layer_blocks(const Builders& bs, const config::StrategyConfig& st, Chunk& c, int dense_layers,
                      int64_t seq_local) {
  int i = 0;
  while (i < c.num_layers) {
    const bool rec = i < st.recompute_layer_num;
    const bool dense = i < dense_layers;
    int j = i + 1;
    while (j < c.num_layers && (j < st.recompute_layer_num) == rec && (j < dense_layers) == dense) ++j;
    Block b;
    b.kind = BlockKind::kLayer;
    b.first_layer = i;
    b.repeat = j - i;
    bs.fill(b, rec, dense, seq_local, [&](OpList& out) {
      bs.ob.layer(out, i, seq_local, dense);
      return seq_local;
    });
    c.blocks.push_back(std::move(b));
    i = j;
  }
}

Chunk build_chunk(const config::Scenario& s, const Builders& bs, StageKind stage, bool pre, bool post,
                  int virtual_index = -1, int num_layers = -1) {
  const auto& st = s.strategy;
  Chunk c;
  c.stage = stage;
  c.virtual_index = std::max(virtual_index, 0);
  c.num_layers = num_layers >= 0 ? num_layers : layers_on_stage(st, s.model, stage, virtual_index);
  c.has_embedding = pre;
  c.has_head = post;
  const int64_t seq_chunk = st.seq_len / st.cp_size;
  int64_t seq_local = (st.enable_sequence_parallel ? st.seq_len / st.tp_size : st.seq_len) / st.cp_size;
  if (pre) {
    Block b;
    b.kind = BlockKind::kEmbedding;
    seq_local = bs.fill(b, false, false, seq_chunk, [&](OpList& out) { return bs.ob.embedding(out, seq_chunk); });
    c.blocks.push_back(std::move(b));
  }
  // SimuMax puts every dense layer of an MoE model on the first stage (its first virtual chunk).
  const bool dense_here = stage == StageKind::kFirst && virtual_index <= 0;
  const int dense_layers = dense_here ? static_cast<int>(s.model.dense_layers) : 0;
  add_layer_blocks(bs, st, c, dense_layers, seq_local);
  if (post) {
    Block b;
    b.kind = BlockKind::kHead;
    bs.fill(b, false, false, seq_local, [&](OpList& out) {
      bs.ob.head(out, seq_local);
      return seq_local;
    });
    c.blocks.push_back(std::move(b));
  }
  c.params = chunk_params(st, c);
  return c;
}

// The interleaved pipeline's virtual chunks: stage r's chunk v holds the layers of virtual stage v * pp + r.
// Without VPP each stage computes its physical chunk.
void add_virtual_chunks(const config::Scenario& s, const Builders& bs, StepModel& sm) {
  const auto& st = s.strategy;
  const int pp = static_cast<int>(st.pp_size), vp = static_cast<int>(st.interleaving_size);
  sm.compute_chunks.assign(pp, {});
  sm.first_layer.assign(pp, {});
  sm.held_chunks.assign(pp, {});
  for (int r = 0; r < pp; ++r) sm.held_chunks[r] = {sm.chunk_of_stage[r]};
  if (vp <= 1) {
    int next_layer = 0;
    for (int r = 0; r < pp; ++r) {
      sm.compute_chunks[r] = {sm.chunk_of_stage[r]};
      sm.first_layer[r] = {next_layer};
      next_layer += sm.chunks[sm.chunk_of_stage[r]].num_layers;
    }
    // DualPipe (DeepSeek's DualPipe takes (stage r, stage pp - 1 - r) as a rank's two modules): chunk 0 is the
    // rank's own stage, which the forward direction's micro-batches run; chunk 1 its mirror, which the reverse
    // direction's run.
    if (schedule::find(st.pipeline_schedule).placement == schedule::Placement::kMirror) {
      for (int r = 0; r < pp; ++r) {
        const int mirror = pp - 1 - r;
        sm.compute_chunks[r].push_back(sm.chunk_of_stage[mirror]);
        sm.first_layer[r].push_back(sm.first_layer[mirror].front());
        if (mirror != r) sm.held_chunks[r].push_back(sm.chunk_of_stage[mirror]);
      }
    }
    return;
  }
  const StageKind kinds[] = {StageKind::kFirst, StageKind::kMiddle, StageKind::kLast};
  std::vector<std::vector<int>> layers(3, std::vector<int>(vp));
  for (int k = 0; k < 3; ++k) {
    for (int v = 0; v < vp; ++v) layers[k][v] = layers_on_stage(st, s.model, kinds[k], v);
  }
  auto kind_index = [&](int r) { return r == 0 ? 0 : (r == pp - 1 ? 2 : 1); };
  std::vector<std::vector<int>> built(3, std::vector<int>(vp, -1));
  int next_layer = 0;
  for (int v = 0; v < vp; ++v) {
    for (int r = 0; r < pp; ++r) {
      const int k = kind_index(r);
      if (built[k][v] < 0) {
        // Middle stages share one model per chunk, as SimuMax's middle_stage does.
        sm.chunks.push_back(build_chunk(s, bs, kinds[k], k == 0 && v == 0, k == 2 && v == vp - 1, v));
        built[k][v] = static_cast<int>(sm.chunks.size()) - 1;
      }
      sm.compute_chunks[r].push_back(built[k][v]);
      sm.first_layer[r].push_back(next_layer);
      next_layer += layers[k][v];
    }
  }
}

// A V (ZB-V, DualPipeV): the model cut into 2pp stages of equal layer slots, as the zero-bubble code's
// validate_arguments and DualPipeV's example cut it; rank r computes and holds stage r (chunk 0) and stage
// 2pp - 1 - r (chunk 1), so rank 0 holds both the embedding and the head. The embedding and loss take a slot of
// the first and last stage when they count in the split, as in Megatron's.
void add_v_chunks(const config::Scenario& s, const Builders& bs, StepModel& sm) {
  const auto& st = s.strategy;
  const bool emb = st.account_for_embedding_in_pipeline_split, loss = st.account_for_loss_in_pipeline_split;
  const int pp = static_cast<int>(st.pp_size), stages = 2 * pp;
  const int per = static_cast<int>((s.model.layer_num + (emb ? 1 : 0) + (loss ? 1 : 0)) / stages);
  auto layers = [&](int v) { return per - (v == 0 && emb ? 1 : 0) - (v == stages - 1 && loss ? 1 : 0); };
  sm.chunks = {build_chunk(s, bs, StageKind::kFirst, true, false, 0, layers(0)),
               build_chunk(s, bs, StageKind::kMiddle, false, false, 0, per),
               build_chunk(s, bs, StageKind::kLast, false, true, 0, layers(stages - 1))};
  auto chunk = [&](int v) { return v == 0 ? 0 : (v == stages - 1 ? 2 : 1); };
  auto first_layer = [&](int v) { return v == 0 ? 0 : layers(0) + (v - 1) * per; };
  sm.compute_chunks.assign(pp, {});
  sm.first_layer.assign(pp, {});
  for (int r = 0; r < pp; ++r) {
    sm.chunk_of_stage[r] = chunk(r);
    sm.compute_chunks[r] = {chunk(r), chunk(stages - 1 - r)};
    sm.first_layer[r] = {first_layer(r), first_layer(stages - 1 - r)};
  }
  sm.held_chunks = sm.compute_chunks;
  sm.microbatch_chunks = 2;
}

}  // namespace

int64_t cublas_workspace_bytes(const config::Scenario& s) {
  const auto& w = s.system.workspaces;
  if (!s.strategy.megatron() || !w) return 0;
  // ATen CublasHandlePool.cpp: setWorkspaceForHandle keys a workspace by (handle, stream), each allocated by
  // getNewWorkspace() from the caching allocator; handles come from a per-thread pool window.
  const int64_t torch = s.strategy.cublas_workspace_config_bytes.value_or(w->torch_cublas_bytes);
  // TE pytorch/cpp_extensions/gemm.py get_cublas_workspace: functools.lru_cache per device, torch.empty. Its
  // grouped GEMM (MoE experts) asks for one more workspace per compute stream (common/util/multi_stream.cpp).
  const bool grouped = s.model.is_moe() && s.model.group_linear_mode == config::GroupLinearMode::kParallel;
  return kTorchCublasThreads * torch + (1 + (grouped ? kTeComputeStreams : 0)) * w->te_cublas_bytes;
}

StepModel build_step_model(const config::Scenario& s, OpCache* cache) {
  const auto& st = s.strategy;
  StepModel sm;
  sm.padded_vocab = s.model.padded_vocab(st.tp_size);
  OpBuilder ob(s, sm.padded_vocab);
  OpCache own;
  if (cache == nullptr) cache = &own;
  cache->select(st);
  const Builders bs{ob, *cache};
  const int64_t pp = st.pp_size;
  sm.chunks.push_back(build_chunk(s, bs, StageKind::kFirst, true, pp == 1));
  if (pp > 2) sm.chunks.push_back(build_chunk(s, bs, StageKind::kMiddle, false, false));
  if (pp > 1) sm.chunks.push_back(build_chunk(s, bs, StageKind::kLast, false, true));
  sm.chunk_of_stage.resize(pp);
  for (int64_t r = 0; r < pp; ++r) {
    sm.chunk_of_stage[r] = r == 0 ? 0 : (r == pp - 1 ? static_cast<int>(sm.chunks.size()) - 1 : 1);
  }
  if (schedule::find(st.pipeline_schedule).placement == schedule::Placement::kVShape) {
    add_v_chunks(s, bs, sm);
  } else {
    add_virtual_chunks(s, bs, sm);
  }
  double p2p = static_cast<double>(st.micro_batch_size * st.seq_len * s.model.hidden_size * st.element_bytes()) /
               static_cast<double>(st.cp_size);
  if (st.enable_sequence_parallel) p2p /= static_cast<double>(st.tp_size);
  sm.p2p_bytes = p2p;
  sm.flops_per_token = flops_per_token(s.model, sm.padded_vocab, st.seq_len);
  sm.seq_len_local = (st.enable_sequence_parallel ? st.seq_len / st.tp_size : st.seq_len) / st.cp_size;
  sm.workspace_bytes = cublas_workspace_bytes(s);
  return sm;
}

AttentionProjectionElements attention_projection_elements(const config::ModelConfig& m) {
  const double H = static_cast<double>(m.hidden_size);
  AttentionProjectionElements e;
  if (m.attention_type == config::AttentionType::kMla) {
    const double n = static_cast<double>(m.head_num);
    const double dq = static_cast<double>(m.qk_head_dim.value_or(0) + m.qk_pos_emb_head_dim.value_or(0));
    const double kvl = static_cast<double>(m.kv_lora_rank.value_or(0));
    e.qkv = m.q_lora_rank ? H * static_cast<double>(*m.q_lora_rank) + static_cast<double>(*m.q_lora_rank) * n * dq
                          : H * n * dq;
    e.qkv += H * (kvl + static_cast<double>(m.qk_pos_emb_head_dim.value_or(0))) +
             kvl * n * static_cast<double>(m.qk_head_dim.value_or(0) + m.v_head_dim.value_or(0));
    e.proj = static_cast<double>(m.v_head_dim.value_or(0)) * n * H;
  } else {
    const double d = static_cast<double>(m.head_size.value_or(0));
    e.qkv = H * (d * static_cast<double>(m.head_num) + 2 * d * static_cast<double>(m.kv_head_num));
    e.proj = H * H;  // SimuMax counts H*H, not heads*head_size (kept: MFU parity)
  }
  return e;
}

double flops_per_token(const config::ModelConfig& m, int64_t padded_vocab, int64_t seq_len) {
  const double L = static_cast<double>(m.layer_num), H = static_cast<double>(m.hidden_size);
  const double S = static_cast<double>(seq_len);
  const bool mla = m.attention_type == config::AttentionType::kMla;
  const auto [qkv, proj] = attention_projection_elements(m);
  double res = 0, factor = 1;
  const int64_t topk = m.topk.value_or(0);
  if (topk > 1) {
    factor += static_cast<double>(topk - 1);
    res += 6 * L * H * static_cast<double>(m.expert_num);
  }
  const double ffn = static_cast<double>(m.ffn_hidden());
  if (m.moe_shared_expert_intermediate_size) {
    factor += static_cast<double>(*m.moe_shared_expert_intermediate_size) / ffn;
  }
  const double mlp = (m.use_swiglu ? 3 : 2) * H * ffn;
  res += 6 * L * (qkv + proj) + 6 * L * mlp * factor;
  if (mla) {
    const double n = static_cast<double>(m.head_num);
    res += 6 * L * (S * static_cast<double>(m.qk_head_dim.value_or(0) + m.qk_pos_emb_head_dim.value_or(0)) * n +
                    S * static_cast<double>(m.v_head_dim.value_or(0)) * n);
  } else {
    res += 6 * L * (2 * S * H);
  }
  res += 6 * H * static_cast<double>(padded_vocab);
  if (m.mtp_num_layers > 0) {
    // training.py num_floating_point_operations: each MTP depth adds one more layer, its 2H -> H projection
    // and one more pass through the output layer.
    const double per_layer = (res - 6 * H * static_cast<double>(padded_vocab)) / L;
    res += static_cast<double>(m.mtp_num_layers) * (per_layer + 6 * 2 * H * H + 6 * H * static_cast<double>(padded_vocab));
  }
  return res;
}

}  // namespace simumax::model
