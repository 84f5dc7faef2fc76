#!/bin/sh
# The importer (tools/import_megatron_tests) on the committed Megatron-LM inputs: it reproduces the expected
# output byte for byte, the cases committed under data/megatron/ for those tests are the same files, it skips
# the reserved tests by name (their files are not YAML: opening one fails the run), and a tree without the
# expected folders is an error naming the missing path (exit 2).
# Usage: megatron_import_test.sh SOURCE_DIR WORK_DIR
set -eu
src=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
data=$src/tests/data/megatron_import
python3 "$src/tools/import_megatron_tests" "$data/tree" "$work/out" \
  --commit d98e8a64ddf34856e74b24714e3bedb2f5a39553 >"$work/stdout"
diff -r "$data/expected" "$work/out"
grep -q '"reserved: kept back as an external check": 2' "$work/out/skipped.json"
for f in $(cd "$data/expected" && find cases -name '*.json' | sort); do
  cmp "$data/expected/$f" "$src/data/megatron/$f"
done
mkdir -p "$work/empty"
if python3 "$src/tools/import_megatron_tests" "$work/empty" "$work/out2" 2>"$work/stderr"; then
  echo "an empty tree was accepted" >&2
  exit 1
else
  rc=$?
fi
[ "$rc" -eq 2 ] || { echo "exit $rc, expected 2" >&2; exit 1; }
grep -q "$work/empty/tests/functional_tests/test_cases: missing" "$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
echo ok
