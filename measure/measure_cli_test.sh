#!/bin/sh
# simumax-measure's CLI without a GPU: shapes, import (a config that simumax-sim then runs), and bad input.
# Usage: measure_cli_test.sh <simumax-measure> <source dir> <scratch dir>
set -u
bin=$1 src=$2 out=$3
sim=$(dirname "$(dirname "$bin")")/tools/simumax-sim
rm -rf "$out" && mkdir -p "$out"
fail() { echo "FAIL: $*"; exit 1; }

"$bin" shapes "$src/scenarios/default.json" -o "$out/shapes.csv" || fail "shapes exited $?"
head -1 "$out/shapes.csv" | grep -qx 'compute_op,kind,flops,key' || fail "shapes header"
grep -q '^sdp_fwd,sdp_fwd,' "$out/shapes.csv" || fail "no attention shape"

# The standard sweep: 375 bf16 GEMMs (three layouts), 81 grouped, 56 attention; fp8 adds 375 + 81.
[ "$("$bin" shapes --sweep | wc -l)" = 513 ] || fail "sweep size"
[ "$("$bin" shapes --sweep --fp8 | wc -l)" = 969 ] || fail "fp8 sweep size"

"$bin" import --system "$src/platforms/b200_bf16.json" \
  --nccl-tests "$src/tests/data/nccl_tests/mooncake-pr3484-all_reduce-8gpu.txt:high_intra_node:all_reduce" \
  --nccl-tests "$src/tests/data/nccl_tests/nccl-issue1411-all_reduce-2node-4gpu.txt:inter_node:all_reduce" \
  -o "$out/imported" > "$out/import.txt" || fail "import exited $?"
grep -q '^networks.high_intra_node.op.all_reduce: efficient_factor' "$out/import.txt" || fail "fit report"
test -f "$out/imported/system.json" && test -f "$out/imported/measurements.csv" || fail "outputs"
if [ -x "$sim" ]; then
  sed -e "s#\"\.\./models/#\"$src/models/#" -e "s#\"\.\./platforms/b200_bf16.json\"#\"$out/imported/system.json\"#" \
    "$src/scenarios/default.json" > "$out/scenario.json"
  grep -q "$out/imported/system.json" "$out/scenario.json" || fail "scenario rewrite"
  "$sim" run "$out/scenario.json" -o "$out/run" > /dev/null || fail "simumax-sim run with the imported system exited $?"
fi

"$bin" run --help | grep -q -- '--skip-attention' || fail "run --help lacks --skip-attention"

# Bad input: one line, exit 2.
expect_error() {
  code=$1; shift
  "$@" > /dev/null 2> "$out/err.txt"; rc=$?
  [ "$rc" = 2 ] || fail "expected exit 2, got $rc: $*"
  [ "$(wc -l < "$out/err.txt")" = 1 ] || fail "expected one line: $(cat "$out/err.txt")"
  grep -q "$code" "$out/err.txt" || fail "expected '$code' in: $(cat "$out/err.txt")"
}
expect_error "give a scenario" "$bin" shapes
expect_error "go together" "$bin" shapes --model "$src/models/llama3-8b.json"
expect_error "expected FILE:TIER" "$bin" import --system "$src/platforms/b200_bf16.json" --nccl-tests x.txt -o "$out/x"
expect_error "expected a regular file" "$bin" import --system "$src/platforms/b200_bf16.json" \
  --nccl-tests /nonexistent.txt:inter_node -o "$out/x"
expect_error "is not in" "$bin" import --system "$src/platforms/b200_bf16.json" \
  --nccl-tests "$src/tests/data/nccl_tests/mooncake-pr3484-all_reduce-8gpu.txt:nvlink:all_reduce" -o "$out/x"
expect_error "different numbers of ranks" env SLURM_PROCID=0 SLURM_NTASKS=12 SLURM_LOCALID=0 SLURM_TASKS_PER_NODE=8,4 \
  "$bin" run --sweep --system "$src/platforms/b200_bf16.json" -o "$out/x"
# Usage errors exit 2 like every other error (CLI11's own code was 106).
expect_error "max-bytes" "$bin" run --max-bytes 5 --system "$src/platforms/b200_bf16.json" -o "$out/x"
expect_error "shapes: unknown option '--no-such-flag'" "$bin" shapes --no-such-flag
"$bin" --version | grep -qx 'simumax-measure [0-9]*\.[0-9]*\.[0-9]*' || fail "--version"
expect_error "fit-min-bytes = nan" "$bin" import --system "$src/platforms/b200_bf16.json" \
  --nccl-tests "$src/tests/data/nccl_tests/mooncake-pr3484-all_reduce-8gpu.txt:high_intra_node:all_reduce" \
  --fit-min-bytes nan -o "$out/x"
if ! nvidia-smi -L > /dev/null 2>&1; then
  # A build with CUDA and cuDNN finds no GPU; one without says what it lacks (cuDNN first: the sweep has attention).
  expect_error "no CUDA GPU visible\|built without the CUDA toolkit\|built without cuDNN 9\|cuDNN 9 not found" \
    env CUDA_VISIBLE_DEVICES= "$bin" run --sweep --system "$src/platforms/b200_bf16.json" -o "$out/x"
  # --skip-attention never asks for cuDNN.
  expect_error "no CUDA GPU visible\|built without the CUDA toolkit" env CUDA_VISIBLE_DEVICES= \
    "$bin" run --sweep --skip-attention --system "$src/platforms/b200_bf16.json" -o "$out/x"
fi
echo "measure_cli: ok"
