"""Facts of the appendix on seed variance (results/tables/seed_variance.csv, evaluate.compare):
per family of runs and test set, each variant's seed SD of whole-test-set BLEU of the final
models: the evidence that variants differ in it, so that no comparison pools it across them.
The appendix's figure draws these and its text words them."""

from __future__ import annotations

import pandas as pd

from ...data.buckets import ALL
from ...tables import SEED_VARIANCE_COLUMNS
from ..labels import run_family_label
from ..study import Study
from . import tables

SD_COLUMNS = ["family", "family_label", "test_set", "variant", "label", "seeds", "seed_sd"]


def cell_rows(study: Study) -> pd.DataFrame:
    """The seed-variance rows of whole-test-set BLEU of the final models, one per family, test
    set and variant (none when the table is missing, empty or lacks a column)."""
    table = study.seed_variance
    if table.empty or not set(SEED_VARIANCE_COLUMNS) <= set(table):
        return pd.DataFrame(columns=SEED_VARIANCE_COLUMNS)
    table = tables.final(table)
    rows = table[(table["bucket"].astype(str) == ALL) & (table["metric"] == "bleu")]
    return rows.drop_duplicates(["family", "test_set", "variant"])


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
    )
    return rows.sort_values(["family_label", "test_set", "label"])[SD_COLUMNS]


def panels(study: Study) -> list[dict]:
    """One dict per family and test set drawn: family_label, test_set, variants, the fewest and
    most seeds, the smallest and largest seed SD; `rows` its variants (seed_sds' records)."""
    found = []
    for (family, test_set), rows in seed_sds(study).groupby(
        ["family_label", "test_set"], sort=False
    ):
        sds = rows["seed_sd"].astype(float)
        found.append(
            {
                "family_label": family,
                "test_set": test_set,
                "variants": len(rows),
                "seeds": (int(rows["seeds"].min()), int(rows["seeds"].max())),
                "smallest_sd": float(sds.min()),
                "largest_sd": float(sds.max()),
                "rows": rows.to_dict("records"),
            }
        )
    return found


def section(study: Study) -> dict:
    """The appendix's facts: the panels, the most seeds a variant has (0: no comparison was
    made), whether any whole-set BLEU row was written (`compared`), and the smallest and largest
    seed SD over every panel."""
    drawn, rows = panels(study), cell_rows(study)
    return {
        "compared": not rows.empty,
        "most_seeds": int(pd.to_numeric(rows["seeds"]).max()) if len(rows) else 0,
        "panels": drawn,
        "smallest_sd": min((panel["smallest_sd"] for panel in drawn), default=None),
        "largest_sd": max((panel["largest_sd"] for panel in drawn), default=None),
    }
