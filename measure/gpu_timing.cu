#include "measure/gpu_timing.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include <cublasLt.h>
#include <cuda_runtime.h>
#include <nccl.h>

#include "engine/common/error.hpp"

namespace simumax::measure::gpu {

namespace {

using common::UsageError;

void check(cudaError_t e, const std::string& what) {
  if (e != cudaSuccess) throw UsageError("GPU: " + what + ": " + cudaGetErrorString(e));
}

void check(cublasStatus_t e, const std::string& what) {
  if (e != CUBLAS_STATUS_SUCCESS) {
    throw UsageError("cuBLASLt: " + what + ": status " + std::to_string(static_cast<int>(e)) +
                     (e == CUBLAS_STATUS_NOT_SUPPORTED ? " (not supported on this GPU)" : ""));
  }
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// Runs `launch` warm-up times, then batches of timed runs until two batch medians agree within the tolerance.
template <typename F>
Timing time_it(cudaStream_t stream, const TimingOptions& o, F&& launch) {
  for (int i = 0; i < o.warmup; ++i) launch();
  check(cudaStreamSynchronize(stream), "warm-up");
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "event");
  check(cudaEventCreate(&stop), "event");
  std::vector<double> all;
  double last_median = -1;
  while (static_cast<int>(all.size()) < o.max_repetitions) {
    std::vector<double> batch;
    for (int i = 0; i < o.batch; ++i) {
      check(cudaEventRecord(start, stream), "event record");
      launch();
      check(cudaEventRecord(stop, stream), "event record");
      check(cudaEventSynchronize(stop), "kernel");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "event time");
      batch.push_back(ms * 1e3);
    }
    all.insert(all.end(), batch.begin(), batch.end());
    const double m = median_of(batch);
    if (last_median > 0 && std::abs(m / last_median - 1) <= o.tolerance) break;
    last_median = m;
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  Timing t;
  t.median_us = median_of(all);
  t.min_us = *std::min_element(all.begin(), all.end());
  t.max_us = *std::max_element(all.begin(), all.end());
  t.repetitions = static_cast<int>(all.size());
  return t;
}

constexpr size_t kWorkspaceBytes = 32u << 20;  // cuBLASLt's workspace, as TE gives it on Hopper

struct DeviceBuffer {
  void* p = nullptr;
  explicit DeviceBuffer(size_t bytes) { check(cudaMalloc(&p, std::max<size_t>(bytes, 256)), "allocate"); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

}  // namespace

void ensure_fits(size_t bytes, const std::string& what) {
  size_t free_b = 0, total_b = 0;
  check(cudaMemGetInfo(&free_b, &total_b), "memory info");
  if (bytes > free_b) {
    throw UsageError(what + " needs " + std::to_string(bytes >> 20) + " MiB, the GPU has " +
                     std::to_string(free_b >> 20) + " MiB free of " + std::to_string(total_b >> 20) +
                     " MiB: drop the shape or measure on a larger GPU");
  }
}

int compute_capability() {
  int dev = 0, major = 0, minor = 0;
  check(cudaGetDevice(&dev), "current GPU");
  check(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), "compute capability");
  check(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev), "compute capability");
  return major * 10 + minor;
}

Timing time_launches(void* stream, const TimingOptions& o, const std::function<void()>& launch) {
  return time_it(static_cast<cudaStream_t>(stream), o, launch);
}

std::string select_gpu(const Launch& launch) {
  int n = 0;
  const cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    throw UsageError(std::string("no CUDA GPU visible (") + (e != cudaSuccess ? cudaGetErrorString(e) : "0 devices") +
                     "): run on a GPU node, or build a config from nccl-tests output with 'simumax-measure import'");
  }
  if (launch.local_world > n) {
    throw UsageError("launch: " + std::to_string(launch.local_world) + " ranks on this node but " +
                     std::to_string(n) + " GPUs visible");
  }
  check(cudaSetDevice(static_cast<int>(launch.local_rank)), "select GPU " + std::to_string(launch.local_rank));
  cudaDeviceProp p{};
  check(cudaGetDeviceProperties(&p, static_cast<int>(launch.local_rank)), "device properties");
  return std::string(p.name) + " (sm_" + std::to_string(p.major) + std::to_string(p.minor) + ", " +
         std::to_string(p.totalGlobalMem >> 30) + " GiB)";
}

std::string clocks_and_power() {
  // NVML ships with the driver, not the toolkit: loaded at run time, with the few entry points declared here.
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) return "NVML not available (libnvidia-ml.so.1 not found): clocks and power not recorded";
  using Init = int (*)();
  using Handle = int (*)(const char*, void**);
  using Clock = int (*)(void*, int, unsigned*);
  using Power = int (*)(void*, unsigned*);
  using Temp = int (*)(void*, int, unsigned*);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  // By PCI bus id: NVML counts every GPU, CUDA only the visible ones (CUDA_VISIBLE_DEVICES).
  auto handle = reinterpret_cast<Handle>(dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  auto clock = reinterpret_cast<Clock>(dlsym(lib, "nvmlDeviceGetClockInfo"));
  auto power = reinterpret_cast<Power>(dlsym(lib, "nvmlDeviceGetPowerUsage"));
  auto temp = reinterpret_cast<Temp>(dlsym(lib, "nvmlDeviceGetTemperature"));
  int dev = 0;
  char bus_id[32] = {0};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), dev) != cudaSuccess) {
    return "NVML not usable (no PCI bus id): clocks and power not recorded";
  }
  void* h = nullptr;
  unsigned sm = 0, mem = 0, mw = 0, c = 0;
  if (!init || !handle || !clock || !power || !temp || init() != 0 || handle(bus_id, &h) != 0) {
    return "NVML not usable: clocks and power not recorded";
  }
  clock(h, 1, &sm);   // NVML_CLOCK_SM
  clock(h, 2, &mem);  // NVML_CLOCK_MEM
  power(h, &mw);
  temp(h, 0, &c);     // NVML_TEMPERATURE_GPU
  return "sm " + std::to_string(sm) + " MHz, mem " + std::to_string(mem) + " MHz, " + std::to_string(mw / 1000) +
         " W, " + std::to_string(c) + " C";
}

size_t gemm_bytes(const GemmProblem& g) {
  const size_t in_elem = g.fp8 ? 1 : 2, out_elem = g.out_fp32 ? 4 : 2;
  return static_cast<size_t>(g.m * g.k + g.k * g.n) * in_elem + static_cast<size_t>(g.m * g.n) * out_elem +
         kWorkspaceBytes;
}

void check_fits(const std::vector<GemmProblem>& gemms, const std::vector<AttentionProblem>& attention) {
  for (const auto& g : gemms) ensure_fits(gemm_bytes(g), "shape '" + g.label + "'");
  for (const auto& a : attention) ensure_fits(attention_bytes(a), "attention '" + a.label + "'");
}

Timing time_gemm(const GemmProblem& g, const TimingOptions& o) {
  const bool fp8 = g.fp8, accumulate = g.accumulate, out_fp32 = g.out_fp32;
  const int64_t groups = g.groups, m = g.m, k = g.k, n = g.n;
  // The transposes are TE's (gemm_problem), fp8 already TN where the GPU's cuBLASLt fp8 kernels need it.
  const bool ta = g.transa, tb = g.transb;
  const size_t in_elem = fp8 ? 1 : 2, out_elem = out_fp32 ? 4 : 2;
  const size_t a_b = static_cast<size_t>(m * k) * in_elem, b_b = static_cast<size_t>(k * n) * in_elem,
               c_b = static_cast<size_t>(m * n) * out_elem, workspace = kWorkspaceBytes;
  ensure_fits(gemm_bytes(g), "shape '" + g.label + "'");
  DeviceBuffer a(a_b), b(b_b), c(c_b), ws(workspace);
  check(cudaMemset(a.p, 0, a_b), "clear"), check(cudaMemset(b.p, 0, b_b), "clear");
  check(cudaMemset(c.p, 0, c_b), "clear");
  cublasLtHandle_t lt;
  check(cublasLtCreate(&lt), "create");
  const cudaDataType_t in_t = fp8 ? CUDA_R_8F_E4M3 : CUDA_R_16BF, out_t = out_fp32 ? CUDA_R_32F : CUDA_R_16BF;
  cublasLtMatmulDesc_t desc;
  check(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F), "matmul desc");
  const cublasOperation_t opa = ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = tb ? CUBLAS_OP_T : CUBLAS_OP_N;
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)), "transa");
  check(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)), "transb");
  // Column-major D[m x n] = op(A)[m x k] * op(B)[k x n]; a transposed operand is stored k-major (lda = k).
  cublasLtMatrixLayout_t la, lb, lc;
  check(cublasLtMatrixLayoutCreate(&la, in_t, ta ? k : m, ta ? m : k, ta ? k : m), "layout A");
  check(cublasLtMatrixLayoutCreate(&lb, in_t, tb ? n : k, tb ? k : n, tb ? n : k), "layout B");
  check(cublasLtMatrixLayoutCreate(&lc, out_t, m, n, m), "layout C");
  cublasLtMatmulPreference_t pref;
  check(cublasLtMatmulPreferenceCreate(&pref), "preference");
  check(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace,
                                             sizeof(workspace)), "workspace");
  cublasLtMatmulHeuristicResult_t best{};
  int found = 0;
  const cublasStatus_t heuristic = cublasLtMatmulAlgoGetHeuristic(lt, desc, la, lb, lc, lc, pref, 1, &best, &found);
  const float alpha = 1, beta = accumulate ? 1 : 0;
  cudaStream_t stream = nullptr;
  Timing t;
  if (heuristic != CUBLAS_STATUS_SUCCESS || found == 0) {
    t.skipped = "cuBLASLt has no algorithm for it on this GPU (status " + std::to_string(static_cast<int>(heuristic)) +
                ")";
  } else {
    t = time_it(stream, o, [&] {
      for (int64_t group = 0; group < groups; ++group) {
        check(cublasLtMatmul(lt, desc, &alpha, a.p, la, b.p, lb, &beta, c.p, lc, c.p, lc, &best.algo, ws.p,
                             workspace, stream), "matmul '" + g.label + "'");
      }
    });
  }
  cublasLtMatmulPreferenceDestroy(pref);
  cublasLtMatrixLayoutDestroy(la), cublasLtMatrixLayoutDestroy(lb), cublasLtMatrixLayoutDestroy(lc);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(lt);
  return t;
}

Timing time_copy(int64_t bytes, const TimingOptions& o) {
  ensure_fits(2 * static_cast<size_t>(bytes), "the HBM copy of " + std::to_string(bytes >> 20) + " MiB");
  DeviceBuffer src(bytes), dst(bytes);
  cudaStream_t stream = nullptr;
  return time_it(stream, o, [&] {
    check(cudaMemcpyAsync(dst.p, src.p, static_cast<size_t>(bytes), cudaMemcpyDeviceToDevice, stream), "copy");
  });
}

}  // namespace simumax::measure::gpu
