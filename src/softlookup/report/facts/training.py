"""Facts of training: the loss curves (drawn as small multiples, one panel per family of
variants), which runs were still improving, which did not finish, and what each run cost."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..families import FAMILIES, family_keys, other_keys
from ..labels import ARCHITECTURES, family_label
from ..study import Study, per_study
from . import sweeps, tables

# A study whose longest run trained at most this many epochs is drawn as each variant's losses
# after each epoch, one row a variant: a line of two or three points shows no curve.
FEW_EPOCHS = 3


@per_study
def curves(study: Study) -> pd.DataFrame:
    """Long table: run, variant, label, epoch, split (train/valid), loss; runs without a log
    are left out."""
    labels = tables.runs(study)
    labels = dict(zip(labels["run"], labels["label"], strict=True)) if len(labels) else {}
    rows = []
    for name, run in study.runs.items():
        log = run.log
        if log.empty or "epoch" not in log:
            continue
        for column, split in (("train_loss", "train"), ("val_loss", "valid")):
            if column in log:
                rows.append(
                    pd.DataFrame(
                        {
                            "run": name,
                            "variant": run.variant,
                            "label": labels.get(name, name),
                            "epoch": log["epoch"],
                            "split": split,
                            "loss": pd.to_numeric(log[column], errors="coerce"),
                        }
                    )
                )
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame()


def panels(study: Study, most: int = 6) -> list[tuple[str, list[str]]]:
    """(title, variants) of each panel of the training figure: the base models (and any variant
    no sweep family holds), then one panel per sweep family with its base model. A panel of
    more than `most` lines is split: the base models by architecture, a family by the settings
    of its other keys (scaled, unscaled), then in runs of `most`."""
    runs = tables.runs(study)
    if runs.empty:
        return []
    keys = {k for sweep in runs["sweep"] for k in sweep}
    names = [n for n in FAMILIES if family_keys(n, keys)] + other_keys(keys)
    found, placed = [], set()
    for name in names:
        members = sweeps.members(study, family_keys(name, keys))
        if len(members):
            groups = members.groupby(members["series"].astype(str), sort=False)["variant"]
            found += split(
                family_label(name),
                [(str(series), list(variants)) for series, variants in groups],
                most,
            )
            placed |= set(members.loc[~members["is_base"], "variant"])
    rest = runs[~runs["variant"].isin(placed)].drop_duplicates("variant").sort_values("variant")
    by_arch = rest.groupby(rest.get("arch", rest["base_model"]).astype(str), sort=True)["variant"]
    base = split("base models", [(ARCHITECTURES.get(a, a), list(v)) for a, v in by_arch], most)
    return base + found


def split(title: str, groups: list[tuple[str, list[str]]], most: int) -> list[tuple[str, list]]:
    """One panel of all groups' variants when they fit, else one per group (named after the
    title by the group, the first group by the title alone), each cut into runs of `most`."""
    every = [v for _, variants in groups for v in variants]
    if len(every) <= most:
        return [(title, every)] if every else []
    found = []
    for i, (group, variants) in enumerate(groups):
        name = title if i == 0 and title != "base models" else f"{title}, {group}"
        found += [(name, variants[start : start + most]) for start in range(0, len(variants), most)]
    return found


def few_epochs(table: pd.DataFrame) -> bool:
    """Whether the curves of `table` (see `curves`) are too short to draw as lines."""
    return len(table) > 0 and table["epoch"].max() <= FEW_EPOCHS


def still_improving(study: Study) -> list[str]:
    """Runs whose validation loss still fell at their last epoch (or that ran one epoch)."""
    table = curves(study)
    if table.empty:
        return []
    falling = []
    for run, rows in table[table["split"] == "valid"].groupby("run"):
        losses = rows.sort_values("epoch")["loss"].to_numpy()
        if len(losses) < 2 or losses[-1] < losses[-2]:
            falling.append(run)
    return falling


def training(study: Study) -> dict:
    runs = tables.runs(study)
    table = curves(study)
    epochs = runs["epochs"].dropna() if "epochs" in runs else pd.Series(dtype=float)
    diverged = []
    if not table.empty:
        valid = table[table["split"] == "valid"]
        diverged = sorted(
            r for r, rows in valid.groupby("run") if not np.isfinite(rows["loss"]).all()
        )
    failed = runs[runs["status"] != "ok"] if "status" in runs else runs.iloc[:0]
    return {
        "logged": table["run"].nunique() if len(table) else 0,
        "runs": len(runs),
        "epochs": (epochs.min(), epochs.max()) if len(epochs) else None,
        "few_epochs": few_epochs(table),
        "still_improving": still_improving(study),
        "diverged": diverged,
        "failed": failed[["run", "label", "status"]].to_dict("records"),
    }


def budget(study: Study) -> dict:
    """One row per run: parameters, epochs, optimiser steps, target tokens, wall time,
    throughput and status (the appendix's table)."""
    runs = tables.runs(study)
    return {
        "rows": runs.sort_values(["base_model", "variant", "seed"]).to_dict("records")
        if len(runs)
        else []
    }
