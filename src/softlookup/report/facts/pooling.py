"""Facts of the seed variance the paired comparisons pool (results/tables/seed_variance.csv,
evaluate.compare): per family of runs and test set, each variant's seed SD of whole-test-set BLEU
of the final models beside the family's pooled SD and Bartlett's test of equal variances, which
the appendix's figure draws and its text words."""

from __future__ import annotations

import math

import pandas as pd

from ...data.buckets import ALL
from ...evaluate.compare import SEED_VARIANCE_COLUMNS
from ...evaluate.paired import ALPHA
from ..labels import run_family_label
from ..study import Study
from . import tables

SD_COLUMNS = [
    "family",
    "family_label",
    "test_set",
    "variant",
    "label",
    "seeds",
    "seed_sd",
    "pooled_sd",
    "pooled_df",
    "bartlett_p",
    "pooled",
]
READ = [name for name in SEED_VARIANCE_COLUMNS if name != "bartlett_statistic"]


def cell_rows(study: Study) -> pd.DataFrame:
    """The seed-variance rows of whole-test-set BLEU of the final models, one per family, test
    set and variant (READ columns; none when the table is missing, empty or lacks one)."""
    table = study.seed_variance
    if table.empty or not set(READ) <= set(table):
        return pd.DataFrame(columns=READ)
    table = tables.final(table)
    return table[(table["bucket"].astype(str) == ALL) & (table["metric"] == "bleu")][READ]


def seed_sds(study: Study) -> pd.DataFrame:
    """The variants with a seed SD (two seeds or more) of the families and test sets that hold
    two such variants, sorted by family, test set and label: SD_COLUMNS, `label` the variant's
    (report.labels) and `family_label` the family's ('GRU, 10 epochs')."""
    rows = cell_rows(study)
    rows = rows[pd.to_numeric(rows["seed_sd"], errors="coerce").notna()]
    rows = rows[rows.groupby(["family", "test_set"])["variant"].transform("size") >= 2]
    if rows.empty:
        return pd.DataFrame(columns=SD_COLUMNS)
    runs = tables.runs(study)
    labels = dict(zip(runs["variant"], runs["label"], strict=True))
    rows = rows.assign(
        label=rows["variant"].map(lambda v: labels.get(v, v)),
        family_label=rows["family"].map(run_family_label),
        pooled=rows["pooled"].astype(str) == "True",
    )
    return rows.sort_values(["family_label", "test_set", "label"])[SD_COLUMNS]


def panels(study: Study) -> list[dict]:
    """One dict per family and test set drawn: family_label, test_set, variants, the fewest and
    most seeds, pooled_sd, pooled_df, bartlett_p (NaN: untested) and pooled (Bartlett's test
    did not reject at ALPHA); `rows` its variants (seed_sds' rows as records)."""
    found = []
    for (family, test_set), rows in seed_sds(study).groupby(
        ["family_label", "test_set"], sort=False
    ):
        first = rows.iloc[0]
        found.append(
            {
                "family_label": family,
                "test_set": test_set,
                "variants": len(rows),
                "seeds": (int(rows["seeds"].min()), int(rows["seeds"].max())),
                "pooled_sd": float(first["pooled_sd"]),
                "pooled_df": int(first["pooled_df"]),
                "bartlett_p": float(first["bartlett_p"]),
                "tested": not math.isnan(float(first["bartlett_p"])),
                "pooled": bool(first["pooled"]),
                "rows": rows.to_dict("records"),
            }
        )
    return found


def section(study: Study) -> dict:
    """The appendix's facts: the panels, those where the test rejected pooling and those where
    it could not be made (pooled untested), the level, the most seeds a variant has (0: no
    comparison was made) and whether any whole-set BLEU row was written (`compared`)."""
    drawn, rows = panels(study), cell_rows(study)
    return {
        "compared": not rows.empty,
        "most_seeds": int(pd.to_numeric(rows["seeds"]).max()) if len(rows) else 0,
        "panels": drawn,
        "rejected": [panel for panel in drawn if not panel["pooled"]],
        "untested": [panel for panel in drawn if not panel["tested"]],
        "alpha": round(100 * ALPHA),
    }
