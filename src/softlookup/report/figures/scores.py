"""Figures of the paper, each computed from the tidy scores table only."""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd
import seaborn as sns


def bucket_order(labels) -> list[str]:
    """'1-10' < '11-15' < ... < '>60', by lower bound."""

    def lower(label: str) -> int:
        return int(label[1:]) + 1 if label.startswith(">") else int(label.split("-")[0])

    return sorted(set(labels), key=lower)


def base_bleu_by_bucket(scores: pd.DataFrame) -> pd.DataFrame:
    """BLEU per (model, test set, length bucket) of the base runs, averaged over seeds."""
    rows = scores[
        (scores.metric == "bleu")
        & (scores.bucket != "all")
        & scores.sweep.fillna("").eq("")
        & (scores.status == "ok")
    ]
    return rows.groupby(["model", "test_set", "bucket"], as_index=False)[
        ["value", "ci_low", "ci_high"]
    ].mean()


def bleu_by_length(scores: pd.DataFrame) -> plt.Figure:
    """BLEU against source length, one line per model, one panel per test set.

    Error bars are sacrebleu's 95% bootstrap intervals (averaged over seeds).
    """
    table = base_bleu_by_bucket(scores)
    order = bucket_order(table.bucket)
    test_sets = sorted(table.test_set.unique())
    palette = dict(zip(sorted(table.model.unique()), sns.color_palette("colorblind")))
    fig, axes = plt.subplots(
        1, len(test_sets), figsize=(3.4 * len(test_sets), 3.0), squeeze=False, sharey=True
    )
    for ax, test_set in zip(axes[0], test_sets):
        for model, rows in table[table.test_set == test_set].groupby("model"):
            rows = rows.set_index("bucket").reindex([b for b in order if b in set(rows.bucket)])
            x = [order.index(b) for b in rows.index]
            ax.errorbar(
                x,
                rows.value,
                yerr=[rows.value - rows.ci_low, rows.ci_high - rows.value],
                marker="o",
                capsize=3,
                label=model,
                color=palette[model],
            )
        ax.set_xticks(range(len(order)), order, rotation=45)
        ax.set_title(test_set, fontsize=9)
        ax.set_xlabel("source words")
    axes[0][0].set_ylabel("BLEU")
    axes[0][-1].legend(fontsize=7)
    fig.tight_layout()
    return fig


FIGURES = {"bleu_by_length": bleu_by_length}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scores", required=True, type=Path)
    parser.add_argument("--figure", required=True, choices=sorted(FIGURES))
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    sns.set_theme(style="whitegrid", context="paper")
    fig = FIGURES[args.figure](pd.read_csv(args.scores))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, bbox_inches="tight")


if __name__ == "__main__":
    main()
