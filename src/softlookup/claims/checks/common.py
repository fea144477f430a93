"""What every kind of check shares: the evidence files, the outcome record, and its codes.

An Outcome holds numbers and names, never a sentence: the paper's templates word it
(paper/sections/_wording.tex), and the ledger writes one plain-text rendering of the same
template into checks.csv. Its `status` is one of STATUSES and its `reason` one of REASONS, which
also says which status the code belongs to:

pass:
- within_tolerance: an approx check's figure lies within its tolerance;
- beyond_threshold: the number lies on the claimed side of the threshold (a paired check: by its
  one-sided test, after the claim's Holm adjustment; a `by: interval` check: its whole interval);
- inside_margin: an equivalence (non-inferiority) check's one-sided tests place the difference
  inside the margin (above its lower end), after the claim's Holm adjustment.
fail:
- outside_tolerance: an approx check's figure lies outside its tolerance;
- wrong_side: the number (or its whole 95% interval) lies on the other side of the threshold;
- equivalence_failed: the whole 95% interval lies beyond the equivalence (non-inferiority)
  margin: the difference is shown to be larger than the claim allows.
inconclusive:
- interval_straddles: the interval contains the threshold;
- margin_undecided: an equivalence (non-inferiority) check's interval is too wide to place the
  difference inside or beyond its margin (its facts give the check's power);
- adjusted_straddles: the interval clears the threshold alone, not once the claim's tests are
  Holm-adjusted together;
- floor: a system the check compares is below the floor config/claims.yaml states for it.
pending (the evidence is not there; nothing missing is guessed):
- not_run: the probe, benchmark or comparison is not among the ledger's inputs or rows (the
  configuration removes or does not train it);
- not_produced: a declared input file does not exist;
- missing_rows: the file exists but holds no (or no single) row or column the check selects;
- too_few_points: fewer distinct x values than a slope or a family needs;
- needs_device: a GPU claim on CPU rows (the CPU number is still given);
- threads_differ: two trainings to compare ran on different numbers of threads;
- never_reached: a variant never reaches the target validation loss;
- no_interval: a `by: interval` check's row has no ci_low/ci_high.
report:
- reported: shown beside the verdict, never part of it (a missing aside keeps its pending code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
import pandas as pd

from ...tables import final_point

ALPHA = 0.05  # every test at 5% (95% intervals), Holm-adjusted within a claim
STATUSES = ("pass", "fail", "inconclusive", "pending", "report")
REASONS = {
    "within_tolerance": "pass",
    "beyond_threshold": "pass",
    "inside_margin": "pass",
    "outside_tolerance": "fail",
    "wrong_side": "fail",
    "equivalence_failed": "fail",
    "interval_straddles": "inconclusive",
    "margin_undecided": "inconclusive",
    "adjusted_straddles": "inconclusive",
    "floor": "inconclusive",
    "not_run": "pending",
    "not_produced": "pending",
    "missing_rows": "pending",
    "too_few_points": "pending",
    "needs_device": "pending",
    "threads_differ": "pending",
    "never_reached": "pending",
    "no_interval": "pending",
    "reported": "report",
}
BOOLEAN_CELLS = {"true": 1.0, "false": 0.0}
NUMERIC = (
    "value",
    "ci_low",
    "ci_high",
    "delta",
    "mean_a",
    "mean_b",
    "p_value",
    "se",
    "se_a",
    "se_b",
    "df",
    "se",
)


@dataclass(frozen=True)
class Test:
    """One null hypothesis a comparison check reads: its row, side and null, its p-value and the
    degrees of freedom of its standard error."""

    key: tuple  # (comparison, test set, bucket, metric, side, null kind, threshold)
    p_value: float
    df: float = math.inf


@dataclass(frozen=True)
class Outcome:
    """A check's result: numbers, a status and a reason code (module docstring), and `facts`,
    the names and numbers a sentence about it needs (systems, test set, bucket, points ...)."""

    status: str
    reason: str
    output: str  # file(s) the number came from (or should have)
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    df: float | None = None  # degrees of freedom of the interval (inf: normal)
    se: float | None = None  # a paired check's standard error of its estimate
    deviation: float | None = None  # approx checks: |value - expected|
    facts: dict = field(default_factory=dict)
    judged: Test | None = None  # the test the status depends on (paired comparisons)
    tests: tuple[Test, ...] = ()  # every test the check read (its family's share)
    p_adjusted: float | None = None  # the judged test's p, Holm-adjusted within the claim
    family_size: int | None = None  # the number of tests it was adjusted over

    def __post_init__(self) -> None:
        owner = REASONS.get(self.reason)
        if not (owner == self.status or (self.status == "report" and owner == "pending")):
            raise ValueError(f"outcome status {self.status!r} with reason {self.reason!r}")

    @property
    def p_value(self) -> float | None:
        return None if self.judged is None else self.judged.p_value


class Evidence:
    """The files a ledger reads, given one by one; each loaded once, a missing one remembered."""

    def __init__(
        self,
        probes: list[Path] = (),
        scores: Path | None = None,
        comparisons: Path | None = None,
        bench: list[Path] = (),
        training: Path | None = None,
        analysis: list[Path] = (),
    ) -> None:
        self.probes = {Path(path).stem: Path(path) for path in probes}
        self.scores_path = None if scores is None else Path(scores)
        self.comparisons_path = None if comparisons is None else Path(comparisons)
        self.bench = [Path(path) for path in bench]
        self.training_path = None if training is None else Path(training)
        self.analysis = [Path(path) for path in analysis]  # attention_<run>.csv
        self._cache: dict[Path, pd.DataFrame | None] = {}

    def read(self, path: Path) -> pd.DataFrame | None:
        if path not in self._cache:
            self._cache[path] = read_table(path) if path.exists() else None
        return self._cache[path]

    def table(self, path: Path | None, what: str) -> tuple[pd.DataFrame | None, tuple[str, dict]]:
        """(frame, ()) or (None, (reason code, facts)). Of scores and comparisons, the final
        models' rows: the ledger judges at the final budget point."""
        if path is None:
            return None, ("not_run", {"missing": what})
        frame = self.read(path)
        if frame is None:
            return None, ("not_produced", {"file": str(path)})
        return (
            final_point(frame) if path in (self.scores_path, self.comparisons_path) else frame
        ), ()

    def bench_path(self, name: str, device: str) -> Path | None:
        """The declared bench CSV <name>_<device>.csv for a device class (GPU first for 'any')."""
        found = [path for path in self.bench if path.stem.startswith(f"{name}_")]
        devices = {path: path.stem[len(name) + 1 :] for path in found}
        gpu = [path for path in found if devices[path] != "cpu"]
        cpu = [path for path in found if devices[path] == "cpu"]
        chosen = {
            "gpu": gpu,
            "cuda": [p for p in gpu if devices[p] == "cuda"],
            "cpu": cpu,
            "any": gpu + cpu,
        }[device]
        return chosen[0] if chosen else None


def read_table(path: Path) -> pd.DataFrame:
    """Setting columns as exact text; value-like columns as numbers where they parse."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in NUMERIC:
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column].replace("", "nan"), errors="coerce")
    return frame


def same(cell: str, wanted: str | tuple[str, ...]) -> bool:
    """A cell holds the wanted setting (or, for a tuple, any of them)."""
    if isinstance(wanted, tuple):
        return any(same(cell, one) for one in wanted)
    if cell == wanted:
        return True
    try:
        return float(cell) == float(wanted)
    except ValueError:
        return cell.lower() == wanted.lower() and cell.lower() in BOOLEAN_CELLS


def select(frame: pd.DataFrame, settings: dict) -> pd.DataFrame | dict:
    """Rows matching every setting, or the facts of why none can (columns that do not exist)."""
    missing = [name for name in settings if name not in frame.columns]
    if missing:
        return {"missing_columns": missing}
    keep = np.ones(len(frame), dtype=bool)
    for name, wanted in settings.items():
        matches = frame[name].map(lambda cell, wanted=wanted: same(str(cell), wanted))
        keep &= matches.to_numpy(dtype=bool)
    return frame[keep]


def numbers(column: pd.Series) -> pd.Series:
    """Cells as numbers: True/False (yes-no columns) as 1/0, anything unparsable as NaN."""
    as_numbers = column.map(lambda cell: BOOLEAN_CELLS.get(str(cell).lower(), cell))
    return pd.to_numeric(as_numbers, errors="coerce")


def allowed_deviation(check) -> float:
    """An approx check's tolerance: absolute, relative to the expected value, or the looser."""
    return max(
        check.tolerance or 0.0, (getattr(check, "rel_tolerance", None) or 0.0) * abs(check.expected)
    )


def pending(reason: str, output: str, **facts) -> Outcome:
    return Outcome("pending", reason, output, facts=facts)


def judge_number(
    check, value: float, output: str, ci: tuple[float, float] | None = None, **facts
) -> Outcome:
    """Apply the check's op (approx, above, below, report) to a measured number; with `by:
    interval`, to its interval `ci` (pass: wholly on the claimed side; fail: wholly on the other;
    inconclusive otherwise)."""
    low, high = ci if ci is not None else (None, None)
    measured = {"value": value, "ci_low": low, "ci_high": high, "facts": facts}
    if check.op == "report":
        return Outcome("report", "reported", output, **measured)
    if check.op == "approx":
        deviation = abs(value - check.expected)
        ok = deviation <= allowed_deviation(check) + 1e-12 * max(1.0, abs(check.expected))
        return Outcome(
            "pass" if ok else "fail",
            "within_tolerance" if ok else "outside_tolerance",
            output,
            deviation=deviation,
            **measured,
        )
    sign = 1.0 if check.op == "above" else -1.0
    if getattr(check, "by", "value") == "interval":
        near, far = sorted((sign * (low - check.expected), sign * (high - check.expected)))
        if near > 0:
            return Outcome("pass", "beyond_threshold", output, **measured)
        if far < 0:
            return Outcome("fail", "wrong_side", output, **measured)
        return Outcome("inconclusive", "interval_straddles", output, **measured)
    ok = sign * (value - check.expected) > 0
    return Outcome(
        "pass" if ok else "fail", "beyond_threshold" if ok else "wrong_side", output, **measured
    )


def needs_device(check, outcome: Outcome, devices: set[str]) -> Outcome:
    """A claim about GPUs stays pending on CPU runs, its CPU measurement still shown."""
    if check.requires_device is None or outcome.status == "report":
        return outcome
    if devices and not devices <= {"cpu"}:
        return outcome
    facts = {
        **outcome.facts,
        "device_needed": check.requires_device,
        "devices_seen": sorted(devices),
    }
    return replace(outcome, status="pending", reason="needs_device", facts=facts)
