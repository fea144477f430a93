"""Evaluate one check of the claims file against the evidence on disk.

Every check ends as an Outcome: pass, fail, pending (the evidence is not there: a probe not run,
a run the configuration does not include, a GPU-only benchmark on a CPU machine) or report
(shown, never part of the verdict). Nothing missing is ever guessed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pandas as pd

from .spec import ClaimsFileError, NumericCheck, ScoresCheck, Selection

EVAL_TEST_SET_EXCLUDED = "train"  # collect.py's pseudo test set for training scalars
SCORES_COLUMNS = {
    "model", "sweep", "sweep_value", "test_set", "bucket", "metric", "value", "ci_low", "ci_high",
    "status",
}  # fmt: skip
BOOLEAN_CELLS = {"true": 1.0, "false": 0.0}


@dataclass(frozen=True)
class Outcome:
    status: str  # pass, fail, pending, report
    label: str
    measured: str  # "label = value", or what is missing
    detail: str  # why the status
    output: str  # file the number came from (or should have)
    deviation: float | None = None  # approx checks: |measured - expected|
    value: float | None = None


class Evidence:
    """The files a ledger reads; each loaded once, a missing one remembered as missing."""

    def __init__(self, probes_dir: Path, scores_path: Path, bench_dir: Path) -> None:
        self.probes_dir, self.scores_path, self.bench_dir = probes_dir, scores_path, bench_dir
        self._cache: dict[Path, pd.DataFrame | None] = {}

    def read(self, path: Path) -> pd.DataFrame | None:
        if path not in self._cache:
            self._cache[path] = _read_table(path) if path.exists() else None
        return self._cache[path]

    def probe_path(self, name: str) -> Path:
        return self.probes_dir / f"{name}.csv"

    def bench_path(self, name: str, device: str) -> tuple[Path | None, str]:
        """The bench CSV for a device class (gpu, cpu, any: gpu first), or None and why not."""
        found = sorted(self.bench_dir.glob(f"{name}_*.csv"))
        devices = {path: path.stem[len(name) + 1 :] for path in found}
        gpu = [path for path in found if devices[path] != "cpu"]
        cpu = [path for path in found if devices[path] == "cpu"]
        chosen = {"gpu": gpu, "cpu": cpu, "any": gpu + cpu}.get(device)
        if chosen is None:
            raise ClaimsFileError(f"bench device {device!r} must be gpu, cpu or any")
        if chosen:
            return chosen[0], ""
        have = ", ".join(str(p) for p in found) or "none"
        return None, (
            f"no {'' if device == 'any' else device.upper() + ' '}benchmark"
            f" {self.bench_dir}/{name}_<device>.csv in this run"
            f" (present: {have})"
        )


def _read_table(path: Path) -> pd.DataFrame:
    """Setting columns as exact text; value-like columns as numbers where they parse."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in ("value", "ci_low", "ci_high"):
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column].replace("", "nan"), errors="coerce")
    return frame


def _same(cell: str, wanted: str) -> bool:
    if cell == wanted:
        return True
    try:
        return float(cell) == float(wanted)
    except ValueError:
        return False


def _select(frame: pd.DataFrame, settings: dict[str, str]) -> pd.DataFrame | str:
    """Rows matching every setting, or the reason none can (a column that does not exist)."""
    missing = [name for name in settings if name not in frame.columns]
    if missing:
        return f"columns {missing} absent (columns: {', '.join(frame.columns)})"
    keep = np.ones(len(frame), dtype=bool)
    for name, wanted in settings.items():
        keep &= frame[name].map(lambda cell, wanted=wanted: _same(str(cell), wanted)).to_numpy()
    return frame[keep]


def format_number(value: float, fmt: str) -> str:
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return format(value, fmt)


def compare_number(check: NumericCheck, value: float, output: str) -> Outcome:
    """Apply the check's op to a measured number."""
    shown = format_number(value, check.fmt)
    measured = f"{check.label} = {shown}"
    expected = None if check.expected is None else format_number(check.expected, check.fmt)
    if check.op == "report":
        return Outcome("report", check.label, measured, "reported only", output, value=value)
    if check.op == "approx":
        deviation = abs(value - check.expected)
        allowed = max(
            check.tolerance or 0.0, (check.rel_tolerance or 0.0) * abs(check.expected)
        )  # (whichever is given; both: the looser)
        ok = deviation <= allowed + 1e-12 * max(1.0, abs(check.expected))
        detail = f"expected {expected} +- {allowed:.3g}, off by {deviation:.3g}"
        return Outcome(
            "pass" if ok else "fail", check.label, measured, detail, output, deviation, value
        )
    ok = value > check.expected if check.op == "above" else value < check.expected
    detail = f"expected {check.op} {expected}"
    return Outcome("pass" if ok else "fail", check.label, measured, detail, output, value=value)


def pending(label: str, reason: str, output: str) -> Outcome:
    return Outcome("pending", label, f"{label}: not measured", reason, output)


def evaluate_probe(check: NumericCheck, evidence: Evidence) -> Outcome:
    path = evidence.probe_path(check.name)
    frame = evidence.read(path)
    if frame is None:
        return pending(check.label, f"{path} was not produced", str(path))
    rows = frame[frame.quantity == check.quantity]

    def one_value(settings: dict[str, str]) -> float | str:
        picked = _select(rows, settings)
        if isinstance(picked, str):
            return picked
        if len(picked) > 1:
            raise ClaimsFileError(
                f"check {check.label!r}: {len(picked)} rows of {path} match"
                f" quantity={check.quantity} {settings}; add settings to 'where'"
            )
        if picked.empty:
            return f"no row quantity={check.quantity} {settings} in {path}"
        return float(picked.value.iloc[0])

    value = one_value(check.where)
    if check.ratio_to is not None and not isinstance(value, str):
        denominator = one_value({**check.where, **check.ratio_to})
        value = denominator if isinstance(denominator, str) else value / denominator
    if isinstance(value, str):
        return pending(check.label, f"not measured in this configuration: {value}", str(path))
    return compare_number(check, value, str(path))


def evaluate_bench(check: NumericCheck, evidence: Evidence) -> Outcome:
    path, why = evidence.bench_path(check.name, check.device)
    output = str(path) if path else f"{evidence.bench_dir}/{check.name}_<device>.csv"
    if path is None:
        return pending(check.label, why, output)
    frame = evidence.read(path)
    if check.column not in frame.columns:
        columns = ", ".join(frame.columns)
        return pending(check.label, f"column {check.column!r} absent from {path} ({columns})",
                       output)  # fmt: skip
    numerator = _select(frame, check.where)
    if isinstance(numerator, str):
        return pending(check.label, f"{path}: {numerator}", output)
    series = _numbers(numerator[check.column])
    if check.ratio_to is not None:
        denominator = _select(frame, {**check.where, **check.ratio_to})
        if isinstance(denominator, str):
            return pending(check.label, f"{path}: {denominator}", output)
        joined = numerator.merge(denominator, on=list(check.join), suffixes=("", "_denominator"))
        series = _numbers(joined[check.column]) / _numbers(joined[f"{check.column}_denominator"])
        numerator = joined
    series = series.dropna()
    if series.empty:
        return pending(check.label, f"no rows of {path} match {check.where}", output)
    value = _aggregate(check, numerator.loc[series.index], series)
    if isinstance(value, str):
        return pending(check.label, f"{path}: {value}", output)
    return compare_number(check, value, output)


def _numbers(column: pd.Series) -> pd.Series:
    """Bench cells as numbers: True/False (yes-no columns) as 1/0, anything unparsable as NaN."""
    as_numbers = column.map(lambda cell: BOOLEAN_CELLS.get(str(cell).lower(), cell))
    return pd.to_numeric(as_numbers, errors="coerce")


def _aggregate(check: NumericCheck, rows: pd.DataFrame, series: pd.Series) -> float | str:
    if check.aggregate == "single":
        if len(series) != 1:
            return f"{len(series)} rows match {check.where}; expected exactly one"
        return float(series.iloc[0])
    if check.aggregate in ("max", "min", "mean"):
        return float(getattr(series, check.aggregate)())
    if check.x not in rows.columns:
        return f"column {check.x!r} absent"
    x = _numbers(rows[check.x])
    points = pd.DataFrame({"x": x, "y": series}).dropna().groupby("x").y.mean()
    points = points[(points.index > 0) & (points > 0)]
    if len(points) < 2:
        return f"fewer than two positive points of {check.column} against {check.x}"
    slope, _ = np.polyfit(np.log(points.index.to_numpy(float)), np.log(points.to_numpy()), 1)
    return float(slope)


@dataclass(frozen=True)
class Interval:
    value: float
    low: float
    high: float
    text: str


def _resolve(rows: pd.DataFrame, column: str, wanted: str) -> str | None:
    """A literal label, or smallest/largest (sweep values) or shortest/longest (buckets)."""
    if wanted not in ("smallest", "largest", "shortest", "longest"):
        return wanted
    labels = [label for label in rows[column].unique() if label not in ("", "all")]
    if not labels:
        return None
    key = _bucket_start if column == "bucket" else float
    ordered = sorted(labels, key=key)
    return ordered[0] if wanted in ("smallest", "shortest") else ordered[-1]


def _bucket_start(label: str) -> float:
    """'11-15' -> 11, '>60' -> 61: where a source-length bucket begins."""
    text = label.lstrip(">")
    start = float(text.split("-")[0])
    return start + 1 if label.startswith(">") else start


def scores_interval(
    scores: pd.DataFrame, selection: Selection, metric: str, test_set: str
) -> Interval | str:
    """The selection's metric with its interval; several seeds: mean value, widest interval. A
    diverged run has no translation worth scoring and counts as the worst possible score."""
    rows = scores[
        (scores.model == selection.model)
        & (scores.sweep == selection.sweep)
        & (scores.test_set == test_set)
        & (scores.metric == metric)
    ]
    sweep_value = _resolve(rows, "sweep_value", selection.sweep_value) if selection.sweep else ""
    same_value = [_same(cell, sweep_value or "") for cell in rows.sweep_value]
    rows = rows[np.array(same_value, dtype=bool)]
    bucket = _resolve(rows, "bucket", selection.bucket)
    rows = rows[rows.bucket == bucket]
    name = selection.model + (f"[{selection.sweep}={sweep_value}]" if selection.sweep else "")
    name += f" {metric}@{test_set}/{bucket}"
    if rows.empty:
        return f"no {name} in the scores table (this configuration has no such run)"
    ok = rows[rows.status != "diverged"]
    if ok.empty:
        interval = Interval(-math.inf, -math.inf, -math.inf, f"{name} diverged")
    elif ok.value.isna().any():
        return f"{name} has no value"
    else:
        value, low, high = ok.value.mean(), ok.ci_low.min(), ok.ci_high.max()
        if math.isnan(low) or math.isnan(high):  # a scalar without an interval
            low = high = value
        seeds = f", {len(ok)} seeds" if len(ok) > 1 else ""
        interval = Interval(value, low, high, f"{name} {value:.4g} [{low:.4g}, {high:.4g}]{seeds}")
    if selection.ratio_to is None:
        return interval
    below = scores_interval(scores, selection.ratio_to, metric, test_set)
    if isinstance(below, str):
        return below
    return _quotient(interval, below)


def _quotient(top: Interval, bottom: Interval) -> Interval:
    """Interval arithmetic for top / bottom; unbounded when bottom's interval reaches 0."""
    text = f"({top.text}) / ({bottom.text})"
    if not bottom.low > 0 or math.isinf(top.value):
        return Interval(math.nan, -math.inf, math.inf, text + ": ratio undefined")
    candidates = [top.low / bottom.low, top.low / bottom.high, top.high / bottom.low,
                  top.high / bottom.high]  # fmt: skip
    value = top.value / bottom.value
    return Interval(value, min(candidates), max(candidates), f"{text} = {value:.3g}")


def _compare_intervals(op: str, left: Interval, right: Interval, tolerance: float) -> tuple:
    """(passed, why) for left op right, decided by non-overlapping intervals."""
    if op == "equal":
        ok = abs(left.value - right.value) <= tolerance * abs(right.value)
        return ok, "equal" if ok else "differ"
    if op == "not_below":
        ok = left.high >= right.low
        return ok, "not clearly below" if ok else "clearly below"
    higher, lower = (left, right) if op == "above" else (right, left)
    if higher.low > lower.high:
        return True, "intervals separate in the claimed direction"
    if higher.high < lower.low:
        return False, "intervals separate in the opposite direction"
    return False, "intervals overlap: no difference shown at 95%"


def evaluate_scores(check: ScoresCheck, evidence: Evidence) -> Outcome:
    path = evidence.scores_path
    output = str(path)
    scores = evidence.read(path)
    if scores is None:
        return pending(check.label, f"{path} was not produced", output)
    absent = sorted(SCORES_COLUMNS - set(scores.columns))
    if absent:
        raise ValueError(f"{path}: the scores table lacks columns {absent}")
    test_sets = {s.test_set for s in (check.left, check.right) if s.test_set} or {
        name for name in scores.test_set.unique() if name != EVAL_TEST_SET_EXCLUDED
    }
    if not test_sets:
        return pending(check.label, f"{path} holds no evaluated test set", output)
    results, missing = [], []
    for test_set in sorted(test_sets):
        left = scores_interval(scores, check.left, check.metric, test_set)
        right = scores_interval(scores, check.right, check.metric, test_set)
        gaps = [side for side in (left, right) if isinstance(side, str)]
        if gaps:
            missing += gaps
            continue
        passed, why = _compare_intervals(check.op, left, right, check.tolerance)
        results.append((passed, f"{left.text} {check.op} {right.text}: {why}"))
    if not results:
        return pending(check.label, "; ".join(dict.fromkeys(missing)), output)
    measured = f"{check.label}: " + "; ".join(text for _, text in results)
    if check.requires_device:
        devices = set(scores.get("device", pd.Series(dtype=str)).unique()) - {""}
        if not devices or devices <= {"cpu"}:
            reason = (
                f"needs {check.requires_device.upper()} runs; the scores table records"
                f" {'no device' if not devices else 'device ' + ', '.join(sorted(devices))}"
            )
            return Outcome("pending", check.label, measured, reason, output)
    status = "pass" if all(passed for passed, _ in results) else "fail"
    detail = "all test sets agree" if status == "pass" else "see measured"
    if missing:
        detail += "; not measured: " + "; ".join(dict.fromkeys(missing))
    return Outcome(status, check.label, measured, detail, output)


def evaluate(check: NumericCheck | ScoresCheck, evidence: Evidence) -> Outcome:
    if isinstance(check, ScoresCheck):
        return evaluate_scores(check, evidence)
    outcome = (evaluate_probe if check.kind == "probe" else evaluate_bench)(check, evidence)
    if check.op == "report" and outcome.status == "pending":  # a missing aside stays an aside
        return replace(outcome, status="report", measured=f"{outcome.measured} ({outcome.detail})")
    return outcome
