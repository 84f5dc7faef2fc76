#!/bin/sh
# `simumax-sim sweep --slurm` on a real one-node Slurm (issue #16): starts munged, slurmctld and slurmd
# (tests/local_slurm.sh), submits sweeps as job arrays, waits for them, merges their shards and checks that the
# merged sweep.csv / sweep.json equal the local run's byte for byte; then stops the daemons. Exit 77 (skipped, with
# the reason) only where Slurm cannot be started here.
# usage: tests/sweep_slurm_test.sh SIMUMAX_SIM SOURCE_DIR WORK_DIR
set -u
sim=$1; src=$2; work=$3
rm -rf "$work"; mkdir -p "$work"
work=$(cd "$work" && pwd)
# The daemons' Unix sockets live in the cluster folder: a short path, as a socket path has at most 107 bytes.
cluster=$(mktemp -d /tmp/simumax-slurm.XXXXXX) || exit 1
"$src/tests/local_slurm.sh" start "$cluster"
rc=$?
[ $rc -eq 0 ] || { rm -rf "$cluster"; exit $rc; }
trap '"$src/tests/local_slurm.sh" stop "$cluster"; rm -rf "$cluster"' EXIT
trap 'exit 130' INT TERM
. "$cluster/env"
export SLURM_CONF
fail() { echo "FAIL: $*" >&2; exit 1; }

# submit NAME SWEEP SHARDS: --slurm, wait (at most 60 s) for the job to leave the queue, merge, compare with a
# local run of the same sweep.
submit() {
  name=$1; sweep=$2; shards=$3
  start=$(date +%s)
  out=$(cd "$src" && "$sim" sweep "$sweep" --slurm --shards "$shards" -o "$work/$name") || fail "$name: submit: $out"
  echo "$out"
  job=$(cat "$work/$name/slurm/job_id")
  i=0
  while [ -n "$(timeout 10 squeue -h -j "$job" 2>/dev/null)" ]; do
    i=$((i + 1)); [ $i -le 300 ] || fail "$name: job $job still queued after 60 s: $(squeue -j "$job")"
    sleep 0.2
  done
  (cd "$src" && "$sim" sweep --merge "$work/$name" --html "$work/$name.html") || fail "$name: merge"
  echo "$name: job $job ran and merged in $(( $(date +%s) - start )) s"
  (cd "$src" && "$sim" sweep "$sweep" -q -o "$work/$name-local" --html "$work/$name-local.html") || fail "$name: local run"
  cmp "$work/$name/sweep.csv" "$work/$name-local/sweep.csv" || fail "$name: merged sweep.csv differs from the local run's"
  cmp "$work/$name/sweep.json" "$work/$name-local/sweep.json" || fail "$name: merged sweep.json differs from the local run's"
  cmp "$work/$name.html" "$work/$name-local.html" || fail "$name: the merged sweep's page differs from the local run's"
  echo "$name: merged sweep.csv, sweep.json and the page equal the local run's"
}

# 12 SimGrid cases over 4 array tasks, then 1,000 fast cases over 10.
submit whatif tests/data/sweep/whatif.json 4
submit thousand tests/data/sweep/thousand.json 10
[ "$(wc -l < "$work/thousand/sweep.csv")" -eq 1001 ] || fail "thousand: not 1,000 rows"

# Slurm refusing the job is a clear error (exit 2, with sbatch's own words), not a hang.
err=$(cd "$src" && "$sim" sweep tests/data/sweep/whatif.json --slurm --sbatch-arg=--partition=nope -o "$work/rejected" 2>&1)
rc=$?
[ $rc -eq 2 ] || fail "a rejected job: exit $rc, not 2"
echo "$err" | grep -q "sbatch rejected the job (exit 1): sbatch: error: invalid partition specified: nope" ||
  fail "a rejected job: $err"
echo "PASS"
