#!/bin/sh
# The importer (tools/import_bridge_perf) on the trimmed Megatron-Bridge fixture: it reproduces the expected
# output byte for byte; the reserved models' rows and recipes are dropped by name (their rows are not tables and
# their recipes are not Python: splitting or opening one would change the output or fail the run); a rerun into
# the same folder leaves no case of the earlier run that it did not write again; and a tree without the expected
# files is an error naming the missing path (exit 2). The committed data/bridge/SOURCE names the pinned commit.
# Usage: bridge_import_test.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
data=$src/tests/data/bridge_import
importer=$src/tools/import_bridge_perf
python3 "$importer" "$data/tree" "$work/out" --commit 067f987df03b8355b03192d88d70f1709fedf51a >"$work/stdout"
diff -r "$data/expected" "$work/out"
grep -q '"reserved: kept back to judge the model (LLAMA3.1_405B, DeepSeekV3)": 5' "$work/out/skipped.json"
grep -q '^github:NVIDIA-NeMo/Megatron-Bridge 067f987df03b8355b03192d88d70f1709fedf51a$' "$src/data/bridge/SOURCE"
# A stale case of an earlier import is removed by the next one.
touch "$work/out/cases/dgx_gb200/stale_case.json"
python3 "$importer" "$data/tree" "$work/out" --commit 067f987df03b8355b03192d88d70f1709fedf51a >/dev/null
diff -r "$data/expected" "$work/out"
fail() { echo "$1" >&2; cat "$work/stderr" >&2; exit 1; }
# A recipe that is not Python makes its rows skips with the reason, never a crash.
cp -r "$data/tree" "$work/broken"
echo 'def qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config(:' \
  >"$work/broken/src/megatron/bridge/perf_recipes/qwen/gb200/qwen3_moe.py"
python3 "$importer" "$work/broken" "$work/out4" >/dev/null 2>"$work/stderr" || fail "a broken recipe failed the run"
grep -q '"recipe not readable: src/megatron/bridge/perf_recipes/qwen/gb200/qwen3_moe.py": 1' "$work/out4/skipped.json" \
  || fail "the broken recipe is not a named skip"
mkdir -p "$work/empty"
rc=0; python3 "$importer" "$work/empty" "$work/out2" 2>"$work/stderr" || rc=$?
[ "$rc" -eq 2 ] || fail "an empty tree: exit $rc, expected 2"
grep -q "$work/empty/docs/performance-summary.md: missing" "$work/stderr" || fail "the missing table is not named"
mkdir -p "$work/tables_only"
cp -r "$data/tree/docs" "$work/tables_only/"
rc=0; python3 "$importer" "$work/tables_only" "$work/out3" 2>"$work/stderr" || rc=$?
[ "$rc" -eq 2 ] || fail "a tree without recipes: exit $rc, expected 2"
grep -q "$work/tables_only/src/megatron/bridge/perf_recipes: missing" "$work/stderr" || fail "the recipes are not named"
echo ok
