"""Finds the trainsim executable and runs it: one subprocess per call, JSON on stdout.

The executable is, in order: the ``binary`` argument of a call, the ``TRAINSIM`` environment
variable, the build tree this package was configured into (``_build.BINARY``), the build tree of the
repository this package sits in (``build/tools/trainsim``), then ``trainsim`` on ``PATH``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Mapping, Optional, Sequence

# The CLI's exit codes (tools/trainsim/README.md).
_EXIT_MEANINGS = {
    1: "a run or case produced no value, or a gate is violated",
    2: "bad command line",
    3: "invalid input",
    4: "infeasible plan",
    5: "budget exceeded",
    70: "internal error",
}


class TrainsimError(RuntimeError):
    """A trainsim command that exited non-zero: ``exit_code``, ``command`` and ``stderr``."""

    def __init__(self, command: Sequence[str], exit_code: int, stderr: str):
        self.command = list(command)
        self.exit_code = exit_code
        self.stderr = stderr
        meaning = _EXIT_MEANINGS.get(exit_code, "failed")
        errors = [line for line in stderr.splitlines() if "error" in line.lower()]
        detail = "\n".join(errors[-5:] or stderr.strip().splitlines()[-5:])
        super().__init__(f"trainsim {command[1] if len(command) > 1 else ''} exited {exit_code} ({meaning})"
                         + (f":\n{detail}" if detail else ""))


class InvalidInputError(TrainsimError):
    """Exit 3: an input file or --set value is invalid; ``stderr`` names the file, line and key."""


class InfeasibleError(TrainsimError):
    """Exit 4: the plan does not fit (memory) or cannot run on the cluster."""


def find_binary(binary: Optional[os.PathLike | str] = None) -> str:
    """The trainsim executable a call runs (see the module docstring); raises FileNotFoundError."""
    candidates = []
    if binary is not None:
        candidates.append(Path(binary))
    if os.environ.get("TRAINSIM"):
        candidates.append(Path(os.environ["TRAINSIM"]))
    try:
        from . import _build  # written by CMake into the build tree's copy of this package

        candidates.append(Path(_build.BINARY))
    except ImportError:
        pass
    candidates.append(Path(__file__).resolve().parents[2] / "build" / "tools" / "trainsim")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    on_path = shutil.which("trainsim")
    if on_path:
        return on_path
    tried = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"no trainsim executable (tried {tried} and PATH): build it with tools/setup, or pass binary= "
        "or set TRAINSIM to its path")


def set_arguments(settings: Optional[Mapping[str, Any]]) -> list[str]:
    """``{"parallelism.tp": 4}`` as ``["--set", "parallelism.tp=4"]`` (booleans as true/false)."""
    args: list[str] = []
    for key, value in (settings or {}).items():
        if isinstance(value, bool):
            value = "true" if value else "false"
        args += ["--set", f"{key}={value}"]
    return args


def call(args: Sequence[str], *, binary: Optional[os.PathLike | str] = None,
         cwd: Optional[os.PathLike | str] = None) -> str:
    """Runs ``trainsim ARGS`` and returns its stdout; raises TrainsimError (or a subclass) on failure."""
    command = [find_binary(binary), *[str(a) for a in args]]
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        error = {3: InvalidInputError, 4: InfeasibleError}.get(done.returncode, TrainsimError)
        raise error(command, done.returncode, done.stderr)
    return done.stdout


def call_json(args: Sequence[str], **kwargs: Any) -> Any:
    """Runs ``trainsim ARGS`` (which must print JSON) and returns the parsed document."""
    return json.loads(call(args, **kwargs))
