#!/usr/bin/env python3
"""Cross-check of a measured trainsim hardware profile against PyTorch on the same machine.

  python3 calibrate/crosscheck/torch_reference.py --profile PROFILE.yaml [--gpus N] [--tolerance 0.10]

Measures with PyTorch, the way a user of the simulator would check it:
  - bf16 matmul 8192 x 8192 x 8192 on random data, CUDA events: a burst (mean of 10 after 3 warm-ups,
    shown for reference: a power-capped GPU is still at its boost clock then) and sustained (mean of 20
    after 250 ms of back-to-back matmuls, as the calibration times each case), the sustained rate
    against the profile's gemm_samples row of that shape;
  - a 1 GiB device-to-device copy (bytes read + written), against memory_efficiency x hbm.bandwidth;
  - with N > 1 GPUs, torch.distributed all_reduce over all of them (NCCL, float32, 1 MiB to 1 GiB),
    against the profile's collective_samples of all_reduce over N ranks.
Prints one table; exits 1 when a number differs from the profile by more than the tolerance.
"""
import argparse
import os
import re
import sys

import yaml

UNITS = {
    "duration": {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0},
    "bytes": {"B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "KiB": 2**10, "MiB": 2**20, "GiB": 2**30,
              "TiB": 2**40},
    "bandwidth": {"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9, "TB/s": 1e12, "KiB/s": 2**10,
                  "MiB/s": 2**20, "GiB/s": 2**30, "TiB/s": 2**40},
}


def quantity(text, kind):
    """'12.5us' -> 1.25e-05 (the units of sim/config/units.h that profiles use)."""
    match = re.fullmatch(r"\s*([0-9.eE+-]+)\s*(\S+)\s*", str(text))
    if not match or match.group(2) not in UNITS[kind]:
        raise ValueError(f"not a {kind}: {text!r}")
    return float(match.group(1)) * UNITS[kind][match.group(2)]


def cuda_time_s(fn, warmup, iterations):
    import torch
    for _ in range(warmup):
        fn()
    start = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    start.record()
    for _ in range(iterations):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) * 1e-3 / iterations


def matmul_tflops(n=8192, settle_s=0.25):
    """(burst, sustained) TFLOP/s of a bf16 n^3 matmul (Y = X @ W.t(), the profile's layout)."""
    import math
    import torch
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    burst = cuda_time_s(lambda: a @ b.t(), 3, 10)
    sustained = cuda_time_s(lambda: a @ b.t(), math.ceil(settle_s / burst), 20)
    return 2.0 * n ** 3 / burst / 1e12, 2.0 * n ** 3 / sustained / 1e12


def copy_rate(bytes_=2**30):
    import torch
    src = torch.empty(bytes_, dtype=torch.uint8, device="cuda").random_()
    dst = torch.empty_like(src)
    seconds = cuda_time_s(lambda: dst.copy_(src), 3, 20)
    return 2.0 * bytes_ / seconds


def _all_reduce_worker(rank, world, sizes, port, queue):
    import torch
    import torch.distributed as dist
    torch.cuda.set_device(rank)
    dist.init_process_group("nccl", init_method=f"tcp://127.0.0.1:{port}", rank=rank, world_size=world)
    times = {}
    for size in sizes:
        x = torch.ones(size // 4, dtype=torch.float32, device="cuda")
        dist.barrier()
        seconds = cuda_time_s(lambda: dist.all_reduce(x), 5, 20)
        t = torch.tensor([seconds], device="cuda")
        dist.all_reduce(t, op=dist.ReduceOp.MAX)
        times[size] = t.item()
    if rank == 0:
        queue.put(times)
    dist.destroy_process_group()


def all_reduce_times(world, sizes):
    import torch.multiprocessing as mp
    context = mp.get_context("spawn")
    queue = context.Queue()
    port = 29500 + os.getpid() % 1000
    mp.spawn(_all_reduce_worker, args=(world, sizes, port, queue), nprocs=world, join=True)
    return queue.get()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", required=True)
    parser.add_argument("--gpus", type=int, default=1)
    parser.add_argument("--tolerance", type=float, default=0.10)
    args = parser.parse_args()
    with open(args.profile) as f:
        profile = yaml.safe_load(f)
    rows = []  # (what, ours, torch's, unit)

    burst, sustained = matmul_tflops()
    ours = None
    for s in profile.get("gemm_samples", []):
        if s["dtype"] == "bf16" and (s["m"], s["n"], s["k"]) == (8192, 8192, 8192):
            ours = 2.0 * 8192 ** 3 / quantity(s["time"], "duration") / 1e12
    rows.append(("bf16 GEMM 8192^3 sustained (TFLOP/s)", ours, sustained))
    print(f"# bf16 GEMM 8192^3 burst (10 after 3 warm-ups), PyTorch: {burst:.1f} TFLOP/s")

    compute = profile.get("compute", {})
    hbm = quantity(profile["gpu"]["hbm"]["bandwidth"], "bandwidth")
    ours_copy = compute.get("memory_efficiency", 1.0) * hbm
    rows.append(("device copy 1 GiB, read + write (GB/s)", ours_copy / 1e9, copy_rate() / 1e9))

    if args.gpus > 1:
        sizes = [2**20, 2**24, 2**28, 2**30]
        torch_times = all_reduce_times(args.gpus, sizes)
        samples = {quantity(s["bytes"], "bytes"): quantity(s["time"], "duration")
                   for s in profile.get("collective_samples", [])
                   if s["kind"] == "all_reduce" and s["ranks"] == args.gpus and s.get("nodes", 1) == 1}
        for size in sizes:
            if size in samples:
                rows.append((f"all_reduce {args.gpus} GPUs {size >> 20} MiB (us)", samples[size] * 1e6,
                             torch_times[size] * 1e6))
    else:
        print("# one GPU: no NCCL cross-check against torch.distributed")

    failed = False
    print(f"# {'quantity':<40} {'trainsim':>12} {'pytorch':>12} {'difference':>11}")
    for what, ours, theirs in rows:
        if ours is None:
            print(f"  {what:<40} {'(missing)':>12} {theirs:12.4g}")
            failed = True
            continue
        difference = ours / theirs - 1
        flag = "" if abs(difference) <= args.tolerance else "  <-- beyond tolerance"
        failed |= bool(flag)
        print(f"  {what:<40} {ours:12.4g} {theirs:12.4g} {100 * difference:+10.1f}%{flag}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
