#include "engine/measure/kernel_problem.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "engine/common/error.hpp"
#include "engine/config/scenario.hpp"
#include "engine/cost/kernel_cost.hpp"
#include "engine/measure/measurement.hpp"
#include "engine/model/step_model.hpp"

namespace simumax::measure {
namespace {

namespace fs = std::filesystem;

Shape shape(const std::string& compute_op, const std::string& key, double flops = 1) {
  Shape s;
  s.compute_op = compute_op;
  s.key = key;
  s.kind = compute_op.rfind("sdp_", 0) == 0
               ? (compute_op == "sdp_fwd" ? ShapeKind::kSdpFwd : ShapeKind::kSdpBwd)
               : (compute_op.find("group_matmul") != std::string::npos ? ShapeKind::kGroupedGemm : ShapeKind::kGemm);
  s.flops = flops;
  for (auto& [name, value] : key_fields(key)) s.fields[name] = value;
  return s;
}

std::string linear(int64_t b, int64_t m, int64_t k, int64_t n, const char* layout, bool acc, const char* out) {
  return "b=" + std::to_string(b) + ", m=" + std::to_string(m) + ", k=" + std::to_string(k) + ", n=" +
         std::to_string(n) + ", layout=" + layout + ", accumulate=" + (acc ? "True" : "False") + ", out_dtype=" + out;
}

std::string text(const GemmProblem& g) {
  return g.label + " x" + std::to_string(g.groups) + " m=" + std::to_string(g.m) + " n=" + std::to_string(g.n) +
         " k=" + std::to_string(g.k) + (g.transa ? " T" : " N") + (g.transb ? "T" : "N") +
         (g.accumulate ? " acc" : "") + (g.out_fp32 ? " fp32" : "") + (g.fp8 ? " fp8" : "");
}

std::string text(const AttentionProblem& a) {
  return a.label + (a.backward ? " bwd" : " fwd") + " b=" + std::to_string(a.batch) + " h=" + std::to_string(a.heads) +
         " hk=" + std::to_string(a.kv_heads) + " s=" + std::to_string(a.seq) + " dqk=" + std::to_string(a.d_qk) +
         " dv=" + std::to_string(a.d_v) + (a.causal ? " causal" : "");
}

std::string problem(int64_t groups, int64_t m, int64_t n, int64_t k, bool ta, bool tb, bool acc, bool fp32, bool fp8,
                    const std::string& label) {
  return text(GemmProblem{label, groups, m, n, k, ta, tb, acc, fp32, fp8});
}

// A linear of micro-batch 2, 1000 tokens, 3000 in and 5000 out features (weight [5000 x 3000] row-major), as
// OpBuilder::linear_keys writes its three passes, gives TE's three cuBLASLt calls: the output, input gradient and
// weight gradient, each column-major D = op(A) op(B) (TE: cpp_extensions/gemm.py, cublaslt_gemm.cu).
TEST(KernelProblem, LinearKeysMapToTransformerEnginesCublasCalls) {
  const std::string fwd = linear(2, 1000, 3000, 5000, "TN", false, "bf16");
  const std::string dgrad = linear(2, 1000, 5000, 3000, "NN", false, "bf16");
  const std::string wgrad = linear(1, 5000, 2000, 3000, "NT", true, "fp32");
  // Y[2000 x 5000] row-major = D[5000 x 2000]: W (A) transposed, X (B) not, k = in features.
  EXPECT_EQ(text(gemm_problem(shape("matmul", fwd), 90)),
            problem(1, 5000, 2000, 3000, true, false, false, false, false, fwd));
  // dX[2000 x 3000] = D[3000 x 2000]: W (A) and dY (B) as stored, k = out features.
  EXPECT_EQ(text(gemm_problem(shape("matmul", dgrad), 90)),
            problem(1, 3000, 2000, 5000, false, false, false, false, false, dgrad));
  // dW[5000 x 3000] = D[3000 x 5000]: X (A) as stored, dY (B) transposed, k = tokens, into fp32 main_grad.
  EXPECT_EQ(text(gemm_problem(shape("matmul", wgrad), 90)),
            problem(1, 3000, 5000, 2000, false, true, true, true, false, wgrad));
}

TEST(KernelProblem, Fp8RunsTnBelowBlackwellAndInTheKeysLayoutOnIt) {
  const std::string dgrad = linear(1, 1000, 5000, 3000, "NN", false, "bf16");
  const std::string wgrad = linear(1, 5000, 1000, 3000, "NT", true, "fp32");
  for (int sm : {89, 90, 120, 121}) {
    const GemmProblem d = gemm_problem(shape("fp8_matmul", dgrad), sm);
    const GemmProblem w = gemm_problem(shape("fp8_matmul", wgrad), sm);
    EXPECT_TRUE(d.fp8 && d.transa && !d.transb) << sm;
    EXPECT_TRUE(w.fp8 && w.transa && !w.transb) << sm;
    EXPECT_EQ(d.m * d.n * d.k, int64_t{3000} * 1000 * 5000) << sm;  // the same problem, TN
  }
  for (int sm : {100, 103, 110, 130}) {
    const GemmProblem d = gemm_problem(shape("fp8_matmul", dgrad), sm);
    const GemmProblem w = gemm_problem(shape("fp8_matmul", wgrad), sm);
    EXPECT_TRUE(!d.transa && !d.transb) << sm;
    EXPECT_TRUE(!w.transa && w.transb) << sm;
  }
  // bf16 keeps the key's layout everywhere.
  EXPECT_FALSE(gemm_problem(shape("matmul", dgrad), 90).transa);
}

TEST(KernelProblem, GroupedKeysMapToThePerExpertPasses) {
  const std::string head = "ng=4, M=100, N=300, K=700, dtype=bf16, out_dtype=bf16, main_grad_dtype=fp32";
  const std::string fwd = head + ", stage=fwd, grad=False, accumulate=False, use_split_accumulator=False, "
                                 "single_output=True";
  const std::string act = head + ", stage=bwd_grad_act, grad=True, accumulate=False, use_split_accumulator=True, "
                                 "single_output=False";
  const std::string w = head + ", stage=bwd_grad_w, grad=True, accumulate=True, use_split_accumulator=True, "
                               "single_output=False";
  EXPECT_EQ(text(gemm_problem(shape("group_matmul", fwd), 90)),
            problem(4, 300, 100, 700, true, false, false, false, false, fwd));
  EXPECT_EQ(text(gemm_problem(shape("group_matmul", act), 90)),
            problem(4, 700, 100, 300, false, false, false, false, false, act));
  EXPECT_EQ(text(gemm_problem(shape("group_matmul", w), 90)),
            problem(4, 700, 300, 100, false, true, true, true, false, w));
}

// Every GEMM of the sweep runs the FLOPs the engine charges for its key: 2 * groups * m * n * k.
TEST(KernelProblem, SweepGemmsRunTheFlopsTheEngineCharges) {
  for (const auto& s : standard_sweep(true)) {
    if (s.kind == ShapeKind::kSdpFwd || s.kind == ShapeKind::kSdpBwd) continue;
    for (int sm : {90, 100}) {
      const GemmProblem g = gemm_problem(s, sm);
      EXPECT_EQ(2.0 * static_cast<double>(g.groups * g.m * g.n * g.k), s.flops) << s.key;
    }
  }
}

TEST(KernelProblem, BadGemmKeysAreWords) {
  EXPECT_THROW(gemm_problem(shape("matmul", "b=1, m=2, k=3, n=4, layout=XN, accumulate=False, out_dtype=bf16"), 90),
               common::UsageError);
  EXPECT_THROW(gemm_problem(shape("matmul", "b=1, m=0, k=3, n=4, layout=TN, accumulate=False, out_dtype=bf16"), 90),
               common::UsageError);
  try {
    gemm_problem(shape("matmul", "b=1, m=2, k=3, layout=TN, accumulate=False, out_dtype=bf16"), 90);
    FAIL() << "no error";
  } catch (const common::UsageError& e) {
    EXPECT_EQ(std::string(e.what()), "matmul key 'b=1, m=2, k=3, layout=TN, accumulate=False, out_dtype=bf16': no "
                                     "field 'n'");
  }
}

TEST(KernelProblem, AttentionKeysGiveTheFusedAttentionCall) {
  const std::string key = "batch=2, seq_len=8192, head_num=16, kv_head_num=4, qk_head_dim=192, v_head_dim=128, "
                          "qkv_contiguous=True";
  const AttentionProblem f = attention_problem(shape("sdp_fwd", key)), b = attention_problem(shape("sdp_bwd", key));
  EXPECT_EQ(text(f), text(AttentionProblem{key, false, 2, 16, 4, 8192, 192, 128, true}));
  EXPECT_EQ(text(b), text(AttentionProblem{key, true, 2, 16, 4, 8192, 192, 128, true}));
  EXPECT_EQ(text(f), key + " fwd b=2 h=16 hk=4 s=8192 dqk=192 dv=128 causal");
  try {
    attention_problem(shape("sdp_fwd", "batch=1, seq_len=4096, head_num=12, kv_head_num=8, qk_head_dim=128, "
                                       "v_head_dim=128, qkv_contiguous=True"));
    FAIL() << "no error";
  } catch (const common::UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("kv_head_num 8 does not divide head_num 12"), std::string::npos) << e.what();
  }
  EXPECT_THROW(attention_problem(shape("matmul", linear(1, 2, 3, 4, "TN", false, "bf16"))), common::UsageError);
  EXPECT_THROW(gemm_problem(shape("sdp_fwd", key), 90), common::UsageError);
}

TEST(KernelProblem, AttentionBytesCountEveryBuffer) {
  // b=1, 4 heads, 2 kv heads, s=8, d_qk=16, d_v=8: Q 512, K 256, V 128, O 256 elements, 32 rows.
  AttentionProblem a{"k", false, 1, 4, 2, 8, 16, 8, true};
  EXPECT_EQ(attention_bytes(a), 2u * (512 + 256 + 128 + 256) + 4u * 32);
  a.backward = true;  // + dO, dQ, dK, dV (bf16), softmax sums and the dQ accumulator (fp32)
  EXPECT_EQ(attention_bytes(a), 2u * (512 + 256 + 128 + 256) + 4u * 32 + 2u * (256 + 512 + 256 + 128) + 4u * 32 +
                                    4u * 512);
}

TEST(KernelProblem, EfficiencyIsFlopsOverPeakTimesTime) {
  EXPECT_DOUBLE_EQ(efficiency_for(1e12, 1000, 2000), 0.5);  // 1 TFLOP in 2 ms at 1000 TFLOPS
  EXPECT_DOUBLE_EQ(efficiency_for(3e9, 1, 1000), 3.0);      // above 1 is allowed (causal attention)
  EXPECT_THROW(efficiency_for(1e12, 1000, 0), common::InternalError);
  EXPECT_THROW(efficiency_for(0, 1000, 1), common::InternalError);
  EXPECT_THROW(efficiency_for(1e12, 1000, std::nan("")), common::InternalError);
  const config::SystemConfig sys =
      config::load_system_file((fs::path(SIMUMAX_SOURCE_DIR) / "platforms" / "b200_bf16.json").string());
  EXPECT_EQ(table_tflops(sys, "matmul"), sys.op.at("matmul").tflops);
  EXPECT_EQ(table_tflops(sys, "no_such_table"), sys.op.at("default").tflops);
}

// Attention times measured for the default scenario's keys, written into its system config and read back: the
// engine charges exactly the measured time for each attention pass, and an untimed shape is listed with its reason.
TEST(KernelProblem, MeasuredAttentionRoundTripsThroughTheWriterToTheEngine) {
  const std::string base = (fs::path(SIMUMAX_SOURCE_DIR) / "platforms" / "b200_bf16.json").string();
  config::Scenario s = config::load_scenario((fs::path(SIMUMAX_SOURCE_DIR) / "scenarios" / "default.json").string());
  s.system = config::load_system_file(base);
  Measured m;
  std::map<std::string, double> measured_us;
  for (const auto& sh : scenario_shapes(s)) {
    if (sh.kind == ShapeKind::kSdpFwd) measured_us[sh.compute_op] = 1234.5;
    if (sh.kind == ShapeKind::kSdpBwd) measured_us[sh.compute_op] = 3210.25;
    if (measured_us.count(sh.compute_op)) {
      add_compute_timing(s.system, sh, measured_us[sh.compute_op], 1200, 1300, 40, m);
    } else if (sh.kind == ShapeKind::kGemm) {
      add_untimed(sh, "cuBLASLt has no algorithm for it on this GPU", m);
    }
  }
  ASSERT_EQ(measured_us.size(), 2u);
  const fs::path out = fs::temp_directory_path() / ("simumax_kernel_problem_" + std::to_string(::getpid()));
  fs::remove_all(out);
  write_outputs(out.string(), base, m);
  s.system = config::load_system_file((out / "system.json").string());
  const model::StepModel model = model::build_step_model(s);
  int checked = 0;
  for (const auto& chunk : model.chunks) {
    for (const auto& blk : chunk.blocks) {
      for (const auto& op : *blk.ops) {
        for (const auto& w : op.work) {
          if (w.flops == 0 || !measured_us.count(w.compute_op)) continue;
          const cost::KernelTime t = cost::kernel_time(s.system, w, config::Fidelity::kSimuMax);
          EXPECT_TRUE(t.table_hit) << w.shape_key;
          EXPECT_NEAR(t.compute_seconds / (measured_us[w.compute_op] * 1e-6), 1.0, 1e-12) << w.compute_op;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 0);
  std::ifstream in(out / "measurements.csv");
  std::stringstream csv;
  csv << in.rdbuf();
  EXPECT_NE(csv.str().find("sdp_fwd,sdp_fwd,\"batch="), std::string::npos) << csv.str().substr(0, 400);
  EXPECT_NE(csv.str().find(",not timed: cuBLASLt has no algorithm for it on this GPU\n"), std::string::npos);
  fs::remove_all(out);
}

}  // namespace
}  // namespace simumax::measure
