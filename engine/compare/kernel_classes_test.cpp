// The shipped classification table, name by name, and the table format's errors.
#include "engine/compare/kernel_classes.hpp"

#include <gtest/gtest.h>

#include "engine/common/error.hpp"

namespace simumax::compare {
namespace {

const KernelClassTable& shipped() {
  static const KernelClassTable t = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  return t;
}

struct NameCase {
  const char* cat;
  const char* name;
  const char* cls;
  const char* sub;
};

// Real kernel names (from ../shared/traces/kineto and recent NCCL / cuBLAS / FlashAttention / TE builds) and our
// task names; the comments say which rule-order decision each row pins down.
const NameCase kCases[] = {
    {"kernel", "ncclKernel_AllReduce_RING_LL_Sum_float(ncclDevComm*, unsigned long, ncclWork*)", "comm", "all_reduce"},
    {"kernel", "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "comm", "all_gather"},
    {"kernel", "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "comm",
     "reduce_scatter"},
    {"kernel", "ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t(ncclWorkElem)", "comm", "send_recv"},
    {"kernel", "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", "comm", "send_recv"},
    {"kernel", "ncclKernel_Broadcast_RING_LL_Sum_int8_t(ncclDevComm*, unsigned long, ncclWork*)", "comm", "broadcast"},
    {"kernel", "ncclDevKernel_Reduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)", "comm", "reduce"},
    {"kernel", "ncclDevKernel_Send(ncclDevKernelArgsStorage<4096ul>)", "comm", "send"},
    {"kernel", "ncclDevKernel_Recv(ncclDevKernelArgsStorage<4096ul>)", "comm", "recv"},
    {"kernel", "ncclDevKernel_Generic_1(ncclDevKernelArgsStorage<4096ul>)", "comm", "other"},
    {"kernel", "void deep_ep::intranode::dispatch<8, 768, 8192>(int4*, float*)", "comm", "all_to_all"},
    {"gpu_memcpy", "Memcpy DtoD (Device -> Device)", "memcpy", "memcpy"},
    {"gpu_memset", "Memset (Device)", "memset", "memset"},
    {"kernel", "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(Params)", "gemm", "gemm"},
    {"kernel", "ampere_sgemm_128x128_tn", "gemm", "gemm"},
    {"kernel", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_kernel__5x_cublas",
     "gemm", "gemm"},
    {"kernel", "nvjet_tst_192x192_64x4_2x1_v_bz_coopA_NTN", "gemm", "gemm"},
    {"kernel", "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 4, 4, false, false>(Params)", "gemm",
     "gemm"},
    {"kernel", "void cutlass::device_kernel<grouped_gemm::GroupedGemmKernel<cutlass::bfloat16_t>>(Params)", "gemm",
     "grouped_gemm"},
    // Implicit-GEMM convolutions are GEMMs too, kept apart.
    {"kernel", "sm80_xmma_fprop_implicit_gemm_indexed_tf32f32_tf32f32_f32_nhwckrsc_nchw_tilesize128x128x16", "gemm", "conv"},
    {"kernel", "cudnn_infer_ampere_scudnn_128x64_relu_xregs_large_nn_v1", "gemm", "conv"},
    // Attention before GEMM: FlashAttention kernels name cutlass in their template arguments.
    {"kernel", "void flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, cutlass::bfloat16_t>>(Params)",
     "attention", "attention"},
    {"kernel", "cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_3_64x64x128_4x1x1_kernel0_0",
     "attention", "attention"},
    {"kernel", "fmha_cutlassF_bf16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel<bf16>::Params)",
     "attention", "attention"},
    {"kernel", "void scaled_upper_triang_masked_softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 11>()",
     "attention", "softmax"},
    {"kernel", "void transformer_engine::rmsnorm::rmsnorm_fwd_tuned_kernel<Kernel_traits<bf16>>(Params)", "elementwise",
     "norm"},
    {"kernel", "void cudnn::bn_bw_1C11_kernel_new<float, float, float2, 32, true, 1>(float)", "elementwise", "norm"},
    // Activation before the generic elementwise rule.
    {"kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(TensorIteratorBase&)>",
     "elementwise", "activation"},
    {"kernel", "void multi_tensor_apply_kernel<TensorListMetadata<4>, AdamFunctor<float>, float>(long, int*)",
     "optimizer", "optimizer"},
    // fbgemm's fused embedding backward + adagrad is embedding work, and fbgemm_gpu:: is no GEMM.
    {"kernel", "void split_embedding_backward_codegen_rowwise_adagrad_unweighted_kernel_cta_per_row_1<float>()",
     "elementwise", "embedding"},
    {"kernel", "void fbgemm_gpu::permute_2D_lengths_kernel<int>(int, int, int const*, int const*, int*)", "elementwise",
     "embedding"},
    {"kernel", "void at::native::unrolled_elementwise_kernel<at::native::CUDAFunctor_add<double>>(int)", "elementwise",
     "elementwise"},
    // "lambda" in PyTorch's kernel names must not read as an optimizer (LAMB).
    {"kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::lambda()>(int)",
     "elementwise", "elementwise"},
    {"kernel", "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::MeanOps>>()",
     "elementwise", "reduce"},
    {"kernel", "void cub::DeviceRadixSortOnesweepKernel<Policy, false, long, long>()", "elementwise", "sort_scan"},
    {"kernel", "void at::native::(anonymous namespace)::cunn_SoftMaxForward<4, float, float>()", "elementwise",
     "softmax"},
    {"kernel", "triton__0d1d2d3d", "elementwise", "elementwise"},
    {"kernel", "std::enable_if<!(false), void>::type internal::gemvx::kernel<int>()", "gemm", "gemm"},
    {"kernel", "void epilogue::impl::globalKernel<8, 32, float, float>()", "other", "other"},
    // Our task names (engine/graph): op name + pass, collectives as "<group>.<collective> <stage>".
    {"", "attn.linear_qkv.fwd", "gemm", "gemm"},
    {"", "attn.linear_qkv.dgrad", "gemm", "gemm"},
    {"", "mlp.linear_fc2.wgrad", "gemm", "gemm"},
    {"", "output_layer.fwd", "gemm", "gemm"},
    {"", "attn.core_attention.fwd", "attention", "attention"},
    {"", "input_layernorm.fwd", "elementwise", "norm"},
    {"", "mlp.activation.recompute", "elementwise", "activation"},
    {"", "mlp.linear_fc1.quantizer.fwd", "elementwise", "quantize"},
    {"", "embedding.fwd", "elementwise", "embedding"},
    {"", "cross_entropy.dgrad", "elementwise", "cross_entropy"},
    {"", "optimizer.step", "optimizer", "optimizer"},
    {"", "tp.all_reduce LinearRow_FWD", "comm", "all_reduce"},
    {"", "tp.all_gather LinearCol_FWD_SP", "comm", "all_gather"},
    {"", "dp.reduce_scatter grads", "comm", "reduce_scatter"},
    {"", "ep.all2all MoE_dispatch", "comm", "all_to_all"},
    {"", "pp.send_recv.activation", "comm", "send_recv"},
    {"", "layer.fwd", "other", "other"},
};

void PrintTo(const NameCase& c, std::ostream* os) { *os << c.name; }

class KernelClassName : public ::testing::TestWithParam<NameCase> {};

TEST_P(KernelClassName, ShippedTableGivesClassAndSubclass) {
  const NameCase& c = GetParam();
  const Classification got = shipped().classify(c.cat, c.name);
  EXPECT_EQ(shipped().class_of(got).name, c.cls) << c.name;
  EXPECT_EQ(shipped().subclass_name(got), c.sub) << c.name;
}

INSTANTIATE_TEST_SUITE_P(Table, KernelClassName, ::testing::ValuesIn(kCases));

TEST(KernelClasses, KindsOfTheShippedClasses) {
  const auto& t = shipped();
  EXPECT_EQ(t.classes()[t.class_index("comm")].kind, ClassKind::kComm);
  EXPECT_EQ(t.classes()[t.class_index("memcpy")].kind, ClassKind::kMemory);
  EXPECT_EQ(t.classes()[t.class_index("gemm")].kind, ClassKind::kCompute);
  EXPECT_EQ(t.class_index("nope"), -1);
}

TEST(KernelClasses, FallbackIsTheDefaultClassOrTheFirstOfTheKind) {
  const auto& t = shipped();
  const Classification comm = t.fallback(ClassKind::kComm);
  EXPECT_EQ(t.class_of(comm).name, "comm");
  EXPECT_EQ(t.subclass_name(comm), "other");
  EXPECT_EQ(t.class_of(t.fallback(ClassKind::kCompute)).name, "other");
}

TEST(KernelClasses, FirstMatchingRuleWins) {
  const auto t = KernelClassTable::parse(R"({"classes": [{"name": "a", "kind": "compute"}, {"name": "b", "kind": "comm"}],
    "default_class": "a",
    "rules": [{"_comment": "a heading"}, {"class": "b", "subclass": "x", "regex": "^foo"},
              {"class": "a", "subclass": "y", "contains": ["FOO"]}, {"class": "b", "cat": "k"}]})",
                                         "t.json");
  EXPECT_EQ(t.subclass_name(t.classify("", "foobar")), "x");
  EXPECT_EQ(t.subclass_name(t.classify("", "a_foo")), "y");  // contains is case-insensitive
  EXPECT_EQ(t.class_of(t.classify("k", "zzz")).name, "b");
  EXPECT_EQ(t.class_of(t.classify("", "zzz")).name, "a");
}

// std::regex recursed per character: a 50,000-character kernel name crashed compare (SIGSEGV), and a pattern
// like (a+)+$ backtracks exponentially. RE2 matches in linear time.
TEST(KernelClasses, LongNamesAndPathologicalPatternsMatchInLinearTime) {
  const auto t = KernelClassTable::parse(R"({"classes": [{"name": "a", "kind": "compute"}, {"name": "b", "kind": "comm"}],
    "default_class": "a", "rules": [{"class": "b", "subclass": "x", "regex": "(a+)+$"}]})",
                                         "t.json");
  EXPECT_EQ(t.class_of(t.classify("", std::string(50000, 'a') + "!")).name, "a");
  EXPECT_EQ(t.class_of(t.classify("", std::string(50000, 'a'))).name, "b");
  const auto shipped = KernelClassTable::load(SIMUMAX_SOURCE_DIR "/data/kernel_classes.json");
  EXPECT_EQ(shipped.class_of(shipped.classify("kernel", "ncclDevKernel_AllReduce_" + std::string(60000, 'x'))).name,
            "comm");
}

struct BadTable {
  const char* name;
  const char* text;
  const char* message;
};

const BadTable kBad[] = {
    {"UnknownClass", R"({"classes": [{"name": "gemm", "kind": "compute"}], "default_class": "gemm",
      "rules": [{"class": "gem", "contains": ["gemm"]}]})",
     "t.json: /rules/0/class: \"gem\" is not a declared class; declared: gemm"},
    {"BadKind", R"({"classes": [{"name": "gemm", "kind": "matmul"}], "default_class": "gemm", "rules": []})",
     "t.json: /classes/0/kind: \"matmul\" is not a kind; valid kinds: compute, comm, memory"},
    {"BadRegex", R"({"classes": [{"name": "a", "kind": "compute"}], "default_class": "a",
      "rules": [{"class": "a", "regex": "(unclosed"}]})",
     nullptr},
    {"NoCondition", R"({"classes": [{"name": "a", "kind": "compute"}], "default_class": "a",
      "rules": [{"class": "a", "subclass": "s"}]})",
     "t.json: /rules/0: has no condition; give at least one of cat, contains, regex"},
    {"UnknownKey", R"({"classes": [{"name": "a", "kind": "compute"}], "default_class": "a",
      "rules": [{"class": "a", "contain": ["x"]}]})",
     "t.json: /rules/0/contain: unknown field; valid fields: class, subclass, cat, contains, regex"},
    {"ContainsNotStrings", R"({"classes": [{"name": "a", "kind": "compute"}], "default_class": "a",
      "rules": [{"class": "a", "contains": ["x", 3]}]})",
     "t.json: /rules/0/contains/1: expected a non-empty string, got 3"},
    {"MissingDefault", R"({"classes": [{"name": "a", "kind": "compute"}], "rules": []})",
     "t.json: /default_class: missing; expected a string"},
    {"NotJson", "{", nullptr},
};

void PrintTo(const BadTable& b, std::ostream* os) { *os << b.name; }

class KernelClassBadTable : public ::testing::TestWithParam<BadTable> {};

TEST_P(KernelClassBadTable, ThrowsConfigErrorAtTheField) {
  const BadTable& b = GetParam();
  try {
    KernelClassTable::parse(b.text, "t.json");
    FAIL() << "no error";
  } catch (const common::ConfigError& e) {
    if (b.message) {
      EXPECT_EQ(std::string(e.what()), b.message);
    }
    EXPECT_EQ(e.file(), "t.json");
  }
}

INSTANTIATE_TEST_SUITE_P(Table, KernelClassBadTable, ::testing::ValuesIn(kBad),
                         [](const ::testing::TestParamInfo<BadTable>& i) { return std::string(i.param.name); });

}  // namespace
}  // namespace simumax::compare
