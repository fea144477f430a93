"""Run checks: a per-run number of results/tables/scores.csv (a column such as tokens_per_s, or a
metric), mean over seeds: variant a / variant b, a comparison X_vs_Y's X / Y, or the spread of a
family's variants."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ...data.buckets import ALL
from ...tables import SCORES_COLUMNS
from ..spec import RunCheck
from .common import Evidence, Outcome, judge_number, needs_device, pending
from .comparison import comparison_rows, family


def variants(check: RunCheck, evidence: Evidence) -> tuple[list[str], str, tuple]:
    """The variants a run check compares (numerator first), the files that named them, and why
    none (reason, facts).

    A comparison `X_vs_Y` has system_a = Y and system_b = X; its ratio reads as its name, X / Y.
    """
    if check.comparison is None:
        return [check.a, check.b], "", ()
    rows, output, why = comparison_rows(check, evidence, None)
    if rows is None:
        return [], output, why
    if family(check.comparison):
        return list(dict.fromkeys([*rows.system_a, *rows.system_b])), output, ()
    return [rows.system_b.iloc[0], rows.system_a.iloc[0]], output, ()


def run_values(scores: pd.DataFrame, variant: str, name: str) -> pd.DataFrame:
    """One value per run of a variant: a settings column (tokens_per_s), or a metric's 'all' row."""
    rows = scores[scores.variant == variant]
    if name in rows.columns:
        values = rows.groupby("run")[name].first()
    else:
        metric = rows[(rows.metric == name) & rows.bucket.isin([ALL, ""])]
        values = metric.groupby("run").value.first()
    values = pd.to_numeric(values, errors="coerce").dropna()
    devices = rows.groupby("run").device.first() if "device" in rows.columns else pd.Series()
    return pd.DataFrame({"value": values, "device": devices.reindex(values.index)})


def evaluate_run_value(check: RunCheck, evidence: Evidence) -> Outcome:
    names, named_by, why = variants(check, evidence)
    scores, scores_why = evidence.table(evidence.scores_path, "scores table")
    output = " ".join(
        filter(None, [str(evidence.scores_path or "results/tables/scores.csv"), named_by])
    )
    if not names:
        return pending(why[0], output, **why[1])
    if scores is None:
        return pending(scores_why[0], output, **scores_why[1])
    absent = sorted(set(SCORES_COLUMNS) - set(scores.columns))
    if absent:
        raise ValueError(f"{evidence.scores_path}: the scores table lacks columns {absent}")
    per_variant = {variant: run_values(scores, variant, check.run_value) for variant in names}
    missing = [variant for variant, runs in per_variant.items() if runs.empty]
    if missing:
        return pending("not_run", output, run_value=check.run_value, variants=missing)
    means = {variant: float(runs.value.mean()) for variant, runs in per_variant.items()}
    facts = {
        "run_value": check.run_value,
        "statistic": check.statistic,
        "variants": {v: {"mean": means[v], "runs": len(per_variant[v])} for v in names},
    }
    if check.statistic == "spread":
        values = list(means.values())
        value = (max(values) - min(values)) / abs(np.mean(values))
    else:
        a, b = names
        value = means[a] / means[b] if means[b] else math.nan
    outcome = judge_number(check, value, output, **facts)
    devices = {d for runs in per_variant.values() for d in runs.device.dropna()} - {""}
    return needs_device(check, outcome, devices)
