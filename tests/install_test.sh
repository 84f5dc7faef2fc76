#!/bin/sh
# The install is relocatable (issue #14): `cmake --install` into a temporary prefix, the tree then moved to
# another folder, and run / compare / validate / the SimGrid executor / the Python module used from there. Every
# file they name must lie in the moved tree, and nothing they print may name the source or build tree.
# Usage: install_test.sh BUILD_DIR SOURCE_DIR SHARED_DIR PYTHON (PYTHON empty: no Python module built)
set -eu
build=$(cd "$1" && pwd); source=$(cd "$2" && pwd); shared=$(cd "$3" && pwd); python=${4:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
mv "$tmp/prefix" "$tmp/moved"
root=$tmp/moved
cd "$tmp"
unset SIMUMAX_DATA_DIR SIMUMAX_SIM_MODULE SIMUMAX_KERNEL_CLASSES PYTHONPATH || true
export SIMUMAX_SHARED_DIR="$shared"
sim="$root/bin/simumax-sim"
data="$root/share/simumax-sim"

for f in bin/simumax-sim lib/libsimumax_sim.so share/simumax-sim/data/kernel_classes.json \
         share/simumax-sim/models/llama3-8b.json share/simumax-sim/platforms/b200_bf16.json \
         share/simumax-sim/scenarios/default.json share/doc/simumax-sim/README.md share/man/man1/simumax-sim.1 \
         share/bash-completion/completions/simumax-sim share/zsh/site-functions/_simumax-sim; do
  [ -f "$root/$f" ] || fail "the install lacks $f"
done

"$sim" run "$data/scenarios/default.json" --trace --granularity op -o out/run > run.txt || fail "run"
"$sim" compare out/run "$shared/traces/kineto/train_8gpu_rank3.json.gz" --rank 0 --json compare.json \
  > compare.txt || fail "compare"
grep -qF "\"$data/data/kernel_classes.json\"" compare.json || fail "compare did not use the installed kernel classes"
"$sim" validate "$shared/validation/a100" > validate.txt || fail "validate"
LD_DEBUG=files "$sim" run "$data/scenarios/default.json" --executor sim -q -o out/sim 2> ld.txt || fail "run sim"
grep -q "file=$root/.*libsimumax_sim.so" ld.txt || fail "the SimGrid executor was not loaded from the install"

if [ -n "$python" ]; then
  PYTHONPATH="$root/lib/python3/dist-packages" "$python" - "$root" "$data" > python.txt <<'PY' || fail "python"
import os, sys
import simumax_sim
root, data = sys.argv[1], sys.argv[2]
assert simumax_sim.__file__.startswith(root), simumax_sim.__file__
assert simumax_sim.data_dir() == data, simumax_sim.data_dir()
result = simumax_sim.run(os.path.join(data, "scenarios", "default.json"))
print(result.table)
assert simumax_sim.get_simu_model_config("llama3-8b") == os.path.join(data, "models", "llama3-8b.json")
PY
fi

for f in run.txt compare.txt compare.json validate.txt out/run/summary.json ${python:+python.txt}; do
  if grep -qF -e "$source/" -e "$build/" "$f"; then fail "$f names the source or build tree"; fi
done
echo "install relocated to $root: run, compare, validate, sim executor${python:+, Python module} OK"
