"""Evaluate one check of the claims file against the evidence the ledger was given.

Every check ends as an Outcome: pass, fail, pending (the evidence is not there: a probe not run,
a comparison the configuration does not define, a GPU-only claim on a CPU machine) or report
(shown, never part of the verdict). Nothing missing is ever guessed, and nothing is read that the
ledger was not given explicitly: every file a verdict reads is a declared input of its rule.

A paired comparison is judged as compare.py summarises it: an estimate (the difference B - A, or
one system's own mean: `side`), its standard error over the two-level draws (seeds, then
sentences), and a p-value of the check's null hypothesis in the two-sided form, so that p < 0.05
exactly when the 95% interval (estimate +- 1.96 se) clears the threshold on the claimed side:
above/below t (and report): 2 Phi(-|estimate - t| / se); equivalent within M: two one-sided tests,
2 max(Phi(-(estimate + M) / se), Phi(-(M - estimate) / se)); non-inferior by M:
2 Phi(-(estimate + M) / se). Each outcome carries the tests it read (`Test`): the ledger adjusts
them within the claim (claims.multiplicity, Holm) and judges on the adjusted p-values.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.buckets import ALL, bucket_order
from ..evaluate.compare import COLUMNS as COMPARISON_COLUMNS
from ..evaluate.compare import Z95, doubled_tail, stated_p, two_sided_p
from ..evaluate.score import COLUMNS as SCORES_COLUMNS
from ..evaluate.score import final_point
from .spec import (
    AnalysisCheck,
    Check,
    ClaimsFileError,
    ComparisonCheck,
    NumericCheck,
    RunCheck,
    TrainingCheck,
)

BOOLEAN_CELLS = {"true": 1.0, "false": 0.0}
NUMERIC = ("value", "ci_low", "ci_high", "delta", "mean_a", "mean_b", "p_value", "se", "se_a",
           "se_b")  # fmt: skip
ALPHA = 0.05  # every test at 5% (95% intervals), Holm-adjusted within a claim


@dataclass(frozen=True)
class Test:
    """One null hypothesis a comparison check reads: its row, side and null, and its p-value."""

    key: tuple  # (comparison, test set, bucket, metric, side, null kind, threshold)
    p_value: float


@dataclass(frozen=True)
class Outcome:
    status: str  # pass, fail, pending, report
    label: str
    measured: str  # "label = value", or what is missing
    detail: str  # why the status
    output: str  # file(s) the number came from (or should have)
    deviation: float | None = None  # approx checks: |measured - expected|
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    judged: Test | None = None  # the test the status depends on (paired comparisons)
    tests: tuple[Test, ...] = ()  # every test the check read (its family's share)
    p_adjusted: float | None = None  # the judged test's p, Holm-adjusted within the claim
    family_size: int | None = None  # the number of tests it was adjusted over


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
            self._cache[path] = _read_table(path) if path.exists() else None
        return self._cache[path]

    def table(self, path: Path | None, what: str) -> tuple[pd.DataFrame | None, str]:
        """(frame, "") or (None, why not). Of scores and comparisons, the final models' rows:
        the ledger judges at the final budget point."""
        if path is None:
            return None, f"no {what} among the ledger's inputs"
        frame = self.read(path)
        if frame is None:
            return None, f"{path} was not produced"
        return (final_point(frame) if path in (self.scores_path, self.comparisons_path)
                else frame), ""  # fmt: skip

    def bench_path(self, name: str, device: str) -> tuple[Path | None, str]:
        """The declared bench CSV <name>_<device>.csv for a device class, or None and why not."""
        found = [path for path in self.bench if path.stem.startswith(f"{name}_")]
        devices = {path: path.stem[len(name) + 1 :] for path in found}
        gpu = [path for path in found if devices[path] != "cpu"]
        cpu = [path for path in found if devices[path] == "cpu"]
        chosen = {
            "gpu": gpu, "cuda": [p for p in gpu if devices[p] == "cuda"], "cpu": cpu,
            "any": gpu + cpu,
        }[device]  # fmt: skip
        if chosen:
            return chosen[0], ""
        have = ", ".join(str(p) for p in found) or "none"
        wanted = "" if device == "any" else device.upper() + " "
        return None, (
            f"no {wanted}benchmark {name}_<device>.csv among the ledger's inputs (declared: {have})"
        )


def _read_table(path: Path) -> pd.DataFrame:
    """Setting columns as exact text; value-like columns as numbers where they parse."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    for column in NUMERIC:
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column].replace("", "nan"), errors="coerce")
    return frame


def _same(cell: str, wanted: str | tuple[str, ...]) -> bool:
    """A cell holds the wanted setting (or, for a tuple, any of them)."""
    if isinstance(wanted, tuple):
        return any(_same(cell, one) for one in wanted)
    if cell == wanted:
        return True
    try:
        return float(cell) == float(wanted)
    except ValueError:
        return cell.lower() == wanted.lower() and cell.lower() in BOOLEAN_CELLS


def _select(frame: pd.DataFrame, settings: dict[str, str]) -> pd.DataFrame | str:
    """Rows matching every setting, or the reason none can (a column that does not exist)."""
    missing = [name for name in settings if name not in frame.columns]
    if missing:
        return f"columns {missing} absent (columns: {', '.join(frame.columns)})"
    keep = np.ones(len(frame), dtype=bool)
    for name, wanted in settings.items():
        matches = frame[name].map(lambda cell, wanted=wanted: _same(str(cell), wanted))
        keep &= matches.to_numpy(dtype=bool)
    return frame[keep]


def format_number(value: float | None, fmt: str) -> str:
    if value is None:
        return ""
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return format(value, fmt)


def allowed_deviation(check: NumericCheck | RunCheck) -> float:
    return max(
        check.tolerance or 0.0, (getattr(check, "rel_tolerance", None) or 0.0) * abs(check.expected)
    )  # fmt: skip (whichever is given; both: the looser)


def compare_number(check, value: float, output: str, measured: str | None = None) -> Outcome:
    """Apply the check's op (approx, above, below, report) to a measured number."""
    shown = format_number(value, check.fmt)
    measured = measured or f"{check.label} = {shown}"
    expected = format_number(check.expected, check.fmt)
    if check.op == "report":
        return Outcome("report", check.label, measured, "reported only", output, value=value)
    if check.op == "approx":
        deviation = abs(value - check.expected)
        allowed = allowed_deviation(check)
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


# --- probes ---------------------------------------------------------------------------------------


def evaluate_probe(check: NumericCheck, evidence: Evidence) -> Outcome:
    path = evidence.probes.get(check.name)
    output = str(path) if path else f"results/probes/{check.name}.csv"
    if path is None:
        return pending(check.label, f"no probe {check.name}.csv among the ledger's inputs", output)
    frame = evidence.read(path)
    if frame is None:
        return pending(check.label, f"{path} was not produced", output)
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
        return pending(check.label, f"not measured in this configuration: {value}", output)
    return compare_number(check, value, output)


# --- benchmarks -----------------------------------------------------------------------------------


def evaluate_bench(check: NumericCheck, evidence: Evidence) -> Outcome:
    path, why = evidence.bench_path(check.name, check.device)
    output = str(path) if path else f"results/bench/{check.name}_<device>.csv"
    if path is None:
        return pending(check.label, why, output)
    frame = evidence.read(path)
    if frame is None:
        return pending(check.label, f"{path} was not produced", output)
    for column in filter(None, (check.column, check.over)):
        if column not in frame.columns:
            columns = ", ".join(frame.columns)
            return pending(check.label, f"column {column!r} absent from {path} ({columns})",
                           output)  # fmt: skip
    numerator = _select(frame, check.where)
    if isinstance(numerator, str):
        return pending(check.label, f"{path}: {numerator}", output)
    series = _numbers(numerator[check.column])
    if check.over is not None:
        series = series / _numbers(numerator[check.over])
    if check.ratio_to is not None:
        denominator = _select(frame, {**check.where, **check.ratio_to})
        if isinstance(denominator, str):
            return pending(check.label, f"{path}: {denominator}", output)
        if check.per_setting == "min":
            numerator = _smallest_per_setting(numerator, check.join, check.column)
        joined = numerator.merge(denominator, on=list(check.join), suffixes=("", "_denominator"))
        series = _numbers(joined[check.column]) / _numbers(joined[f"{check.column}_denominator"])
        numerator = joined
    series = series.dropna()
    if series.empty:
        return pending(check.label, f"no rows of {path} match {check.where}", output)
    rows = numerator.loc[series.index]
    value = _aggregate(check, rows, series)
    if isinstance(value, str):
        return pending(check.label, f"{path}: {value}", output)
    against_x = check.aggregate in ("at_largest", "crossing")
    measured = _described_points(check, rows, series, value) if against_x else None
    outcome = compare_number(check, value, output, measured=measured)
    device = path.stem[len(check.name) + 1 :]  # <name>_<device>.csv
    return _needs_device(check, outcome, {device}, f"{path} holds rows of")


def _smallest_per_setting(rows: pd.DataFrame, join: tuple[str, ...], column: str):
    """Of the rows sharing the join columns' values, the one with the smallest `column`."""
    values = _numbers(rows[column]).dropna()
    smallest = values.groupby([rows.loc[values.index, name] for name in join]).idxmin()
    return rows.loc[smallest.to_numpy()]


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
    points = _against_x(check, rows, series)
    if isinstance(points, str):
        return points
    if check.aggregate == "at_largest":
        return float(points.iloc[-1])
    if check.aggregate == "crossing":
        return crossing(points)
    slope, _ = np.polyfit(np.log(points.index.to_numpy(float)), np.log(points.to_numpy()), 1)
    return float(slope)


def _against_x(check: NumericCheck, rows: pd.DataFrame, series: pd.Series) -> pd.Series | str:
    """The mean value per distinct x, ascending in x (a log-log slope: positive points only), or
    why there are too few."""
    if check.x not in rows.columns:
        return f"column {check.x!r} absent"
    x = _numbers(rows[check.x])
    points = pd.DataFrame({"x": x, "y": series}).dropna().groupby("x").y.mean().sort_index()
    kind = ""
    if check.aggregate == "loglog_slope":
        points, kind = points[(points.index > 0) & (points > 0)], "positive "
    if len(points) < check.min_points:
        return (
            f"{len(points)} {kind}points of {check.column} against {check.x}"
            f" ({', '.join(f'{v:g}' for v in points.index)}); the check needs {check.min_points}"
        )
    return points


def crossing(points: pd.Series) -> float:
    """The smallest x from which every value (at it and every larger x) is below 1: where a
    ratio crosses 1 for good; inf when it is not below 1 even at the largest x."""
    not_below = np.flatnonzero(points.to_numpy() >= 1)  # positions, ascending x
    first = not_below[-1] + 1 if len(not_below) else 0
    return float(points.index[first]) if first < len(points) else math.inf


def _described_points(check: NumericCheck, rows: pd.DataFrame, series: pd.Series,
                      value: float) -> str:  # fmt: skip
    """'label = value (x: x1 v1, x2 v2, ...)' of a value read against x, each v in the check's
    format; a crossing is an x, printed as the x's are (inf: none)."""
    points = _against_x(check, rows, series)
    if check.aggregate != "crossing":
        shown = format_number(value, check.fmt)
    else:
        shown = f"none up to {check.x} {points.index[-1]:g}" if math.isinf(value) else f"{value:g}"
    curve = ", ".join(f"{x:g} {format_number(y, check.fmt)}" for x, y in points.items())
    return f"{check.label} = {shown} ({check.x}: {curve})"


# --- paired comparisons ---------------------------------------------------------------------------


def _buckets(rows: pd.DataFrame) -> list[str]:
    """The length buckets present (not 'all'), shortest first."""
    return [b for b in bucket_order(rows.bucket.unique()) if b not in ("", ALL)]


def _family(pattern: str) -> re.Pattern | None:
    """'d3_scaled_vs_unscaled_dk{x}' -> a regex with a numeric group x; None for a plain name."""
    if "{x}" not in pattern:
        return None
    head, tail = pattern.split("{x}", 1)
    return re.compile(f"^{re.escape(head)}(?P<x>\\d+(?:\\.\\d+)?){re.escape(tail)}$")


def _comparison_rows(check: ComparisonCheck | RunCheck, evidence: Evidence, metric: str | None):
    """(rows of comparisons.csv for the check's name or family, output, why none)."""
    frame, why = evidence.table(evidence.comparisons_path, "comparisons table")
    output = str(evidence.comparisons_path or "results/tables/comparisons.csv")
    if frame is None:
        return None, output, why
    absent = sorted(set(COMPARISON_COLUMNS) - set(frame.columns))
    if absent:
        raise ValueError(f"{output}: the comparisons table lacks columns {absent}")
    family = _family(check.comparison)
    names = frame.comparison.astype(str)
    rows = frame[names.str.match(family) if family else names == check.comparison]
    if metric is not None:
        rows = rows[rows.metric == metric]
    if getattr(check, "test_set", None):
        rows = rows[rows.test_set == check.test_set]
    if rows.empty:
        present = ", ".join(sorted(frame.comparison.unique())) or "none"
        what = f"comparison {check.comparison}" + (f" ({metric})" if metric else "")
        return (
            None,
            output,
            (
                f"{what} absent from {output}: the configuration does not compare these variants"
                f" (present: {present})"
            ),
        )
    if family:
        rows = rows.assign(x=[float(family.match(n).group("x")) for n in rows.comparison])
    return rows, output, ""


def _one_bucket(rows: pd.DataFrame, bucket: str) -> pd.DataFrame | str:
    if bucket in ("shortest", "longest"):
        labels = _buckets(rows)
        if not labels:
            return "no length buckets"
        bucket = labels[0] if bucket == "shortest" else labels[-1]
    picked = rows[rows.bucket == bucket]
    if picked.empty:
        return f"no bucket {bucket!r} (present: {', '.join(rows.bucket.unique())})"
    return picked


def _seed_text(row: pd.Series) -> str:
    """'per seed +0.58, +0.75' from the row's JSON of per-seed deltas (empty when unpaired)."""
    cell = row.seed_deltas if isinstance(row.seed_deltas, str) else ""
    deltas = json.loads(cell or "{}")
    if not deltas:
        return f"{row.seeds} seeds"
    return "per seed " + ", ".join(f"{value:+.2f}" for value in deltas.values())


def _describe(row: pd.Series) -> str:
    p = "" if pd.isna(row.p_value) else f", {stated_p(row.p_value)}"
    return (
        f"{row.comparison} {row.metric}@{row.test_set}/{row.bucket}: {row.system_a}"
        f" {row.mean_a:.2f} vs {row.system_b} {row.mean_b:.2f}, delta {row.delta:+.2f}"
        f" [{row.ci_low:+.2f}, {row.ci_high:+.2f}]{p}, {_seed_text(row)}, n = {row.n_sentences}"
    )


def _estimate(row: pd.Series, side: str | None) -> tuple[float, float]:
    """(estimate, standard error): the difference B - A, or system `side`'s own mean."""
    if side is None:
        return float(row.delta), float(row.se)
    return float(row[f"mean_{side}"]), float(row[f"se_{side}"])


def _null(check: ComparisonCheck) -> tuple[str, float]:
    """The check's null hypothesis: (kind, threshold); a report tests 'no difference'."""
    if check.op in ("equivalent", "non_inferior"):
        return check.op, float(check.margin)
    if check.op == "report":
        return "point", 0.0
    return "point", float(check.expected or 0.0)


def null_p(null: tuple[str, float], value: float, se: float) -> float:
    """The null's p-value in two-sided form (module docstring); NaN without a standard error."""
    kind, threshold = null
    if kind == "point":
        return two_sided_p(value - threshold, se)
    if not (math.isfinite(value) and math.isfinite(se)):
        return math.nan
    clearances = [value + threshold] + ([threshold - value] if kind == "equivalent" else [])
    return max(_one_sided_doubled(clearance, se) for clearance in clearances)


def _one_sided_doubled(clearance: float, se: float) -> float:
    """2 Phi(-clearance / se), at most 1: the estimate lies `clearance` beyond a one-sided null
    (doubled, so that p < 0.05 is the 95% interval's rule)."""
    if se == 0:
        return 0.0 if clearance > 0 else 1.0
    return min(1.0, doubled_tail(clearance / se))


def decide(check: ComparisonCheck, value: float, p_value: float) -> bool:
    """Pass: p below ALPHA and, for a threshold, the estimate on the claimed side of it."""
    if not p_value < ALPHA:
        return False
    if check.op == "above":
        return value > (check.expected or 0.0)
    if check.op == "below":
        return value < (check.expected or 0.0)
    return True  # equivalent, non_inferior: the p-value is one-sided already


def row_test(check: ComparisonCheck, row: pd.Series) -> Test:
    """The check's null hypothesis on one row, and its p-value."""
    value, se = _estimate(row, check.side)
    null = _null(check)
    key = (row.comparison, row.test_set, row.bucket, row.metric, check.side or "b-a", *null)
    return Test(key, null_p(null, value, se))


def _expectation(check: ComparisonCheck) -> str:
    if check.op == "equivalent":
        return f"expected the interval inside +-{check.margin:g} (equivalence margin)"
    if check.op == "non_inferior":
        return f"expected the interval above -{check.margin:g} (non-inferiority margin)"
    return f"expected the interval {check.op} {check.expected or 0.0:g}"


def _interval_test(check: ComparisonCheck, row: pd.Series, output: str, text: str,
                   also_read: tuple[Test, ...] = ()) -> Outcome:  # fmt: skip
    """A paired difference (or one side's mean) judged by its 95% interval, that is by the
    p-value of the check's null (before the claim's family adjusts it)."""
    value, se = _estimate(row, check.side)
    if check.side is not None:
        low, high = value - Z95 * se, value + Z95 * se
        text = f"{row[f'system_{check.side}']} {value:.3g} [{low:.3g}, {high:.3g}]; {text}"
    return _judged(check, value, se, row_test(check, row), output, text, also_read)


def _judged(check: ComparisonCheck, value: float, se: float, test: Test, output: str, text: str,
            also_read: tuple[Test, ...] = ()) -> Outcome:  # fmt: skip
    """An estimate with its standard error judged by the p-value of `test`, its null."""
    low, high = value - Z95 * se, value + Z95 * se
    expected = check.expected if check.expected is not None else 0.0
    if check.op == "report":
        status, detail = "report", "reported only"
    else:
        status = "pass" if decide(check, value, test.p_value) else "fail"
        detail = _expectation(check)
    if status == "fail" and check.op in ("above", "below"):
        detail += ("; the interval includes it: no difference shown at 95%"
                   if low <= expected <= high else "; the interval lies on the other side")
    described = check.op == "report" and check.side is not None  # a system shown, not tested
    return Outcome(status, check.label, f"{check.label}: {text}", detail, output,
                   value=value, ci_low=low, ci_high=high, judged=None if described else test,
                   tests=() if described else (test, *also_read))  # fmt: skip


def evaluate_comparison(check: ComparisonCheck, evidence: Evidence) -> Outcome:
    rows, output, why = _comparison_rows(check, evidence, check.metric)
    if rows is None:
        return pending(check.label, why, output)
    if check.statistic == "delta":
        picked = _one_bucket(rows, check.bucket)
        if isinstance(picked, str):
            return pending(check.label, f"{check.comparison}: {picked}", output)
        if len(picked) > 1:
            raise ClaimsFileError(
                f"check {check.label!r}: {len(picked)} rows of {output} match"
                f" {check.comparison}/{check.bucket}; name its test_set"
            )
        row = picked.iloc[0]
        return _interval_test(check, row, output, _describe(row))
    return _family_statistic(check, rows, output)


def doubling_slope(picked: pd.DataFrame) -> tuple[float, float]:
    """The least-squares slope of delta against log2 x, and its standard error.

    The slope is a weighted sum of the deltas, w_i = (u_i - mean u) / sum (u_j - mean u)^2 with
    u = log2 x, so its variance is sum w_i^2 se_i^2 when the deltas are independent. Their seed
    parts are (each x has its own runs); their sentence parts share the test sentences, but a
    part common to every delta cancels in a sum whose weights add up to zero, so for it the
    independent form errs wide.
    """
    u = np.log2(picked.x.to_numpy(float))
    u = u - u.mean()
    weights = u / (u @ u)
    return float(weights @ picked.delta.to_numpy(float)), float(
        np.sqrt(weights**2 @ picked.se.to_numpy(float) ** 2)
    )


def _family_statistic(check: ComparisonCheck, rows: pd.DataFrame, output: str) -> Outcome:
    """A family of comparisons against x (d_k, heads): slope of delta against log2 x, its largest
    delta, or the delta at the largest x."""
    picked = _one_bucket(rows, check.bucket)
    if isinstance(picked, str):
        return pending(check.label, f"{check.comparison}: {picked}", output)
    picked = picked.sort_values("x")
    points = ", ".join(f"x={row.x:g}: {row.delta:+.2f} [{row.ci_low:+.2f}, {row.ci_high:+.2f}]"
                       for row in picked.itertuples())  # fmt: skip
    if picked.x.nunique() < check.min_points:
        return pending(check.label, f"{check.comparison}: {picked.x.nunique()} values of x"
                       f" ({points}); the check needs {check.min_points}", output)  # fmt: skip
    if check.statistic == "slope":
        slope, se = doubling_slope(picked)
        first = picked.iloc[0]
        null = _null(check)
        test = Test((check.comparison, first.test_set, first.bucket, first.metric, "slope", *null),
                    null_p(null, slope, se))  # fmt: skip
        low, high = slope - Z95 * se, slope + Z95 * se
        text = f"{slope:+.3f} [{low:+.3f}, {high:+.3f}] per doubling ({points})"
        return _judged(check, slope, se, test, output, text)
    row = picked.loc[picked.delta.idxmax()] if check.statistic == "max" else picked.iloc[-1]
    members = tuple(row_test(check, member) for _, member in picked.iterrows())
    searched = members if check.statistic == "max" else ()  # the largest of several: all count
    return _interval_test(check, row, output, f"{_describe(row)} (family: {points})", searched)


# --- per-run numbers of the scores table ----------------------------------------------------------


def _variants(check: RunCheck, evidence: Evidence) -> tuple[list[str], str, str]:
    """The variants a run check compares (numerator first), the files that named them, or why not.

    A comparison `X_vs_Y` has system_a = Y and system_b = X; its ratio reads as its name, X / Y.
    """
    if check.comparison is None:
        return [check.a, check.b], "", ""
    rows, output, why = _comparison_rows(check, evidence, None)
    if rows is None:
        return [], output, why
    if _family(check.comparison):
        return list(dict.fromkeys([*rows.system_a, *rows.system_b])), output, ""
    return [rows.system_b.iloc[0], rows.system_a.iloc[0]], output, ""


def run_values(scores: pd.DataFrame, variant: str, name: str) -> pd.DataFrame:
    """One value per run of a variant: a settings column (tokens_per_s), or a metric's 'all' row."""
    rows = scores[scores.variant == variant]
    if name in rows.columns:
        values = rows.groupby("run")[name].first()
    else:
        metric = rows[(rows.metric == name) & rows.bucket.isin(["all", ""])]
        values = metric.groupby("run").value.first()
    values = pd.to_numeric(values, errors="coerce").dropna()
    devices = rows.groupby("run").device.first() if "device" in rows.columns else pd.Series()
    return pd.DataFrame({"value": values, "device": devices.reindex(values.index)})


def evaluate_run_value(check: RunCheck, evidence: Evidence) -> Outcome:
    variants, named_by, why = _variants(check, evidence)
    scores, scores_why = evidence.table(evidence.scores_path, "scores table")
    output = " ".join(filter(None, [str(evidence.scores_path or "results/tables/scores.csv"),
                                    named_by]))  # fmt: skip
    if not variants:
        return pending(check.label, why, output)
    if scores is None:
        return pending(check.label, scores_why, output)
    absent = sorted(set(SCORES_COLUMNS) - set(scores.columns))
    if absent:
        raise ValueError(f"{evidence.scores_path}: the scores table lacks columns {absent}")
    per_variant = {variant: run_values(scores, variant, check.run_value) for variant in variants}
    missing = [variant for variant, runs in per_variant.items() if runs.empty]
    if missing:
        return pending(check.label, f"no {check.run_value} for variant(s) {', '.join(missing)} in"
                       f" {evidence.scores_path}", output)  # fmt: skip
    means = {variant: float(runs.value.mean()) for variant, runs in per_variant.items()}
    parts = [f"{variant} {format_number(mean, check.fmt)} ({len(per_variant[variant])} runs)"
             for variant, mean in means.items()]  # fmt: skip
    if check.statistic == "spread":
        values = list(means.values())
        value = (max(values) - min(values)) / abs(np.mean(values))
        text = f"{check.label} = {value:.3g}: " + ", ".join(parts)
    else:
        a, b = variants
        value = means[a] / means[b] if means[b] else math.nan
        text = f"{check.label} = {value:.3g}: " + " / ".join(parts)
    outcome = compare_number(check, value, output, measured=text)
    devices = {d for runs in per_variant.values() for d in runs.device.dropna()} - {""}
    return _needs_device(check, outcome, devices, "the scores table records")


def _needs_device(check, outcome: Outcome, devices: set[str], who: str) -> Outcome:
    """A claim about GPUs stays pending on CPU runs, its CPU measurement still shown."""
    if check.requires_device is None or outcome.status == "report":
        return outcome
    if devices and not devices <= {"cpu"}:
        return outcome
    seen = "no device" if not devices else "device " + ", ".join(sorted(devices))
    return replace(outcome, status="pending",
                   detail=f"needs {check.requires_device.upper()} runs; {who} {seen}")  # fmt: skip


# --- training curves ------------------------------------------------------------------------------


def evaluate_training(check: TrainingCheck, evidence: Evidence) -> Outcome:
    """Training time until the validation loss first reaches a target, variant a / variant b,
    from results/tables/training.csv (one row per run x epoch; wall_s: that epoch's training)."""
    log, why = evidence.table(evidence.training_path, "training table")
    output = str(evidence.training_path or "results/tables/training.csv")
    if log is None:
        return pending(check.label, why, output)
    log = log.assign(**{c: pd.to_numeric(log[c], errors="coerce")
                        for c in ("epoch", "val_loss", "wall_s")})  # fmt: skip
    runs = {variant: log[log.variant == variant] for variant in (check.a, check.b)}
    missing = [variant for variant, rows in runs.items() if rows.empty]
    if missing:
        return pending(check.label, f"no training record of variant(s) {', '.join(missing)} in"
                       f" {output}", output)  # fmt: skip
    best = [rows.val_loss.min() for frame in runs.values() for _, rows in frame.groupby("run")]
    target = max(best) if check.target == "common" else float(check.target)
    times = {}
    for variant, frame in runs.items():
        reached = []
        for _, rows in frame.sort_values("epoch").groupby("run"):
            hit = rows.val_loss.to_numpy() <= target + 1e-12
            if hit.any():
                reached.append(float(rows.wall_s.to_numpy()[: hit.argmax() + 1].sum()))
        if not reached:
            return pending(check.label, f"{variant} never reaches validation loss {target:.3f}",
                           output)  # fmt: skip
        times[variant] = float(np.mean(reached))
    value = times[check.a] / times[check.b]
    threads = {variant: sorted(set(frame.threads)) if "threads" in frame.columns else ["?"]
               for variant, frame in runs.items()}  # fmt: skip
    text = (
        f"{check.label} = {value:.3g}: to validation loss {target:.3f}, {check.a}"
        f" {times[check.a]:.0f} s, {check.b} {times[check.b]:.0f} s"
        f" (threads {','.join(map(str, threads[check.a]))}"
        f" vs {','.join(map(str, threads[check.b]))})"
    )
    outcome = compare_number(check, value, output, measured=text)
    if threads[check.a] != threads[check.b] and outcome.status in ("pass", "fail"):
        outcome = replace(
            outcome,
            status="pending",
            detail="the two models trained on different numbers of threads",
        )
    scores, _ = evidence.table(evidence.scores_path, "scores table")
    devices = set()
    if scores is not None and "device" in scores.columns:
        devices = set(scores[scores.variant.isin([check.a, check.b])].device) - {""}
    return _needs_device(check, outcome, devices, "the scores table records")


# --- attention maps of trained runs ---------------------------------------------------------------


def _variant_of(path: Path) -> str:
    """results/analysis/attention_<variant>-s<seed>.csv -> <variant>."""
    return path.stem.removeprefix("attention_").rsplit("-s", 1)[0]


def evaluate_analysis(check: AnalysisCheck, evidence: Evidence) -> Outcome:
    """Per run of the comparison's side-`side` variant, the max (or mean) of the quantity over
    its maps matching the glob; the mean over the runs."""
    rows, output, why = _comparison_rows(check, evidence, None)
    if rows is None:
        return pending(check.label, why, output)
    variant = rows[f"system_{check.side}"].iloc[0]
    paths = sorted(path for path in evidence.analysis if _variant_of(path) == variant)
    output = " ".join(map(str, paths)) or f"results/analysis/attention_{variant}-s<seed>.csv"
    per_run = {}
    for path in paths:
        frame = evidence.read(path)
        if frame is None:
            return pending(check.label, f"{path} was not produced", output)
        maps = frame["map"].astype(str).map(lambda name: fnmatchcase(name, check.map))
        values = frame[(frame.quantity == check.analysis) & maps].value.dropna()
        if not values.empty:
            run = path.stem.removeprefix("attention_")
            per_run[run] = float(getattr(values, check.aggregate)())
    if not per_run:
        return pending(check.label, f"no {check.analysis} in maps {check.map} of {variant}'s"
                       " attention maps among the ledger's inputs", output)  # fmt: skip
    value = float(np.mean(list(per_run.values())))
    runs = ", ".join(f"{run} {format_number(v, check.fmt)}" for run, v in per_run.items())
    text = f"{check.label} = {format_number(value, check.fmt)} ({check.aggregate} over maps"
    return compare_number(check, value, output, measured=f"{text} {check.map}: {runs})")


def evaluate(check: Check, evidence: Evidence) -> Outcome:
    if isinstance(check, ComparisonCheck):
        outcome = evaluate_comparison(check, evidence)
    elif isinstance(check, RunCheck):
        outcome = evaluate_run_value(check, evidence)
    elif isinstance(check, TrainingCheck):
        outcome = evaluate_training(check, evidence)
    elif isinstance(check, AnalysisCheck):
        outcome = evaluate_analysis(check, evidence)
    elif check.kind == "probe":
        outcome = evaluate_probe(check, evidence)
    else:
        outcome = evaluate_bench(check, evidence)
    if check.op == "report" and outcome.status == "pending":  # a missing aside stays an aside
        return replace(outcome, status="report", measured=f"{outcome.measured} ({outcome.detail})")
    return outcome
