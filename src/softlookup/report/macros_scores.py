"""Macros and tables from the data manifest, the runs and the scores table.

data_macros: pair counts per split, training-source length; results_table: BLEU and chrF of
every variant (seeds pooled); budget_table: what each run cost (epochs, steps, tokens, seconds).
"""

from __future__ import annotations

import pandas as pd

from .latex import escape, interval, macro_name, missing, number, tabular
from .study import Study, metric_rows, pooled, run_facts


def data_macros(manifest: dict) -> dict[str, str]:
    """Pairs<Split> per split; TrainSourceWordsMean/Max; an empty manifest gives none."""
    splits = manifest.get("splits", {})
    macros = {
        macro_name("pairs", split): f"{info.get('pairs', 0):,}" for split, info in splits.items()
    }
    words = splits.get("train", {}).get("source_words", {})
    if words:
        macros["TrainSourceWordsMean"] = number(words.get("mean", 0), 1)
        macros["TrainSourceWordsMax"] = f"{words.get('max', 0):,}"
    return macros


def cell(value, digits: int = 0) -> str:
    return "--" if missing(value) else number(value, digits)


def results_table(study: Study, test_set: str) -> str:
    """One row per variant: BLEU [95%], chrF, seeds, status; '' when nothing was scored."""
    bleu = pooled(metric_rows(study, test_set), ["variant"])
    if bleu.empty:
        return ""
    chrf = pooled(metric_rows(study, test_set, metric="chrf"), ["variant"])
    chrf = chrf.set_index("variant")["value"] if not chrf.empty else pd.Series(dtype=float)
    facts = run_facts(study)
    status = (
        facts.groupby("variant")["status"].agg(lambda s: ", ".join(sorted(set(s))))
        if not facts.empty
        else pd.Series(dtype=str)
    )
    rows = []
    for _, row in bleu.sort_values("variant").iterrows():
        state = status.get(row["variant"], "ok")
        rows.append(
            [
                escape(row["variant"]),
                interval(
                    row["value"], row["ci_low"], row["ci_high"], 1 if abs(row["value"]) >= 1 else 2
                )
                if state == "ok"
                else rf"\emph{{{escape(state)}}}",
                cell(chrf.get(row["variant"]), 1),
                str(int(row["seeds"])),
            ]
        )
    return tabular(["variant", "BLEU [95\\% interval]", "chrF", "seeds"], rows, "lrrr")


def budget_table(study: Study) -> str:
    """One row per run: parameters, epochs, optimiser steps, target tokens, wall time, status."""
    facts = run_facts(study)
    if facts.empty:
        return ""
    rows = [
        [
            escape(row["run"]),
            cell(row.get("parameters")),
            cell(row.get("epochs")),
            cell(row.get("steps")),
            cell(row.get("tokens")),
            cell(row.get("train_seconds"), 1),
            cell(row.get("tokens_per_s")),
            escape(row.get("status", "")),
        ]
        for _, row in facts.sort_values("run").iterrows()
    ]
    return tabular(
        ["run", "parameters", "epochs", "steps", "target tokens", "train s", "tokens/s", "status"],
        rows,
        "lrrrrrrl",
    )
