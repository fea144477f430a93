"""Bench checks: a column of a declared results/bench/<bench>_<device>.csv, filtered, aggregated
(max, min, mean; against x: the log-log slope, the value at the largest x, or the crossing) or
divided by another selection; `by: interval` judges a single row's ci_low/ci_high (a row that
states its `points`, a slope the bench fitted, needs `min_points` of them)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..spec import NumericCheck
from .common import Evidence, Outcome, judge_number, needs_device, numbers, pending, select


def evaluate_bench(check: NumericCheck, evidence: Evidence) -> Outcome:
    path = evidence.bench_path(check.name, check.device)
    output = str(path) if path else f"results/bench/{check.name}_<device>.csv"
    named = {"bench": check.name, "column": check.column, "device": check.device}
    if path is None:
        declared = [str(p) for p in evidence.bench if p.stem.startswith(f"{check.name}_")]
        return pending("not_run", output, declared=declared, **named)
    frame = evidence.read(path)
    if frame is None:
        return pending("not_produced", output, file=str(path), **named)
    absent = [c for c in filter(None, (check.column, check.over)) if c not in frame.columns]
    if absent:
        return pending("missing_rows", output, missing_columns=absent, **named)
    selected = selection(check, frame)
    if isinstance(selected, dict):
        return pending("missing_rows", output, **selected, **named)
    rows, series = selected
    device = path.stem[len(check.name) + 1 :]  # <name>_<device>.csv
    named["device"] = device
    if check.aggregate in ("at_largest", "crossing", "loglog_slope"):
        points = against_x(check, rows, series)
        if len(points) < check.min_points:
            return pending(
                "too_few_points",
                output,
                x=check.x,
                needed=check.min_points,
                points=_pairs(points),
                **named,
            )
        named.update(x=check.x, points=_pairs(points))
        value = aggregate_points(check.aggregate, points)
        outcome = judge_number(check, value, output, **named)
    elif check.aggregate == "single" and len(series) != 1:
        return pending("missing_rows", output, rows=len(series), **named)
    elif check.by == "interval":
        row = rows.iloc[0]
        fitted = numbers(rows["points"]).iloc[0] if "points" in rows.columns else math.nan
        if fitted < check.min_points:  # a slope the bench fitted: over how many x it was fitted
            return pending(
                "too_few_points", output, needed=check.min_points, fitted=int(fitted), **named
            )
        ci = (float(row.get("ci_low", math.nan)), float(row.get("ci_high", math.nan)))
        if not all(map(math.isfinite, ci)):
            return pending("no_interval", output, **named)
        outcome = judge_number(check, float(series.iloc[0]), output, ci, **named)
    else:
        value = float(
            series.iloc[0] if check.aggregate == "single" else getattr(series, check.aggregate)()
        )
        outcome = judge_number(check, value, output, **named)
    return needs_device(check, outcome, {device})


def selection(check: NumericCheck, frame: pd.DataFrame) -> tuple[pd.DataFrame, pd.Series] | dict:
    """(rows, their numbers): the column (over another, or divided by the `ratio_to` rows), or
    the facts of why no row is selected."""
    numerator = select(frame, check.where)
    if isinstance(numerator, dict):
        return numerator
    series = numbers(numerator[check.column])
    if check.over is not None:
        series = series / numbers(numerator[check.over])
    if check.ratio_to is not None:
        denominator = select(frame, {**check.where, **check.ratio_to})
        if isinstance(denominator, dict):
            return denominator
        if check.per_setting == "min":
            numerator = smallest_per_setting(numerator, check.join, check.column)
        joined = numerator.merge(denominator, on=list(check.join), suffixes=("", "_denominator"))
        series = numbers(joined[check.column]) / numbers(joined[f"{check.column}_denominator"])
        numerator = joined
    series = series.dropna()
    if series.empty:
        return {"missing_row": dict(check.where)}
    return numerator.loc[series.index], series


def _pairs(points: pd.Series) -> list[list[float]]:
    return [[float(x), float(y)] for x, y in points.items()]


def smallest_per_setting(rows: pd.DataFrame, join: tuple[str, ...], column: str):
    """Of the rows sharing the join columns' values, the one with the smallest `column`."""
    values = numbers(rows[column]).dropna()
    smallest = values.groupby([rows.loc[values.index, name] for name in join]).idxmin()
    return rows.loc[smallest.to_numpy()]


def against_x(check: NumericCheck, rows: pd.DataFrame, series: pd.Series) -> pd.Series:
    """The mean value per distinct x, ascending in x (a log-log slope: positive points only)."""
    if check.x not in rows.columns:
        return pd.Series(dtype=float)
    x = numbers(rows[check.x])
    points = pd.DataFrame({"x": x, "y": series}).dropna().groupby("x").y.mean().sort_index()
    if check.aggregate == "loglog_slope":
        points = points[(points.index > 0) & (points > 0)]
    return points


def aggregate_points(aggregate: str, points: pd.Series) -> float:
    if aggregate == "at_largest":
        return float(points.iloc[-1])
    if aggregate == "crossing":
        return crossing(points)
    slope, _ = np.polyfit(np.log(points.index.to_numpy(float)), np.log(points.to_numpy()), 1)
    return float(slope)


def crossing(points: pd.Series) -> float:
    """The smallest x from which every value (at it and every larger x) is below 1: where a
    ratio crosses 1 for good; inf when it is not below 1 even at the largest x."""
    not_below = np.flatnonzero(points.to_numpy() >= 1)  # positions, ascending x
    first = not_below[-1] + 1 if len(not_below) else 0
    return float(points.index[first]) if first < len(points) else math.inf
