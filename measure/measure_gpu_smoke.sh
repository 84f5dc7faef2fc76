#!/bin/sh
# The GPU smoke test: a scenario's GEMM and attention shapes, HBM and NCCL measured on this machine, the config loads
# and runs.
# Skipped (exit 77, reason printed) where no GPU is visible.
# Usage: measure_gpu_smoke.sh <simumax-measure> <source dir> <scratch dir>
set -u
bin=$1 src=$2 out=$3
if ! nvidia-smi -L > /dev/null 2>&1; then
  echo "SKIPPED: no GPU visible (nvidia-smi -L failed); the GPU smoke test runs only on a GPU machine"
  exit 77
fi
rm -rf "$out" && mkdir -p "$out"
start=$(date +%s)
"$bin" run "$src/scenarios/default.json" --system "$src/platforms/b200_bf16.json" -o "$out/a" --max-bytes 268435456 \
  || { echo "FAIL: run exited $?"; exit 1; }
echo "measured in $(( $(date +%s) - start )) s"
"$bin" run "$src/scenarios/default.json" --system "$src/platforms/b200_bf16.json" -o "$out/b" --skip-nccl \
  || { echo "FAIL: second run exited $?"; exit 1; }
# GEMM medians of the two runs, side by side (the issue's 2 % repeatability).
# The key is quoted and holds commas, so fields are counted from the end (median_us is the 6th from last).
awk -F, '$1=="gemm" && $NF=="measured" {k=$0; for (i = 0; i < 8; i++) sub(/,[^,]*$/, "", k); m=$(NF-5);
  if (NR==FNR) {a[k]=m; next} if (k in a) {d=(m-a[k])/a[k]; if (d<0) d=-d; if (d>w) w=d; n++}}
  END {printf "GEMM medians: %d shapes, worst run-to-run difference %.2f %%\n", n, 100*w}' \
  "$out/a/measurements.csv" "$out/b/measurements.csv"
# Both attention passes timed by cuDNN (run exits 2 above when cuDNN refuses one), with their medians.
for op in sdp_fwd sdp_bwd; do
  grep -q "^$op,$op,.*,measured\$" "$out/a/measurements.csv" || { echo "FAIL: $op not measured"; exit 1; }
done
awk -F, '$1 ~ /^sdp_/ {printf "%s: median %s us, efficiency %s\n", $1, $(NF-5), $(NF-1)}' "$out/a/measurements.csv"
sim=$(dirname "$(dirname "$bin")")/tools/simumax-sim
sed -e "s#\"\.\./models/#\"$src/models/#" -e "s#\"\.\./platforms/b200_bf16.json\"#\"$out/a/system.json\"#" \
  "$src/scenarios/default.json" > "$out/scenario.json"
"$sim" run "$out/scenario.json" -o "$out/run" || { echo "FAIL: simumax-sim"; exit 1; }
echo "measure_gpu_smoke: ok"
