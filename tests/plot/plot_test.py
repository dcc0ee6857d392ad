#!/usr/bin/env python3
"""Tests of tools/plot on the fixtures of this folder (files in the formats of `trainsim run`, `trainsim
search`, `trainsim collective` and `trainsim compare` JSON, a sweep's results.jsonl, an nccl-tests log and a hardware
profile with collective samples).

    tests/plot/plot_test.py render OUT_DIR   every kind to PNG and SVG, each checked to be an image
    tests/plot/plot_test.py errors OUT_DIR   usage errors exit 2, unreadable or wrong inputs exit 3
    tests/plot/plot_test.py values OUT_DIR   axis values with units sort by quantity

Exits 77 (skipped) when python3-matplotlib is missing.
"""
import contextlib
import importlib.machinery
import importlib.util
import io
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLOT = os.path.join(ROOT, "tools", "plot")
F = os.path.join(ROOT, "tests", "plot", "fixtures")
DEBIAN_PYTHON = "/usr/bin/python3"

KINDS = {
    "breakdown": ["breakdown", f"{F}/run-gpt3-125m-1gpu.json", f"{F}/run-megatron-22b-tp8.json", f"{F}/sweep",
                  f"{F}/search-tiny-2gpu.json"],
    "breakdown-top": ["breakdown", f"{F}/sweep", "--top", "3", "--metric", "iteration_time_s"],
    "scaling": ["scaling", f"{F}/sweep/results.jsonl", "--by", "training.micro_batch"],
    "scaling-slice": ["scaling", f"{F}/sweep", "--x", "gpus", "--where", "micro_batch=2"],
    "heatmap": ["heatmap", f"{F}/sweep", "--x", "cluster.gpus", "--y", "training.micro_batch", "--metric", "mfu"],
    "memory": ["memory", f"{F}/run-gpt3-125m-1gpu.json", f"{F}/run-megatron-22b-tp8.json",
               f"{F}/search-tiny-2gpu.json"],
    "collective": ["collective", f"{F}/collective-all_reduce-8xh100.json", f"{F}/nccl-tests-all_reduce-8gpus.log",
                   f"{F}/profile-with-collective-samples.yaml"],
    "compare": ["compare", f"{F}/compare-gpt3-125m-1gpu.json", f"{F}/compare-gpt3-1.3b-dp8-ranks.json"],
}


def with_matplotlib():
    """Re-runs this script with Debian's python3 when only that one has matplotlib; exits 77 when none does."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        if os.path.realpath(sys.executable) != os.path.realpath(DEBIAN_PYTHON) and os.access(DEBIAN_PYTHON, os.X_OK):
            os.execv(DEBIAN_PYTHON, [DEBIAN_PYTHON] + sys.argv)
        print("SKIPPED: python3-matplotlib is not installed (apt-get install python3-matplotlib)")
        sys.exit(77)


def is_image(path, extension):
    with open(path, "rb") as f:
        data = f.read()
    if extension == "png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    return b"<svg" in data[:4096]


def load_plot():
    """tools/plot as a module."""
    sys.dont_write_bytecode = True  # nothing written into the source tree
    loader = importlib.machinery.SourceFileLoader("plot", PLOT)
    spec = importlib.util.spec_from_loader("plot", loader)
    plot = importlib.util.module_from_spec(spec)
    loader.exec_module(plot)
    return plot


def values(_out):
    """Axis values as the input files write them order by quantity, not as text."""
    plot = load_plot()
    failures = 0
    for given, expected in ((["30min", "5min", "1h", "15min"], ["5min", "15min", "30min", "1h"]),
                            (["2Mi", "128Ki", "512Ki"], ["128Ki", "512Ki", "2Mi"]),
                            (["50MiB", "25MiB", "1GiB"], ["25MiB", "50MiB", "1GiB"]),
                            ([8, "fp8", 2], [2, 8, "fp8"])):
        ordered = sorted(given, key=plot.sort_key)
        if ordered != expected:
            print(f"FAILED: {given} sorted as {ordered}, expected {expected}")
            failures += 1
        else:
            print(f"ok: {ordered}")
    if plot.numeric("1.5e3s") != 1500.0 or plot.numeric("15min") != 900.0 or plot.numeric("3xyz") is not None:
        print("FAILED: numeric() of 1.5e3s, 15min, 3xyz")
        failures += 1
    return failures


def render(out):
    """Every kind to PNG and SVG, in this process (matplotlib is imported once)."""
    plot = load_plot()
    failures = 0
    for kind, args in KINDS.items():
        for extension in ("png", "svg"):
            path = os.path.join(out, f"{kind}.{extension}")
            if os.path.exists(path):
                os.remove(path)
            sys.argv = ["tools/plot"] + args + ["--out", path]
            stderr = io.StringIO()
            with contextlib.redirect_stderr(stderr):
                rc = plot.main()
            if rc != 0 or not os.path.exists(path) or os.path.getsize(path) == 0 or not is_image(path, extension):
                print(f"FAILED: {kind} {extension}: exit {rc}, {stderr.getvalue().strip()}")
                failures += 1
            else:
                print(f"ok: {path} ({os.path.getsize(path)} bytes)")
            plot.import_matplotlib().close("all")
    return failures


def errors(out):
    """Exit codes and messages of the command itself."""
    target = os.path.join(out, "x.png")
    cases = [
        (2, ["breakdown", f"{F}/run-gpt3-125m-1gpu.json", "--out", os.path.join(out, "x.jpg")], "must end in .png or .svg"),
        (2, ["heatmap", f"{F}/sweep", "--x", "cluster.gpus", "--out", target], "needs --x AXIS and --y AXIS"),
        (2, ["bogus", f"{F}/sweep", "--out", target], "invalid choice"),
        (3, ["breakdown", f"{F}/does-not-exist.json", "--out", target], "does-not-exist.json: error: cannot read"),
        (3, ["breakdown", f"{F}/profile-with-collective-samples.yaml", "--out", target], "error: invalid JSON"),
        (3, ["collective", f"{F}/collective-all_reduce-8xh100.json", f"{F}/run-gpt3-125m-1gpu.json", "--out", target],
         "error: no nccl-tests column header"),
        (3, ["compare", f"{F}/run-gpt3-125m-1gpu.json", "--out", target], "not a `trainsim compare --format json` report"),
        # An unknown axis names the ones the input has; an axis by its sweep key or name both work.
        (3, ["heatmap", f"{F}/sweep", "--x", "parallelism.tp", "--y", "gpus", "--out", target],
         "no result has a value for axis parallelism.tp; the input has sweep axes: gpus, micro_batch"),
        # A line would mix plans of several micro-batch sizes.
        (3, ["scaling", f"{F}/sweep", "--x", "gpus", "--out", target],
         "besides gpus the results vary micro_batch, so one line would mix plans: plot one slice "
         "(--where micro_batch=VALUE; its values: 1, 2) or one line per value (--by micro_batch)"),
        (3, ["scaling", f"{F}/sweep", "--x", "gpus", "--where", "micro_batch=7", "--out", target],
         "--where micro_batch=7: no result has micro_batch = 7 (its values: 1, 2, 16, 32)"),
        (2, ["breakdown", f"{F}/sweep", "--where", "micro_batch", "--out", target], "expected AXIS=VALUE"),
    ]
    failures = 0
    for rc, args, message in cases:
        proc = subprocess.run([sys.executable, PLOT] + args, capture_output=True, text=True)
        if proc.returncode != rc or message not in proc.stderr:
            print(f"FAILED: tools/plot {' '.join(args)}: exit {proc.returncode} (expected {rc}), stderr:\n{proc.stderr}")
            failures += 1
        else:
            print(f"ok: exit {rc}: {message}")
    if os.path.exists(target):
        print(f"FAILED: a failed plot left {target}")
        failures += 1
    return failures


def main():
    mode, out = sys.argv[1], sys.argv[2]
    with_matplotlib()
    os.makedirs(out, exist_ok=True)
    return 1 if {"render": render, "errors": errors, "values": values}[mode](out) else 0


if __name__ == "__main__":
    sys.exit(main())
