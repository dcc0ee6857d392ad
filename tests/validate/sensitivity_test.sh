#!/usr/bin/env bash
# tools/validation-sensitivity on Korthikanti Table 4 (one DGX A100, a second per run): a slower GEMM
# ceiling must make the simulated layer slower (a positive move of the signed median), a faster bus
# faster, the other suites stay out, and bad input gets the documented exit codes.
#
#   tests/validate/sensitivity_test.sh SOURCE_DIR TRAINSIM
set -euo pipefail
source_dir="$1" trainsim="$2"
tool="$source_dir/tools/validation-sensitivity"

out=$("$tool" --trainsim "$trainsim" --suite korthikanti-table4 --vary compute.gemm_efficiency=-10% \
  --vary collective_fits.bus_bandwidth=+10% 2>/dev/null)
echo "$out"
grep -Eq "^baseline +[-+][0-9.]+%  max [0-9.]+%$" <<<"$out" || { echo "FAILED: no baseline row"; exit 1; }
grep -Eq "^compute.gemm_efficiency -10% +[-+][0-9.]+% \(\+[0-9.]+\)  max" <<<"$out" ||
  { echo "FAILED: a 10 % slower GEMM did not move the median up"; exit 1; }
grep -Eq "^collective_fits.bus_bandwidth \+10% +[-+][0-9.]+% \(-[0-9.]+\)  max" <<<"$out" ||
  { echo "FAILED: a 10 % faster bus did not move the median down"; exit 1; }
if grep -q "table5" <<<"$out"; then echo "FAILED: an unrequested suite ran"; exit 1; fi

expect() {  # expect RC ARGS...: the tool exits RC
  local want="$1"; shift
  local rc=0
  "$tool" --trainsim "$trainsim" "$@" >/dev/null 2>&1 || rc=$?
  [[ $rc -eq $want ]] || { echo "FAILED: $* exited $rc, expected $want"; exit 1; }
}
expect 2 --vary compute.gemm=-10%
expect 2 --vary compute.gemm_efficiency=10
expect 2 --vary compute.gemm_efficiency=-100%
expect 2 /nonexistent
expect 2 scenarios/no-such-folder
echo "sensitivity: ok"
