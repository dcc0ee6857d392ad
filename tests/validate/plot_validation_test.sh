#!/usr/bin/env bash
# tools/plot-validation draws a real `trainsim validate --format json` report (the fixture suite) to
# PNG and SVG, and refuses bad input with its documented exit codes. Skipped (exit 77) without
# python3-matplotlib.
#
#   tests/validate/plot_validation_test.sh SOURCE_DIR TRAINSIM OUT_DIR
set -euo pipefail
source_dir="$1" trainsim="$2" out="$3"
plot="$source_dir/tools/plot-validation"

found=""
for python in python3 /usr/bin/python3; do
  if command -v "$python" >/dev/null && "$python" -c "import matplotlib" 2>/dev/null; then found="$python"; fi
done
if [[ -z "$found" ]]; then
  echo "SKIPPED: python3-matplotlib is not installed (apt-get install python3-matplotlib)"
  exit 77
fi

mkdir -p "$out"
(cd "$source_dir" && "$trainsim" validate tests/validate/fixtures/gate-holds --format json -j2 -q) \
  >"$out/report.json"
"$plot" "$out/report.json" --out "$out/validation.png"
"$plot" - --out "$out/validation.svg" --suite fixture-gate-holds <"$out/report.json"
[[ "$(head -c 8 "$out/validation.png" | od -An -tx1 | tr -d ' \n')" == "89504e470d0a1a0a" ]] || {
  echo "FAILED: validation.png is not a PNG"; exit 1; }
grep -q "<svg" "$out/validation.svg" || { echo "FAILED: validation.svg is not an SVG"; exit 1; }

expect() {  # expect RC ARGS...: tools/plot-validation exits RC
  local want="$1"; shift
  local rc=0
  "$plot" "$@" >"$out/stdout" 2>"$out/stderr" || rc=$?
  if [[ $rc -ne $want ]]; then
    echo "FAILED: tools/plot-validation $* exited $rc, expected $want"; cat "$out/stderr"; exit 1
  fi
}
echo '{"not": "a report"}' >"$out/bad.json"
expect 3 "$out/bad.json" --out "$out/x.png"
expect 2 "$out/report.json" --out "$out/x.png" --suite no-such-suite
expect 2 "$out/report.json"
echo "ok"
