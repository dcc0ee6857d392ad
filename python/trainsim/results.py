"""Typed views of trainsim's JSON outputs, each keeping the whole document in ``report``/``raw``.

Frames need pandas (Debian: python3-pandas); everything else is the standard library.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


def _frame(rows: list[dict[str, Any]]):
    try:
        import pandas
    except ImportError as e:  # pragma: no cover - depends on the machine
        raise ImportError("to_frame() needs pandas (Debian: apt-get install python3-pandas)") from e
    return pandas.DataFrame(rows)


def flatten(document: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested maps as one level of dotted keys ({"a": {"b": 1}} -> {"a.b": 1}); lists are kept."""
    flat: dict[str, Any] = {}
    for key, value in document.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict):
            flat.update(flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


@dataclass(frozen=True)
class RunResult:
    """One simulated (or estimated) training iteration: ``trainsim run --format json``."""

    report: dict[str, Any] = field(repr=False)

    @property
    def iteration_time_s(self) -> float:
        return self.report["iteration_time_s"]

    @property
    def tokens_per_s(self) -> float:
        return self.report["tokens_per_s"]

    @property
    def mfu(self) -> float:
        """Model FLOPs over the GPUs' dense peak (a fraction, not a percentage)."""
        return self.report["mfu"]

    @property
    def tflops_per_gpu(self) -> float:
        return self.report["tflops_per_gpu"]

    @property
    def gpus(self) -> int:
        return self.report["gpus"]

    @property
    def fits(self) -> bool:
        """Whether the peak memory fits the usable HBM (and host memory)."""
        return self.report["memory"]["fits"]

    @property
    def peak_hbm_bytes(self) -> float:
        return self.report["memory"]["peak_hbm_bytes"]

    @property
    def plan(self) -> dict[str, Any]:
        """tp, pp, dp, sp, vpp, schedule, zero_stage, recompute, batch sizes, tokens per iteration."""
        return self.report["plan"]

    @property
    def breakdown(self) -> dict[str, float]:
        """The critical rank's iteration in seconds: compute_s, exposed_comm_s, bubble_s, ..."""
        return self.report["breakdown"]

    @property
    def warnings(self) -> list[str]:
        return self.report.get("warnings", [])

    def to_dict(self) -> dict[str, Any]:
        """The headline as one flat row: metrics, plan.*, breakdown.*, memory.*."""
        row = {k: v for k, v in self.report.items() if not isinstance(v, (dict, list))}
        for section in ("plan", "breakdown", "memory"):
            row.update(flatten(self.report.get(section, {}), section + "."))
        return row

    def to_frame(self):
        """A one-row pandas DataFrame of to_dict()."""
        return _frame([self.to_dict()])


@dataclass(frozen=True)
class SweepResult:
    """Every point of a sweep: ``DIR/results.jsonl`` of ``trainsim sweep``, one dict per point."""

    points: list[dict[str, Any]] = field(repr=False)
    out_dir: str = ""

    @property
    def ok(self) -> list[dict[str, Any]]:
        """The points that produced a result (status "ok")."""
        return [p for p in self.points if p.get("status") == "ok"]

    def best(self, metric: str = "tokens_per_s") -> dict[str, Any]:
        """The ok point with the highest `metric` (lowest for iteration_time_s)."""
        lower_is_better = metric == "iteration_time_s"
        ok = [p for p in self.ok if p.get(metric) is not None]
        if not ok:
            raise ValueError(f"no point of the sweep has {metric}")
        return (min if lower_is_better else max)(ok, key=lambda p: p[metric])

    def to_frame(self):
        """One row per point: the axis values (by the axes' short names: seq_len, micro_batch), status,
        the metrics, breakdown.* and
        memory.* (provenance and the closed-form estimate of simulated points left out)."""
        rows = []
        for p in self.points:
            row = dict(p.get("point", {}).get("values", {}))
            row["point_id"] = p.get("point", {}).get("id")
            row.update({k: v for k, v in p.items() if not isinstance(v, (dict, list))})
            for section in ("breakdown", "memory"):
                row.update(flatten(p.get(section) or {}, section + "."))
            rows.append(row)
        return _frame(rows)


@dataclass(frozen=True)
class ValidationResult:
    """``trainsim validate --format json``: every case with its role, error and breakdown, and the
    per-suite statistics over validation cases."""

    raw: dict[str, Any] = field(repr=False)

    @property
    def cases(self) -> list[dict[str, Any]]:
        return self.raw["cases"]

    @property
    def summary(self) -> dict[str, dict[str, Any]]:
        """By suite: validation cases, median / p90 / max |error|, hardware-only and calibration."""
        return self.raw["summary"]

    @property
    def gate(self) -> Any:
        return self.raw.get("gate")

    def to_frame(self):
        """One row per case, nested fields as dotted columns."""
        return _frame([flatten(c) for c in self.cases])
