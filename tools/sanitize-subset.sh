#!/bin/sh
# The input-facing part of the test suite under ASan + UBSan (what `make test` runs after the normal suite):
# the config loader's tests, the trace/log readers' tests and the fuzz corpus replay. The whole suite under the
# sanitizers takes over 19 minutes to build on 2 cores, beyond CI budget; these are the code a hostile file
# reaches. Any sanitizer report fails the run (-fno-sanitize-recover).
# usage: tools/sanitize-subset.sh BUILD_DIR JOBS
set -eu
build=$1
jobs=$2
# -O0: an optimised ASan + UBSan build takes 3.6x as long to compile (57 s against 16 s for one config file).
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=None -DSIMUMAX_SANITIZE=ON >/dev/null
cmake --build "$build" -j "$jobs" --target config_test trace_reader_test compare_test fuzz_replay
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# Each test binary runs from its build folder, as ctest runs it (some tests depend on what ../shared is).
root=$(pwd)
(cd "$build/engine/config" && SIMUMAX_SHARED_DIR="$root/../shared" ./config_test --gtest_brief=1)
(cd "$build/engine/report" && ./trace_reader_test --gtest_brief=1)
(cd "$build/engine/compare" && ./compare_test --gtest_brief=1)
"$build/fuzz/fuzz_replay" --all fuzz/corpus
echo "sanitizer subset: config_test, trace_reader_test, compare_test, fuzz corpus replay: no finding"
