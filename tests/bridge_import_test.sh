#!/bin/sh
# The importer (tools/import_bridge_perf) on the trimmed Megatron-Bridge fixture. A git repository is built here
# from two fixture trees: old_v0.4.0 (the old scripts/performance layout) tagged v0.4.0, then tree (the v0.6.0
# layout, the tables and the release docs) tagged v0.6.0. With --git it reproduces the expected output byte for
# byte: a 26.04 row reads v0.4.0's recipe (other settings than the 26.08 row of the same layout), a release no doc
# gives a version (26.05) and one whose version has no tag (26.06 -> v0.5.0, 25.11 -> v0.2.0) are named skips,
# an FP8-CS row takes the v1 constant where v2's layout is not the row's. The reserved models' rows and recipes
# are dropped by name (their rows are not tables, their recipe files not Python, their old-layout constants not
# evaluable: splitting, opening or evaluating one would change the output or fail the run). Without --git every
# row reads the given tree. A rerun leaves no stale case; a tree without the expected files is exit 2.
# Usage: bridge_import_test.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
data=$src/tests/data/bridge_import
importer=$src/tools/import_bridge_perf
fail() { echo "$1" >&2; cat "$work/stderr" >&2; exit 1; }
: >"$work/stderr"
repo=$work/repo
git init -q "$repo"
commit_tree() {  # commit_tree FIXTURE_TREE TAG: the repository's content becomes the tree, tagged
  find "$repo" -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf {} +
  cp -r "$1/." "$repo/"
  git -C "$repo" add -A
  GIT_AUTHOR_DATE=2026-01-01T00:00:00Z GIT_COMMITTER_DATE=2026-01-01T00:00:00Z \
    git -C "$repo" -c user.name=fixture -c user.email=fixture@example.invalid commit -q -m "$2"
  git -C "$repo" tag "$2"
}
commit_tree "$data/old_v0.4.0" v0.4.0
commit_tree "$data/tree" v0.6.0
python3 "$importer" "$data/tree" "$work/out" --commit v0.6.0 --git "$repo/.git" >"$work/stdout"
diff -r "$data/expected" "$work/out"
grep -q '"reserved: kept back to judge the model (LLAMA3.1_405B, DeepSeekV3)": 5' "$work/out/skipped.json"
grep -q '^github:NVIDIA-NeMo/Megatron-Bridge 067f987df03b8355b03192d88d70f1709fedf51a$' "$src/data/bridge/SOURCE"
# A stale case of an earlier import is removed by the next one.
touch "$work/out/cases/dgx_gb200/stale_case.json"
python3 "$importer" "$data/tree" "$work/out" --commit v0.6.0 --git "$repo/.git" >/dev/null
diff -r "$data/expected" "$work/out"
# Without --git every row reads the given tree: the 26.04 row gets the newest recipe (no recipe version named).
python3 "$importer" "$data/tree" "$work/out_tree" >/dev/null
grep -q '"recipe_version": "the given tree"' \
  "$work/out_tree/cases/dgx_gb200/qwen3_30b_a3b_8gpu_fp8mx_26.04_dgx_gb200.json" \
  || fail "without --git, the 26.04 row does not read the given tree"
# A --commit the repository does not have is exit 2, named.
rc=0; python3 "$importer" "$data/tree" "$work/out5" --commit 0123456 --git "$repo/.git" 2>"$work/stderr" || rc=$?
[ "$rc" -eq 2 ] && grep -q "no commit 0123456" "$work/stderr" || fail "an unknown --commit: exit $rc, expected 2"
# A recipe that is not Python makes its rows skips with the reason, never a crash (its four rows: without
# --git, the 26.04 ones read the given tree too).
cp -r "$data/tree" "$work/broken"
echo 'def qwen3_30b_a3b_pretrain_8gpu_gb200_fp8mx_config(:' \
  >"$work/broken/src/megatron/bridge/perf_recipes/qwen/gb200/qwen3_moe.py"
python3 "$importer" "$work/broken" "$work/out4" >/dev/null 2>"$work/stderr" || fail "a broken recipe failed the run"
grep -q '"recipe not readable: src/megatron/bridge/perf_recipes/qwen/gb200/qwen3_moe.py": 4' "$work/out4/skipped.json" \
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
