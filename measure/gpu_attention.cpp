// Fused attention timed through cuDNN 9's graph (backend) API: the SDPA forward and backward graphs that
// cudnn-frontend's CompositeSDPANode / CompositeSDPABackwardNode lower to (the path TransformerEngine's and
// PyTorch's cuDNN attention take), built here operation by operation because only cuDNN's C headers are
// installed. cuDNN is loaded at run time, so a node without it gets an error in words.
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <memory>
#include <stdexcept>
#include <type_traits>
#include <utility>
#include <vector>

#include <cuda_runtime.h>
#include <cudnn.h>

#include "engine/common/error.hpp"
#include "measure/gpu_timing.hpp"

#if CUDNN_MAJOR < 9
#error "simumax-measure's attention timing needs cuDNN 9 headers (measure/CMakeLists.txt checks CUDNN_MAJOR)"
#endif

namespace simumax::measure::gpu {

namespace {

using common::UsageError;

struct Api {
  decltype(&cudnnGetVersion) version = nullptr;
  decltype(&cudnnCreate) create = nullptr;
  decltype(&cudnnDestroy) destroy = nullptr;
  decltype(&cudnnGetErrorString) error_string = nullptr;
  decltype(&cudnnGetLastErrorString) last_error = nullptr;
  decltype(&cudnnBackendCreateDescriptor) make = nullptr;
  decltype(&cudnnBackendDestroyDescriptor) release = nullptr;
  decltype(&cudnnBackendSetAttribute) set = nullptr;
  decltype(&cudnnBackendGetAttribute) get = nullptr;
  decltype(&cudnnBackendFinalize) finalize = nullptr;
  decltype(&cudnnBackendExecute) execute = nullptr;
  std::string missing;  // why cuDNN cannot be used; empty when every entry point was found
};

const Api& api() {
  static const Api a = [] {
    Api out;
    void* lib = dlopen("libcudnn.so.9", RTLD_NOW);
    if (!lib) {
      out.missing = std::string("cuDNN 9 not found (") + dlerror() + "): install cuDNN 9 or add it to LD_LIBRARY_PATH";
      return out;
    }
    auto load = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
      if (!fn && out.missing.empty()) out.missing = std::string("libcudnn.so.9 lacks ") + name;
    };
    load(out.version, "cudnnGetVersion"), load(out.create, "cudnnCreate"), load(out.destroy, "cudnnDestroy");
    load(out.error_string, "cudnnGetErrorString"), load(out.last_error, "cudnnGetLastErrorString");
    load(out.make, "cudnnBackendCreateDescriptor"), load(out.release, "cudnnBackendDestroyDescriptor");
    load(out.set, "cudnnBackendSetAttribute"), load(out.get, "cudnnBackendGetAttribute");
    load(out.finalize, "cudnnBackendFinalize"), load(out.execute, "cudnnBackendExecute");
    if (out.missing.empty() && out.version() < 90000) {
      out.missing = "cuDNN " + std::to_string(out.version()) + " is older than 9.0, which fused attention needs";
    }
    return out;
  }();
  return a;
}

// cuDNN refused the graph for this shape: the shape is skipped with this one-line reason.
struct Refused : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void ok(cudnnStatus_t s, const char* step) {
  if (s == CUDNN_STATUS_SUCCESS) return;
  char last[512] = {0};
  api().last_error(last, sizeof(last));
  std::string why = std::string(step) + ": " + api().error_string(s) + (last[0] ? std::string(" (") + last + ")" : "");
  for (char& c : why) c = (c == '\n' || c == '\r') ? ' ' : c;
  throw Refused(why);
}

void cuda_ok(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw UsageError("GPU: " + what + ": " + cudaGetErrorString(e));
}

using Desc = cudnnBackendDescriptor_t;

// Owns every descriptor of one graph and builds its tensors and operations.
class Graph {
 public:
  ~Graph() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) api().release(*it);
  }
  Desc make(cudnnBackendDescriptorType_t type) {
    Desc d = nullptr;
    ok(api().make(type, &d), "create descriptor");
    owned_.push_back(d);
    return d;
  }
  template <typename T>
  void set(Desc d, cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t n, const T* v) {
    ok(api().set(d, name, type, n, v), "set attribute");
  }
  void set_desc(Desc d, cudnnBackendAttributeName_t name, Desc v) {
    set(d, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &v);
  }

  // A tensor: `uid` binds it to a buffer in the variant pack unless virtual.
  Desc tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type,
              bool is_virtual = false, bool by_value = false) {
    Desc t = make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    const int64_t alignment = 16;
    const bool v = is_virtual, bv = by_value;
    set(t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &alignment);
    set(t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, static_cast<int64_t>(dims.size()), dims.data());
    set(t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, static_cast<int64_t>(strides.size()), strides.data());
    set(t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1, &v);
    if (by_value) set(t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1, &bv);
    ok(api().finalize(t), "tensor");
    return t;
  }
  // A virtual fp32 (or `type`) intermediate, packed in the order of `dims`.
  Desc temp(std::vector<int64_t> dims, cudnnDataType_t type = CUDNN_DATA_FLOAT) {
    return tensor(next_virtual_++, dims, packed(dims), type, true);
  }
  Desc temp_strided(std::vector<int64_t> dims, std::vector<int64_t> strides, cudnnDataType_t type) {
    return tensor(next_virtual_++, std::move(dims), std::move(strides), type, true);
  }
  static std::vector<int64_t> packed(const std::vector<int64_t>& dims) {
    std::vector<int64_t> s(dims.size(), 1);
    for (size_t i = dims.size() - 1; i > 0; --i) s[i - 1] = s[i] * dims[i];
    return s;
  }

  // y = mode(x[, b[, t]]); GEN_INDEX takes `axis`.
  void pointwise(cudnnPointwiseMode_t mode, Desc x, Desc b, Desc t, Desc y, cudnnDataType_t math = CUDNN_DATA_FLOAT,
                 int64_t axis = -1) {
    Desc pw = make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
    set(pw, CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode);
    set(pw, CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &math);
    if (axis >= 0) set(pw, CUDNN_ATTR_POINTWISE_AXIS, CUDNN_TYPE_INT64, 1, &axis);
    ok(api().finalize(pw), "pointwise descriptor");
    operation(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw}, {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
               {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b}, {CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t},
               {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}},
              "pointwise operation");
  }
  void reduction(cudnnReduceTensorOp_t mode, Desc x, Desc y) {
    Desc r = make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
    set(r, CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &mode);
    set(r, CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &kFloat);
    ok(api().finalize(r), "reduction descriptor");
    operation(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_REDUCTION_DESC, r}, {CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
               {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y}},
              "reduction operation");
  }
  void matmul(Desc a, Desc b, Desc c) {
    Desc m = make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
    set(m, CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &kFloat);
    ok(api().finalize(m), "matmul descriptor");
    operation(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_MATMUL_DESC, m}, {CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
               {CUDNN_ATTR_OPERATION_MATMUL_BDESC, b}, {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c}},
              "matmul operation");
  }
  void reshape(Desc x, Desc y) {
    operation(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR,
              {{CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x}, {CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y}}, "reshape operation");
  }

  // Finalizes the graph and returns the first engine configuration of heuristic mode A that cuDNN can build a
  // plan for, with its workspace size.
  Desc plan(cudnnHandle_t handle, int64_t& workspace_bytes) {
    Desc graph = make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(ops_.size()),
        ops_.data());
    ok(api().finalize(graph), "operation graph");
    Desc heur = make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    const cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    set_desc(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph);
    set(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    ok(api().finalize(heur), "heuristics");
    int64_t count = 0;
    ok(api().get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr),
       "heuristics results");
    if (count == 0) throw Refused("no engine configuration for this graph");
    std::vector<Desc> configs;
    for (int64_t i = 0; i < count; ++i) configs.push_back(make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR));
    ok(api().get(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, configs.data()),
       "heuristics results");
    std::string first_refusal;
    for (int64_t i = 0; i < count; ++i) {
      Desc p = make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      set(p, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1, &handle);
      set_desc(p, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[static_cast<size_t>(i)]);
      try {
        ok(api().finalize(p), "execution plan");
      } catch (const Refused& e) {
        if (first_refusal.empty()) first_refusal = e.what();
        continue;
      }
      int64_t n = 0;
      ok(api().get(p, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64, 1, &n, &workspace_bytes),
         "workspace size");
      return p;
    }
    throw Refused("none of " + std::to_string(count) + " engine configurations builds a plan; the first: " +
                  first_refusal);
  }

 private:
  static constexpr cudnnDataType_t kFloat = CUDNN_DATA_FLOAT;  // every reduction and matmul accumulates in fp32

  // An operation with its inputs and outputs (a null one is left unset), finalized and added to the graph.
  void operation(cudnnBackendDescriptorType_t type,
                 std::initializer_list<std::pair<cudnnBackendAttributeName_t, Desc>> descs, const char* what) {
    Desc op = make(type);
    for (const auto& [name, d] : descs) {
      if (d) set_desc(op, name, d);
    }
    ok(api().finalize(op), what);
    ops_.push_back(op);
  }
  std::vector<Desc> owned_, ops_;
  int64_t next_virtual_ = 1000;
};

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) {
    cuda_ok(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "allocate");
    cuda_ok(cudaMemset(p, 0, std::max<size_t>(bytes, 256)), "clear");
  }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Buffer uids of the variant pack.
enum Uid : int64_t { kQ = 1, kK, kV, kO, kStats, kDO, kDQ, kDK, kDV, kScale, kNegInf, kOne, kSoftmaxSum, kDQAccum };

// Megatron's sbhd activations as [b, h, s, d] views: element (b, h, s, d) at s*B*H*D + b*H*D + h*D + d.
std::vector<int64_t> sbhd(int64_t b, int64_t h, int64_t d) { return {h * d, d, b * h * d, 1}; }

// The masked, scaled scores S = causal(Q K^T * scale) of both graphs (before the softmax); `kt` is K^T's view.
Desc scores(Graph& g, const AttentionProblem& a, Desc q, Desc kt, Desc scale, Desc neg_inf, Desc stats) {
  const std::vector<int64_t> ss = {a.batch, a.heads, a.seq, a.seq};
  Desc s = g.temp(ss);
  g.matmul(q, kt, s);
  Desc scaled = g.temp(ss);
  g.pointwise(CUDNN_POINTWISE_MUL, s, scale, nullptr, scaled);
  if (stats) {  // the backward recomputes P = exp(S - stats) and masks after the subtraction, as the frontend does
    Desc shifted = g.temp(ss);
    g.pointwise(CUDNN_POINTWISE_SUB, scaled, stats, nullptr, shifted);
    scaled = shifted;
  }
  if (!a.causal) return scaled;
  Desc row = g.temp(ss, CUDNN_DATA_INT32), col = g.temp(ss, CUDNN_DATA_INT32), keep = g.temp(ss, CUDNN_DATA_BOOLEAN);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, nullptr, row, CUDNN_DATA_FLOAT, 2);
  g.pointwise(CUDNN_POINTWISE_GEN_INDEX, scaled, nullptr, nullptr, col, CUDNN_DATA_FLOAT, 3);
  g.pointwise(CUDNN_POINTWISE_CMP_GE, row, col, nullptr, keep, CUDNN_DATA_BOOLEAN);
  Desc masked = g.temp(ss);
  g.pointwise(CUDNN_POINTWISE_BINARY_SELECT, scaled, neg_inf, keep, masked);
  return masked;
}

// Forward: O = softmax(S) V, and the softmax statistics (max + log-sum-exp) the backward needs.
void forward_graph(Graph& g, const AttentionProblem& a) {
  const int64_t b = a.batch, h = a.heads, hk = a.kv_heads, s = a.seq, dq = a.d_qk, dv = a.d_v;
  const std::vector<int64_t> one = {1, 1, 1, 1}, row = {b, h, s, 1}, ss = {b, h, s, s};
  Desc q = g.tensor(kQ, {b, h, s, dq}, sbhd(b, h, dq), CUDNN_DATA_BFLOAT16);
  auto k_stride = sbhd(b, hk, dq);
  Desc kt = g.tensor(kK, {b, hk, dq, s}, {k_stride[0], k_stride[1], k_stride[3], k_stride[2]}, CUDNN_DATA_BFLOAT16);
  Desc v = g.tensor(kV, {b, hk, s, dv}, sbhd(b, hk, dv), CUDNN_DATA_BFLOAT16);
  Desc o = g.tensor(kO, {b, h, s, dv}, sbhd(b, h, dv), CUDNN_DATA_BFLOAT16);
  Desc stats = g.tensor(kStats, row, Graph::packed(row), CUDNN_DATA_FLOAT);
  Desc scale = g.tensor(kScale, one, one, CUDNN_DATA_FLOAT, false, true);
  Desc neg_inf = g.tensor(kNegInf, one, one, CUDNN_DATA_FLOAT, false, true);
  Desc sc = scores(g, a, q, kt, scale, neg_inf, nullptr);
  Desc max = g.temp(row), centred = g.temp(ss), e = g.temp(ss), sum = g.temp(row), log_sum = g.temp(row);
  g.reduction(CUDNN_REDUCE_TENSOR_MAX, sc, max);
  g.pointwise(CUDNN_POINTWISE_SUB, sc, max, nullptr, centred);
  g.pointwise(CUDNN_POINTWISE_EXP, centred, nullptr, nullptr, e);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, e, sum);
  g.pointwise(CUDNN_POINTWISE_LOG, sum, nullptr, nullptr, log_sum);
  g.pointwise(CUDNN_POINTWISE_ADD, max, log_sum, nullptr, stats);
  Desc p = g.temp(ss, CUDNN_DATA_BFLOAT16);  // the second matmul takes P in the I/O type
  g.pointwise(CUDNN_POINTWISE_DIV, e, sum, nullptr, p);
  g.matmul(p, v, o);
}

// A gradient of the kv heads: straight from the matmul, or (GQA) summed over each group's query heads.
void kv_gradient(Graph& g, const AttentionProblem& a, Desc lhs, Desc rhs, Desc out, int64_t d) {
  if (a.heads == a.kv_heads) return g.matmul(lhs, rhs, out);
  Desc full = g.temp({a.batch, a.heads, a.seq, d}, CUDNN_DATA_BFLOAT16);
  g.matmul(lhs, rhs, full);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, full, out);
}

// Backward: dQ, dK, dV from Q, K, V, O, dO and the forward's statistics (flash attention's recompute of P).
void backward_graph(Graph& g, const AttentionProblem& a) {
  const int64_t b = a.batch, h = a.heads, hk = a.kv_heads, s = a.seq, dq = a.d_qk, dv = a.d_v;
  const std::vector<int64_t> one = {1, 1, 1, 1}, row = {b, h, s, 1}, ss = {b, h, s, s};
  const std::vector<int64_t> transposed_ss = {h * s * s, s * s, 1, s};
  auto t23 = [](std::vector<int64_t> v) { return std::vector<int64_t>{v[0], v[1], v[3], v[2]}; };
  Desc q = g.tensor(kQ, {b, h, s, dq}, sbhd(b, h, dq), CUDNN_DATA_BFLOAT16);
  Desc kt = g.tensor(kK, {b, hk, dq, s}, t23(sbhd(b, hk, dq)), CUDNN_DATA_BFLOAT16);
  Desc vt = g.tensor(kV, {b, hk, dv, s}, t23(sbhd(b, hk, dv)), CUDNN_DATA_BFLOAT16);
  Desc o = g.tensor(kO, {b, h, s, dv}, sbhd(b, h, dv), CUDNN_DATA_BFLOAT16);
  Desc d_o = g.tensor(kDO, {b, h, s, dv}, sbhd(b, h, dv), CUDNN_DATA_BFLOAT16);
  Desc stats = g.tensor(kStats, row, Graph::packed(row), CUDNN_DATA_FLOAT);
  Desc dqt = g.tensor(kDQ, {b, h, s, dq}, sbhd(b, h, dq), CUDNN_DATA_BFLOAT16);
  Desc dkt = g.tensor(kDK, {b, hk, s, dq}, sbhd(b, hk, dq), CUDNN_DATA_BFLOAT16);
  Desc dvt = g.tensor(kDV, {b, hk, s, dv}, sbhd(b, hk, dv), CUDNN_DATA_BFLOAT16);
  Desc scale = g.tensor(kScale, one, one, CUDNN_DATA_FLOAT, false, true);
  Desc neg_inf = g.tensor(kNegInf, one, one, CUDNN_DATA_FLOAT, false, true);
  Desc unit = g.tensor(kOne, one, one, CUDNN_DATA_FLOAT, false, true);
  Desc softmax_sum = g.tensor(kSoftmaxSum, row, Graph::packed(row), CUDNN_DATA_FLOAT);
  Desc dq_accum = g.tensor(kDQAccum, {b, h, s, dq}, Graph::packed({b, h, s, dq}), CUDNN_DATA_FLOAT);
  // softmax_sum = rowsum(dO * O), kept in a buffer of its own as the frontend does.
  Desc d_o_o = g.temp({b, h, s, dv}), d_o_o_sum = g.temp(row);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o, o, nullptr, d_o_o);
  g.reduction(CUDNN_REDUCE_TENSOR_ADD, d_o_o, d_o_o_sum);
  g.pointwise(CUDNN_POINTWISE_MUL, d_o_o_sum, unit, nullptr, softmax_sum);
  Desc p = g.temp(ss);
  g.pointwise(CUDNN_POINTWISE_EXP, scores(g, a, q, kt, scale, neg_inf, stats), nullptr, nullptr, p);
  Desc pt = g.temp_strided(t23(ss), transposed_ss, CUDNN_DATA_BFLOAT16);
  g.reshape(p, pt);
  kv_gradient(g, a, pt, d_o, dvt, dv);  // dV = P^T dO
  Desc dp = g.temp(ss), dp_centred = g.temp(ss), ds_unscaled = g.temp(ss), ds = g.temp(ss);
  g.matmul(d_o, vt, dp);  // dP = dO V^T
  g.pointwise(CUDNN_POINTWISE_SUB, dp, softmax_sum, nullptr, dp_centred);
  g.pointwise(CUDNN_POINTWISE_MUL, dp_centred, p, nullptr, ds_unscaled);
  g.pointwise(CUDNN_POINTWISE_MUL, ds_unscaled, scale, nullptr, ds);
  Desc dst = g.temp_strided(t23(ss), transposed_ss, CUDNN_DATA_BFLOAT16);
  g.reshape(ds, dst);
  kv_gradient(g, a, dst, q, dkt, dq);  // dK = dS^T Q
  Desc k = g.temp_strided({b, hk, s, dq}, sbhd(b, hk, dq), CUDNN_DATA_BFLOAT16);
  g.reshape(kt, k);
  g.matmul(ds, k, dq_accum);  // dQ = dS K, accumulated in fp32
  g.pointwise(CUDNN_POINTWISE_IDENTITY, dq_accum, nullptr, nullptr, dqt);
}

void build_graph(Graph& g, const AttentionProblem& a) {
  if (a.backward) {
    backward_graph(g, a);
  } else {
    forward_graph(g, a);
  }
}

// The device buffers and host scalars of one call, by variant-pack uid.
class Buffers {
 public:
  explicit Buffers(const AttentionProblem& a) : scale_(1.0f / std::sqrt(static_cast<float>(a.d_qk))) {
    const size_t bf16 = 2, fp32 = 4;
    const size_t q = static_cast<size_t>(a.batch * a.heads * a.seq * a.d_qk) * bf16;
    const size_t k = static_cast<size_t>(a.batch * a.kv_heads * a.seq * a.d_qk) * bf16;
    const size_t v = static_cast<size_t>(a.batch * a.kv_heads * a.seq * a.d_v) * bf16;
    const size_t o = static_cast<size_t>(a.batch * a.heads * a.seq * a.d_v) * bf16;
    const size_t rows = static_cast<size_t>(a.batch * a.heads * a.seq) * fp32;
    for (auto [uid, bytes] : {std::pair<int64_t, size_t>{kQ, q}, {kK, k}, {kV, v}, {kO, o}, {kStats, rows}}) {
      device(uid, bytes);
    }
    if (a.backward) {
      for (auto [uid, bytes] : {std::pair<int64_t, size_t>{kDO, o}, {kDQ, q}, {kDK, k}, {kDV, v},
                                {kSoftmaxSum, rows}, {kDQAccum, q * 2}}) {
        device(uid, bytes);
      }
      host(kOne, &one_);
    }
    host(kScale, &scale_), host(kNegInf, &neg_inf_);
  }
  std::vector<int64_t> uids;
  std::vector<void*> pointers;

 private:
  void device(int64_t uid, size_t bytes) {
    owned_.push_back(std::make_unique<DeviceBuffer>(bytes));
    uids.push_back(uid), pointers.push_back(owned_.back()->p);
  }
  void host(int64_t uid, float* value) { uids.push_back(uid), pointers.push_back(value); }
  std::vector<std::unique_ptr<DeviceBuffer>> owned_;
  float scale_, neg_inf_ = -std::numeric_limits<float>::infinity(), one_ = 1.0f;
};

}  // namespace

std::string attention_unavailable() { return api().missing; }

std::string attention_graph_refusal(const AttentionProblem& a) {
  if (!api().missing.empty()) return api().missing;
  try {
    Graph g;
    build_graph(g, a);
  } catch (const Refused& e) {
    return e.what();
  }
  return "";
}

Timing time_attention(const AttentionProblem& a, const TimingOptions& o) {
  if (!api().missing.empty()) throw UsageError("attention: " + api().missing);
  ensure_fits(attention_bytes(a), "attention '" + a.label + "'");
  Buffers buffers(a);
  cudnnHandle_t handle = nullptr;
  if (const cudnnStatus_t st = api().create(&handle); st != CUDNN_STATUS_SUCCESS) {
    throw UsageError(std::string("cuDNN: cudnnCreate failed: ") + api().error_string(st));
  }
  Timing t;
  try {
    Graph g;
    build_graph(g, a);
    int64_t workspace_bytes = 0;
    Desc plan = g.plan(handle, workspace_bytes);
    ensure_fits(static_cast<size_t>(workspace_bytes), "attention '" + a.label + "' (cuDNN workspace)");
    DeviceBuffer workspace(static_cast<size_t>(workspace_bytes));
    std::vector<int64_t>& uids = buffers.uids;
    std::vector<void*>& ptrs = buffers.pointers;
    Desc pack = g.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    g.set(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, static_cast<int64_t>(uids.size()), uids.data());
    g.set(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(ptrs.size()),
          ptrs.data());
    g.set(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace.p);
    ok(api().finalize(pack), "variant pack");
    t = time_launches(nullptr, o, [&] { ok(api().execute(handle, plan, pack), "execute"); });
  } catch (const Refused& e) {
    t = Timing{};
    t.skipped = std::string("cuDNN ") + std::to_string(api().version()) + " refused it: " + e.what();
  } catch (...) {
    api().destroy(handle);
    throw;
  }
  api().destroy(handle);
  return t;
}

}  // namespace simumax::measure::gpu
