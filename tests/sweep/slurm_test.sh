#!/usr/bin/env bash
# The Slurm scripts for real: starts a single-node Slurm (slurmctld + slurmd on this machine, as the
# current user, configuration and state in a temporary directory), submits a small sweep as a job
# array of 3 shards plus the dependent merge job with tools/slurm/submit-sweep, and checks that the
# merged results equal an unsharded local run. Exits 77 (skipped) when slurm-wlm is not installed or
# its daemons cannot start here.
#   slurm_test.sh TRAINSIM SOURCE_DIR
set -euo pipefail

trainsim=$1
source_dir=$2
sweep=$source_dir/tests/sweep/fixtures/tiny.yaml
skip() {
  echo "SKIPPED: $*" >&2
  exit 77
}
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

for program in slurmctld slurmd sbatch squeue sinfo scontrol; do
  command -v "$program" >/dev/null || PATH=$PATH:/usr/sbin command -v "$program" >/dev/null ||
    skip "$program not found: install Debian's slurm-wlm to run the Slurm integration test"
done
export PATH=$PATH:/usr/sbin
plugins=$(dirname "$(dpkg -L slurm-wlm-basic-plugins 2>/dev/null | grep '/auth_none.so$' | head -1)" 2>/dev/null || true)

work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-slurm-XXXXXX")
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

# Two free TCP ports for the daemons.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
user=$(id -un)
mkdir -p "$work/state" "$work/spool" "$work/out"
cat >"$work/slurm.conf" <<EOF
ClusterName=trainsim-test
SlurmctldHost=$(hostname -s)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
AuthType=auth/none
CredType=cred/none
${plugins:+PluginDir=$plugins}
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
MessageTimeout=5
NodeName=trainsim-test-node NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$work/slurm.conf

slurmctld -D -c -f "$SLURM_CONF" >"$work/slurmctld.stdout" 2>&1 &
pids+=($!)
slurmd -D -N trainsim-test-node -f "$SLURM_CONF" >"$work/slurmd.stdout" 2>&1 &
pids+=($!)
ready=false
for _ in $(seq 1 40); do
  for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null || break 2; done  # a daemon gave up
  if timeout 3 sinfo -h -N -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
    ready=true
    break
  fi
  sleep 0.5
done
if ! $ready; then
  echo "--- slurmctld log" >&2
  tail -n 20 "$work/slurmctld.log" "$work/slurmctld.stdout" >&2 2>/dev/null || true
  echo "--- slurmd log" >&2
  tail -n 20 "$work/slurmd.log" "$work/slurmd.stdout" >&2 2>/dev/null || true
  skip "the Slurm daemons did not come up on this machine (see the logs above)"
fi

read -r array merge < <("$source_dir/tools/slurm/submit-sweep" "$sweep" --shards 3 --out "$work/out" \
  --trainsim "$trainsim" -- --network ideal -q | tail -n 1)
[[ -n $merge ]] || fail "submit-sweep printed no job ids"

# Wait for the merge job to leave the queue.
for _ in $(seq 1 240); do
  state=$(scontrol show job "$merge" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  [[ $state == PENDING || $state == RUNNING || $state == CONFIGURING || $state == COMPLETING ]] || break
  sleep 0.5
done
[[ $state == COMPLETED ]] || {
  tail -n 20 "$work"/out/*.out >&2 2>/dev/null || true
  fail "the merge job ended $state"
}
[[ $(ls "$work/out" | grep -c '^trainsim-sweep-.*_[0-9]*\.out$') == 3 ]] || fail "expected 3 array task logs"

"$trainsim" sweep "$sweep" --out "$work/local" --network ideal --jobs 2 -q
cmp "$work/local/results.jsonl" "$work/out/merged/results.jsonl" || fail "merged results differ from a local run"
cmp "$work/local/results.csv" "$work/out/merged/results.csv" || fail "merged CSV differs from a local run"
echo "ok: Slurm array $array and merge job $merge reproduced the local run"
