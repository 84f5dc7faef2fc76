#!/bin/sh
# A one-node Slurm cluster in a folder, for the sweep tests: munged, slurmctld and slurmd run as root with a
# generated slurm.conf (no cgroups, no accounting, ports chosen free), started and stopped by this script.
# usage: tests/local_slurm.sh start DIR   -> exit 0 when sinfo shows the node idle; 77 (skip) with a reason
#        tests/local_slurm.sh stop DIR    -> stops the daemons it started (by their pid files)
# After start, DIR/env holds SLURM_CONF=... for sbatch, squeue and scontrol.
set -u
cmd=${1:-}; dir=${2:-}
[ -n "$dir" ] || { echo "usage: $0 start|stop DIR" >&2; exit 2; }

skip() { echo "SKIP: $*" >&2; exit 77; }

stop() {
  for f in slurmd slurmctld munged; do
    [ -f "$dir/$f.pid" ] || continue
    pid=$(cat "$dir/$f.pid" 2>/dev/null)
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
  done
  # Wait up to 10 s for each to go, then force.
  for f in slurmd slurmctld munged; do
    [ -f "$dir/$f.pid" ] || continue
    pid=$(cat "$dir/$f.pid" 2>/dev/null); [ -n "$pid" ] || continue
    i=0
    while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    kill -9 "$pid" 2>/dev/null
    rm -f "$dir/$f.pid"
  done
  return 0
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

case "$cmd" in
  stop) stop; exit 0 ;;
  start) ;;
  *) echo "usage: $0 start|stop DIR" >&2; exit 2 ;;
esac

[ "$(id -u)" -eq 0 ] || skip "a local Slurm needs root (slurmd runs jobs as their user); running as $(id -un)"
for p in munged mungekey slurmctld slurmd sbatch sinfo; do
  command -v "$p" >/dev/null 2>&1 || skip "$p not found: tools/install-deps.sh installs slurm-wlm and munge"
done
mkdir -p "$dir/state" "$dir/spool" "$dir/munge" || exit 2
dir=$(cd "$dir" && pwd)
chmod 700 "$dir/munge"
mungekey --create --keyfile="$dir/munge/munge.key" --force >/dev/null 2>&1 || skip "mungekey failed"
chmod 400 "$dir/munge/munge.key"
munged --force --socket="$dir/munge/munge.sock" --key-file="$dir/munge/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge/munge.seed" >/dev/null 2>&1 ||
  skip "munged did not start: $(tail -n 1 "$dir/munged.log" 2>/dev/null)"
host=$(hostname -s)
cpus=$(nproc)
ctld_port=$(free_port); d_port=$(free_port)
cat > "$dir/slurm.conf" <<CONF
ClusterName=simumaxtest
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$d_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
MaxArraySize=100001
MaxJobCount=200000
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=5
Waittime=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
CONF
echo "SLURM_CONF=$dir/slurm.conf" > "$dir/env"
export SLURM_CONF="$dir/slurm.conf"
slurmctld -i -f "$dir/slurm.conf" >/dev/null 2>&1 || { stop; skip "slurmctld did not start: $(tail -n 2 "$dir/slurmctld.log" 2>/dev/null)"; }
slurmd -f "$dir/slurm.conf" >/dev/null 2>&1 || { stop; skip "slurmd did not start: $(tail -n 2 "$dir/slurmd.log" 2>/dev/null)"; }
i=0
while [ $i -lt 150 ]; do
  state=$(timeout 5 sinfo -h -N -o %t 2>/dev/null | head -n 1)
  case "$state" in idle*|mix*|alloc*) exit 0 ;; esac
  sleep 0.2; i=$((i + 1))
done
reason="$(tail -n 2 "$dir/slurmd.log" 2>/dev/null)"
stop
skip "the Slurm node did not become idle in 30 s (state '$state'): $reason"
