"""trainsim from Python: run a scenario, a sweep or the validation suite and get typed results,
dicts and pandas DataFrames.

    import trainsim
    run = trainsim.run("scenarios/01-gpt3-1.3b-dp8.yaml", set={"parallelism.zero_stage": 1})
    run.iteration_time_s, run.mfu, run.breakdown
    trainsim.sweep("scenarios/sweeps/gpt3-175b-pipeline-schedules.yaml", analytic=True).to_frame()
    trainsim.validate("scenarios/validation/korthikanti-table4").to_frame()

Each call runs the trainsim executable (see ``find_binary``) in a subprocess and reads its JSON:
the results are exactly what the command line prints, and a failure raises ``TrainsimError``
(``InvalidInputError`` for a bad input, naming its file, line and key; ``InfeasibleError`` for a
plan that does not fit).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence, Union

from ._cli import (InfeasibleError, InvalidInputError, TrainsimError, call, call_json, find_binary,
                   set_arguments)
from .results import RunResult, SweepResult, ValidationResult, flatten

__all__ = [
    "run", "analyze", "sweep", "validate", "diff", "version", "find_binary", "RunResult", "SweepResult",
    "ValidationResult", "TrainsimError", "InvalidInputError", "InfeasibleError", "flatten",
]

PathLike = Union[str, "os.PathLike[str]"]


def run(scenario: PathLike, *, set: Optional[Mapping[str, Any]] = None, network: Optional[str] = None,
        full: bool = False, iterations: Optional[int] = None, binary: Optional[PathLike] = None) -> RunResult:
    """Simulates one training iteration of `scenario` (``trainsim run --format json``).

    set: keys merged over the scenario, as ``--set KEY=VALUE`` ({"parallelism.tp": 4}).
    network: "simgrid" (default: flows share the topology's links) or "ideal" (contention-free).
    full: simulate every rank instead of one per symmetry class.
    """
    args = ["run", str(scenario), "--format", "json", *set_arguments(set)]
    if network:
        args += ["--network", network]
    if full:
        args.append("--full")
    if iterations is not None:
        args += ["--iterations", str(iterations)]
    return RunResult(call_json(args, binary=binary))


def analyze(scenario: PathLike, *, set: Optional[Mapping[str, Any]] = None,
            binary: Optional[PathLike] = None) -> dict[str, Any]:
    """The closed-form analysis of `scenario` (FLOPs, memory, communication volumes), as a dict."""
    return call_json(["analyze", str(scenario), "--format", "json", *set_arguments(set)], binary=binary)


def sweep(sweep_file: PathLike, *, out: Optional[PathLike] = None, jobs: Optional[int] = None,
          analytic: bool = False, network: Optional[str] = None, resume: bool = False,
          binary: Optional[PathLike] = None) -> SweepResult:
    """Evaluates every point of `sweep_file` (``trainsim sweep``) and reads ``results.jsonl``.

    out: the results directory (kept); by default a temporary one, removed after reading.
    jobs: points at once (default: all cores). analytic: the closed-form estimate (fast screening).
    resume: continue the sweep already in `out`.
    """
    def evaluate(directory: str) -> SweepResult:
        args = ["sweep", str(sweep_file), "--out", directory]
        if jobs is not None:
            args += ["--jobs", str(jobs)]
        if analytic:
            args.append("--analytic")
        if network:
            args += ["--network", network]
        if resume:
            args.append("--resume")
        call(args, binary=binary)
        results = Path(directory) / "results.jsonl"
        points = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
        return SweepResult(points, directory if out is not None else "")

    if out is not None:
        return evaluate(str(out))
    with tempfile.TemporaryDirectory(prefix="trainsim-sweep-") as directory:
        return evaluate(directory)


def validate(paths: Union[PathLike, Sequence[PathLike], None] = None, *, jobs: Optional[int] = None,
             hardware_only: bool = True, gate: bool = False,
             binary: Optional[PathLike] = None) -> ValidationResult:
    """Runs validation cases (``trainsim validate --format json``): a case file, a suite folder, or
    several; by default every case under scenarios/validation (run from the repository root).

    hardware_only: also run stack-profile cases on the hardware profile beneath (the hw.error column).
    gate: apply the suites' CI gates; a violated gate raises TrainsimError (exit 1), like the CLI.
    """
    if paths is None:
        targets: list[str] = []
    elif isinstance(paths, (str, os.PathLike)):
        targets = [str(paths)]
    else:
        targets = [str(p) for p in paths]
    args = ["validate", *targets, "--format", "json"]
    if jobs is not None:
        args += ["--jobs", str(jobs)]
    if not hardware_only:
        args.append("--no-hardware-only")
    if gate:
        args.append("--gate")
    return ValidationResult(call_json(args, binary=binary))


def diff(a: PathLike, b: PathLike, *, set_a: Optional[Mapping[str, Any]] = None,
         set_b: Optional[Mapping[str, Any]] = None, network: Optional[str] = None,
         binary: Optional[PathLike] = None) -> dict[str, Any]:
    """Two scenarios or two run reports side by side (``trainsim diff --format json``): the inputs
    that differ and every metric that moved, as a dict."""
    args = ["diff", str(a), str(b), "--format", "json"]
    for flag, settings in (("--set-a", set_a), ("--set-b", set_b)):
        for i, value in enumerate(set_arguments(settings)):
            args.append(flag if i % 2 == 0 else value)
    if network:
        args += ["--network", network]
    return call_json(args, binary=binary)


def version(*, binary: Optional[PathLike] = None) -> str:
    """The executable's version lines (``trainsim --version``): trainsim, SimGrid, CUDA kernels,
    input schema."""
    return call(["--version"], binary=binary).strip()
