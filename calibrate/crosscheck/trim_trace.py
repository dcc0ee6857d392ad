#!/usr/bin/env python3
"""Trims a PyTorch profiler trace to what `trainsim compare` and `calibrate fit-stack --trace` read.

  python3 calibrate/crosscheck/trim_trace.py TRACE.json[.gz] OUT.json [--steps N]

Keeps the top-level metadata (deviceProperties, distributedInfo, ...), the ProfilerStep#N spans, every
GPU kernel, copy and memset, the CUDA runtime and driver calls (their correlation ids time each
launch), PyTorch's record_param_comms events (the communication volume), and the process and thread
names; drops the other host operators, which the reader does not use and which make up most of an
eager-mode trace. With --steps N only the first N ProfilerStep spans and what they launched stay.
Writes OUT.json (plain JSON, one event per line) and prints the sizes before and after.
"""
import argparse
import gzip
import json
import sys
from pathlib import Path

GPU = {"kernel", "gpu_memcpy", "memcpy", "gpu_memset", "memset"}
LAUNCH = {"cuda_runtime", "cuda_driver", "runtime", "driver"}


def keep(event):
    cat, name = event.get("cat", ""), event.get("name", "")
    return (cat in GPU or cat in LAUNCH or event.get("ph") == "M" or name.startswith("ProfilerStep#")
            or name == "record_param_comms")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--steps", type=int, help="keep only the first N ProfilerStep spans")
    args = parser.parse_args()
    opener = gzip.open if args.trace.suffix == ".gz" else open
    with opener(args.trace, "rt") as f:
        document = json.load(f)
    events = [e for e in document.get("traceEvents", []) if keep(e)]
    if args.steps is not None:
        steps = sorted((e for e in events if e.get("name", "").startswith("ProfilerStep#")), key=lambda e: e["ts"])
        if len(steps) < args.steps:
            sys.exit(f"trim_trace: {args.trace} holds {len(steps)} ProfilerStep spans, fewer than --steps {args.steps}")
        kept = steps[:args.steps]
        host_end = kept[-1]["ts"] + kept[-1]["dur"]
        # What the kept steps launched: runtime calls inside their host spans, and the GPU work those
        # calls correlate with (which may run after the last span ends).
        launches = {e["args"]["correlation"] for e in events if e.get("cat") in LAUNCH and e["ts"] < host_end
                    and "correlation" in e.get("args", {})}
        events = [e for e in events if e.get("ph") == "M" or e in kept
                  or (e.get("cat") in LAUNCH and e["ts"] < host_end)
                  or (e.get("cat") in GPU and e.get("args", {}).get("correlation") in launches)
                  or (e.get("name") == "record_param_comms" and e["ts"] < host_end)]
    document["traceEvents"] = events
    with open(args.out, "w") as f:
        f.write("{\n")
        for key, value in document.items():
            if key != "traceEvents":
                f.write(f"{json.dumps(key)}: {json.dumps(value)},\n")
        f.write('"traceEvents": [\n')
        f.write(",\n".join(json.dumps(e, separators=(",", ":")) for e in events))
        f.write("\n]}\n")
    print(f"{args.trace}: {args.trace.stat().st_size / 2**20:.1f} MiB -> {args.out}: "
          f"{args.out.stat().st_size / 2**20:.1f} MiB, {len(events)} events")


if __name__ == "__main__":
    main()
