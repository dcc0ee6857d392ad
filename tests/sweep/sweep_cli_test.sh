#!/usr/bin/env bash
# End-to-end checks of `trainsim sweep` and `trainsim merge` on a small sweep file.
#   sweep_cli_test.sh CHECK TRAINSIM SWEEP.yaml
# CHECK: jobs | resume | kill | shards | statuses | refusals | same_as_run | check | full | all_traffic
set -euo pipefail

check=$1
trainsim=$2
sweep=$3
work=$(mktemp -d "${TMPDIR:-/tmp}/trainsim-sweep-cli-XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# sweep OUT [options...]: the sweep on the contention-free network, quietly.
sweep() {
  local out=$1
  shift
  "$trainsim" sweep "$sweep" --out "$out" --network ideal -q "$@"
}

same() {  # same FILE1 FILE2 WHAT
  cmp -s "$1" "$2" || {
    diff "$1" "$2" | head -20 >&2
    fail "$3: $1 and $2 differ"
  }
}

lines() { wc -l <"$1" | tr -d ' '; }

case $check in
  jobs)
    # Results are written in point order whatever the number of processes.
    sweep "$work/j1" --jobs 1
    sweep "$work/j4" --jobs 4
    same "$work/j1/results.jsonl" "$work/j4/results.jsonl" "--jobs 1 vs --jobs 4"
    same "$work/j1/results.csv" "$work/j4/results.csv" "--jobs 1 vs --jobs 4"
    [[ $(lines "$work/j1/results.jsonl") == 16 ]] || fail "expected 16 results"
    ;;

  resume)
    # A crash in the middle of writing a line: the torn line is dropped and the rest evaluated.
    sweep "$work/full" --jobs 2
    mkdir "$work/crashed"
    cp "$work/full/sweep.json" "$work/crashed/"
    head -n 5 "$work/full/results.jsonl" >"$work/crashed/results.jsonl"
    sed -n 6p "$work/full/results.jsonl" | head -c 100 >>"$work/crashed/results.jsonl"
    if sweep "$work/crashed" --jobs 2 2>/dev/null; then fail "a directory with results was reused without --resume"; fi
    "$trainsim" sweep "$sweep" --out "$work/crashed" --network ideal --jobs 2 --resume 2>"$work/log"
    grep -q "11 points evaluated, 5 already done" "$work/log" || fail "resume did not skip 5 points: $(cat "$work/log")"
    same "$work/full/results.jsonl" "$work/crashed/results.jsonl" "resumed after a torn line"
    same "$work/full/results.csv" "$work/crashed/results.csv" "resumed after a torn line"
    # Resuming a finished sweep evaluates nothing and changes nothing.
    sweep "$work/crashed" --resume
    same "$work/full/results.jsonl" "$work/crashed/results.jsonl" "resumed a finished sweep"
    ;;

  kill)
    # SIGKILL at an arbitrary moment loses at most the points in flight and leaves no corrupt line.
    sweep "$work/full" --jobs 2
    "$trainsim" sweep "$sweep" --out "$work/killed" --network ideal -q --jobs 1 &
    pid=$!  # trainsim itself, not a subshell
    for _ in $(seq 1 200); do
      [[ -s "$work/killed/results.jsonl" ]] && break
      sleep 0.05
    done
    kill -KILL "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    python3 - "$work/killed/results.jsonl" <<'EOF'
import json, sys
text = open(sys.argv[1]).read()
complete = text if text.endswith("\n") else text[: text.rfind("\n") + 1]
for n, line in enumerate(complete.splitlines(), 1):
    json.loads(line)  # every complete line is a whole result
EOF
    sweep "$work/killed" --jobs 2 --resume
    same "$work/full/results.csv" "$work/killed/results.csv" "resumed after SIGKILL"
    ;;

  shards)
    # Three shards merged equal the unsharded run; missing or repeated shards are refused.
    sweep "$work/full" --jobs 2
    for i in 0 1 2; do sweep "$work/s$i" --jobs 2 --shard "$i/3"; done
    [[ $(lines "$work/s1/results.jsonl") == 5 ]] || fail "shard 1/3 of 16 points should hold 5"
    "$trainsim" merge "$work/s2" "$work/s0" "$work/s1" --out "$work/merged" -q
    same "$work/full/results.jsonl" "$work/merged/results.jsonl" "shards merged"
    same "$work/full/results.csv" "$work/merged/results.csv" "shards merged"
    set +e
    "$trainsim" merge "$work/s0" "$work/s1" --out "$work/partial" 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] || fail "merging 2 of 3 shards exited $rc"
    grep -q "5 of the sweep's 16 points have no result, e.g. the points of index 2 (shard 2/3), 5 (shard 2/3)" \
      "$work/log" || fail "missing points not named: $(cat "$work/log")"
    set +e
    "$trainsim" merge "$work/s0" "$work/s1" "$work/s2" "$work/s1" --out "$work/twice" 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] && grep -q "is in both .*/s1 and .*/s1" "$work/log" || fail "a repeated shard was merged"
    ;;

  statuses)
    # Points that do not fit or are invalid are results, and the sweep succeeds.
    sweep "$work/out" --jobs 2
    python3 - "$work/out/results.csv" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
count = lambda s: sum(r["status"] == s for r in rows)
assert (count("ok"), count("infeasible"), count("invalid")) == (7, 1, 8), [r["status"] for r in rows]
bad = [r for r in rows if r["status"] == "infeasible"][0]
assert "GiB of HBM at its peak" in bad["reason"] and float(bad["iteration_time_s"]) > 0, bad
wrong = [r for r in rows if r["status"] == "invalid"][0]
assert wrong["reason"].startswith("tiny.yaml:11:42: error: training.dtype:"), wrong["reason"]
assert [int(r["point_index"]) for r in rows] == list(range(16))
EOF
    ;;

  refusals)
    # Another sweep's directory, or another shard's, is not written into.
    sweep "$work/out" --jobs 2 --shard 0/2
    set +e
    sweep "$work/out" --shard 1/2 --resume 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] && grep -q "holds the results of shard 0/2, this run is shard 1/2" "$work/log" ||
      fail "another shard's directory was reused (exit $rc): $(cat "$work/log")"
    set +e
    "$trainsim" sweep "$sweep" --out "$work/out" --analytic --resume -q 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] && grep -q "holds simulated (ideal network) results, this run is analytic" "$work/log" ||
      fail "simulated results were mixed with analytic ones (exit $rc): $(cat "$work/log")"
    ;;

  same_as_run)
    # A simulated point's result is what `trainsim run --format json` prints for its scenario (without
    # its advice on other plans and its accuracy evidence), plus the point's identity and status (and the command line that
    # reproduces it).
    sweep "$work/out" --jobs 2
    base=$(dirname "$sweep")/../../../scenarios/00-gpt3-125m-1gpu.yaml
    "$trainsim" run "$base" --set model.seq_len=1Ki --set "training={micro_batch: 8, global_batch: 8, dtype: bf16}" \
      --network ideal --format json -q >"$work/run.json"
    python3 - "$work/out/results.jsonl" "$work/run.json" <<'EOF'
import json, sys
results = [json.loads(line) for line in open(sys.argv[1])]
values = {"seq_len": 1024, "micro_batch": 8, "global_batch": 8, "dtype": "bf16"}
point = [r for r in results if r["point"]["values"] == values][0]
run = json.load(open(sys.argv[2]))
assert (point["status"], point["reason"], point["mode"]) == ("ok", "", "simulated"), point
command = point["provenance"]["command_line"]
assert command.startswith("trainsim run ../../../scenarios/00-gpt3-125m-1gpu.yaml --set model.seq_len=1Ki"), command
for r in (point, run):
    r["provenance"].pop("command_line")
for key in ("point", "mode", "status", "reason"):
    point.pop(key)
run["why"].pop("changes")  # advice on neighbouring plans is run's alone: a sweep already explores them
run.pop("accuracy")  # so is the validation's evidence quoted beside the numbers, for the reader
assert point == run, [k for k in run if point.get(k) != run.get(k)]
EOF
    ;;

  check)
    # --check-analytic: a seeded draw of points, each estimated and simulated, and the error table.
    "$trainsim" sweep "$sweep" --out "$work/a" --network ideal --analytic --check-analytic 6 --seed 3 -q >"$work/t1"
    "$trainsim" sweep "$sweep" --out "$work/b" --network ideal --analytic --check-analytic 6 --seed 3 -q >"$work/t2"
    same "$work/t1" "$work/t2" "the same seed"
    [[ $(grep -c '^  [0-9a-f]\{12\} ' "$work/t1") == 6 ]] || fail "expected 6 rows: $(cat "$work/t1")"
    grep -qE '^# \|error\| over [1-6] points: median [0-9.]+%, max [0-9.]+% \(point [0-9a-f]{12}\)$' "$work/t1" ||
      fail "no error summary: $(cat "$work/t1")"
    ;;

  full)
    # --full: every rank simulated, recorded in the manifest and in each point's reproducing command,
    # never mixed with collapsed results; refused beside --analytic.
    sweep "$work/out" --jobs 2 --full
    python3 - "$work/out" <<'EOF'
import json, sys
manifest = json.load(open(sys.argv[1] + "/sweep.json"))
assert manifest["full"] is True, manifest
for line in open(sys.argv[1] + "/results.jsonl"):
    r = json.loads(line)
    if r["status"] not in ("ok", "infeasible"):
        continue
    assert r["provenance"]["options"]["full"] is True, r["provenance"]
    assert r["provenance"]["command_line"].endswith(" --network ideal --full --format json"), r["provenance"]
EOF
    set +e
    sweep "$work/out" --resume 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] && grep -q "holds simulated (ideal network, every rank) results, this run is simulated (ideal network)" "$work/log" ||
      fail "collapsed results were mixed with full ones (exit $rc): $(cat "$work/log")"
    set +e
    "$trainsim" sweep "$sweep" --out "$work/never" --analytic --full -q 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 2 ]] || fail "--full beside --analytic was accepted (exit $rc)"
    ;;

  all_traffic)
    # --all-traffic: one rank per class with every rank's traffic (SimGrid network), recorded like
    # --full and never mixed with other results; refused beside --full and on the ideal network.
    "$trainsim" sweep "$sweep" --out "$work/out" --jobs 2 --all-traffic -q
    python3 - "$work/out" <<'EOF2'
import json, sys
manifest = json.load(open(sys.argv[1] + "/sweep.json"))
assert manifest["all_traffic"] is True and manifest["full"] is False, manifest
for line in open(sys.argv[1] + "/results.jsonl"):
    r = json.loads(line)
    if r["status"] not in ("ok", "infeasible"):
        continue
    assert r["provenance"]["command_line"].endswith(" --all-traffic --format json"), r["provenance"]
EOF2
    set +e
    "$trainsim" sweep "$sweep" --out "$work/out" --resume -q 2>"$work/log"
    rc=$?
    set -e
    [[ $rc == 3 ]] && grep -q "holds simulated (simgrid network, every rank's traffic) results, this run is simulated (simgrid network)" "$work/log" ||
      fail "plain collapsed results were mixed with --all-traffic ones (exit $rc): $(cat "$work/log")"
    for refused in "--full" "--network ideal"; do
      set +e
      # shellcheck disable=SC2086
      "$trainsim" sweep "$sweep" --out "$work/never" --all-traffic $refused -q 2>"$work/log"
      rc=$?
      set -e
      [[ $rc == 2 ]] || fail "--all-traffic beside $refused was accepted (exit $rc)"
    done
    ;;

  *)
    fail "unknown check $check"
    ;;
esac
echo "ok: $check"
