#!/bin/sh
# Runs every libFuzzer target of fuzz/ for FUZZ_SECONDS each (`make fuzz`), merging the inputs that reach new
# code into fuzz/corpus/<target>/, which the test suite replays. Stops at the first crash, naming its input.
# usage: tools/run-fuzz.sh BUILD_DIR SECONDS [TARGET...]; FUZZ_RUNS=N in the environment runs N inputs per
# target instead of SECONDS.
set -eu
build=$1
seconds=$2
shift 2
budget="-max_total_time=$seconds"
[ -n "${FUZZ_RUNS:-}" ] && budget="-runs=$FUZZ_RUNS"
# The readers that take a path get their input through a file: on tmpfs that is six times faster than on disk.
[ -w /dev/shm ] && export TMPDIR=/dev/shm
targets=${*:-"config_model config_strategy config_system scenario platform_xml kineto megatron_log kernel_classes serve_request sweep_file nccl_tests"}
work="$build/fuzz-work"
mkdir -p "$work/artifacts"
for t in $targets; do
  bin="$build/fuzz/fuzz_$t"
  [ -x "$bin" ] || { echo "error: $bin is missing (build the 'fuzzers' target)" >&2; exit 2; }
  rm -rf "$work/$t" && mkdir -p "$work/$t"
  echo "== $t: $budget"
  # Fresh inputs go to the work folder; the kept corpus is read, never written, while fuzzing.
  if ! "$bin" "$budget" -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
       -artifact_prefix="$work/artifacts/$t-" "$work/$t" "fuzz/corpus/$t" >"$work/$t.log" 2>&1; then
    tail -40 "$work/$t.log" >&2
    echo "error: fuzz_$t found a crash; the input is in $work/artifacts/" >&2
    exit 1
  fi
  grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$work/$t.log" | sed "s/^/  $t /"
  # Keep only inputs that add coverage to what the repository already holds.
  "$bin" -merge=1 "fuzz/corpus/$t" "$work/$t" >"$work/$t.merge.log" 2>&1
  grep -E "MERGE-OUTER: [0-9]+ new files" "$work/$t.merge.log" | sed "s/^/  $t /" || true
done
