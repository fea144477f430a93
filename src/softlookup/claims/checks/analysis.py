"""Analysis checks: a quantity of the trained runs' attention maps
(results/analysis/attention_<run>.csv) for the variant on one side of a comparison: per run the
max (or mean) over the maps matching a glob, then the mean over the variant's runs."""

from __future__ import annotations

from fnmatch import fnmatchcase
from pathlib import Path

import numpy as np

from ...rundir import variant_of
from ..spec import AnalysisCheck
from .common import Evidence, Outcome, judge_number, pending
from .comparison import comparison_rows


def analysed_variant(path: Path) -> str:
    """results/analysis/attention_<variant>-s<seed>.csv -> <variant> (rundir's parsing)."""
    return variant_of(path.stem.removeprefix("attention_"))


def evaluate_analysis(check: AnalysisCheck, evidence: Evidence) -> Outcome:
    rows, output, why = comparison_rows(check, evidence, None)
    if rows is None:
        return pending(why[0], output, **why[1])
    variant = rows[f"system_{check.side}"].iloc[0]
    paths = sorted(path for path in evidence.analysis if analysed_variant(path) == variant)
    output = " ".join(map(str, paths)) or f"results/analysis/attention_{variant}-s<seed>.csv"
    named = {
        "analysis": check.analysis,
        "variant": variant,
        "map": check.map,
        "aggregate": check.aggregate,
    }
    per_run = {}
    for path in paths:
        frame = evidence.read(path)
        if frame is None:
            return pending("not_produced", output, file=str(path), **named)
        maps = frame["map"].astype(str).map(lambda name: fnmatchcase(name, check.map))
        values = frame[(frame.quantity == check.analysis) & maps].value.dropna()
        if not values.empty:
            per_run[path.stem.removeprefix("attention_")] = float(
                getattr(values, check.aggregate)()
            )
    if not per_run:
        return pending("not_run", output, **named)
    value = float(np.mean(list(per_run.values())))
    return judge_number(check, value, output, per_run=per_run, **named)
