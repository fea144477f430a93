"""Probe checks: a row of results/probes/<probe>.csv picked by quantity and settings, optionally
divided by another row (`ratio_to`); `by: interval` judges the row's ci_low/ci_high."""

from __future__ import annotations

import math

from ..spec import ClaimsFileError, NumericCheck
from .common import Evidence, Outcome, judge_number, pending, select


def evaluate_probe(check: NumericCheck, evidence: Evidence) -> Outcome:
    path = evidence.probes.get(check.name)
    output = str(path) if path else f"results/probes/{check.name}.csv"
    named = {"probe": check.name, "quantity": check.quantity, "where": dict(check.where)}
    if path is None:
        return pending("not_run", output, **named)
    frame = evidence.read(path)
    if frame is None:
        return pending("not_produced", output, file=str(path), **named)
    rows = frame[frame.quantity == check.quantity]

    def one_row(settings: dict):
        picked = select(rows, settings)
        if isinstance(picked, dict):
            return picked
        if len(picked) > 1:
            raise ClaimsFileError(
                f"check {check.label!r}: {len(picked)} rows of {path} match"
                f" quantity={check.quantity} {settings}; add settings to 'where'"
            )
        return {"missing_row": dict(settings)} if picked.empty else picked.iloc[0]

    row = one_row(check.where)
    if isinstance(row, dict):
        return pending("missing_rows", output, **named, **row)
    value = float(row.value)
    if check.ratio_to is not None:
        denominator = one_row({**check.where, **check.ratio_to})
        if isinstance(denominator, dict):
            return pending("missing_rows", output, **named, **denominator)
        value /= float(denominator.value)
    if check.by != "interval":
        return judge_number(check, value, output, **named)
    ci = (float(row.get("ci_low", math.nan)), float(row.get("ci_high", math.nan)))
    if not all(map(math.isfinite, ci)):
        return pending("no_interval", output, **named)
    return judge_number(check, value, output, ci, **named)
