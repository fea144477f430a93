"""Training checks: training time until the validation loss first reaches a target, variant a /
variant b, from results/tables/training.csv (one row per run x epoch; wall_s: that epoch's)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..spec import TrainingCheck
from .common import Evidence, Outcome, judge_number, needs_device, pending


def evaluate_training(check: TrainingCheck, evidence: Evidence) -> Outcome:
    log, why = evidence.table(evidence.training_path, "training table")
    output = str(evidence.training_path or "results/tables/training.csv")
    if log is None:
        return pending(why[0], output, **why[1])
    log = log.assign(
        **{c: pd.to_numeric(log[c], errors="coerce") for c in ("epoch", "val_loss", "wall_s")}
    )
    runs = {variant: log[log.variant == variant] for variant in (check.a, check.b)}
    missing = [variant for variant, rows in runs.items() if rows.empty]
    if missing:
        return pending("not_run", output, variants=missing)
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
            return pending("never_reached", output, variant=variant, target=float(target))
        times[variant] = float(np.mean(reached))
    threads = {
        variant: sorted(map(str, set(frame.threads))) if "threads" in frame.columns else []
        for variant, frame in runs.items()
    }
    facts = {
        "a": check.a,
        "b": check.b,
        "target": float(target),
        "seconds": times,
        "threads": threads,
    }
    outcome = judge_number(check, times[check.a] / times[check.b], output, **facts)
    if threads[check.a] != threads[check.b] and outcome.status != "report":
        return Outcome("pending", "threads_differ", output, value=outcome.value, facts=facts)
    scores, _ = evidence.table(evidence.scores_path, "scores table")
    devices = set()
    if scores is not None and "device" in scores.columns:
        devices = set(scores[scores.variant.isin([check.a, check.b])].device) - {""}
    return needs_device(check, outcome, devices)
