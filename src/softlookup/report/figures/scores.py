"""Figures of the translation scores: BLEU by source length, and BLEU along a sweep family.

bleu_by_length.pdf  BLEU per source-length bucket of each base model, 95% intervals (claim D1)
sweep_<family>.pdf  BLEU (left) against the first key of one sweep family (scaling: d_k, one
                    line per scaling; heads), and the trained models' mean largest attention
                    weight of a row (right) where the runs were analysed

python -m softlookup.report.figures.scores --results results --config results/paper/config.json \
    --figure bleu_by_length --out F.pdf
"""

from __future__ import annotations

import pandas as pd

from ..facts import results, sweeps
from ..labels import axis_label
from ..study import Study
from . import cli, style


def bleu_by_length(study: Study):
    table = results.length_table(study)
    test_sets = sorted(table["test_set"].unique()) if not table.empty else [""]
    fig, axes = style.subplots(len(test_sets), height=2.3, sharey=True)
    if table.empty:
        style.note(axes[0], "no per-bucket BLEU in results/tables/scores.csv")
        return fig
    order = results.buckets(table["bucket"])
    styles = style.series_styles(table["label"])
    for ax, test_set in zip(axes, test_sets, strict=True):
        for label, rows in table[table["test_set"] == test_set].groupby("label"):
            rows = rows.assign(x=rows["bucket"].map(order.index)).sort_values("x")
            style.errorbar(ax, rows, label, styles[label])
        ax.set_xticks(range(len(order)), order, rotation=45)
        ax.set_title(test_set)
        ax.set_xlabel("source length (words)")
    axes[0].set_ylabel("BLEU (%)")
    fig.tight_layout()
    style.legend_below(fig, axes[-1], ncol=4)  # seven models would hide the long-input panel
    return fig


def sweep_figure(study: Study, name: str):
    family = sweeps.family(study, name)
    table = pd.DataFrame(family["rows"])
    second = family["saturation"]
    fig, axes = style.subplots(2 if second else 1, height=2.2)
    if table.empty:
        style.note(axes[0], f"no runs sweep {name}")
        return fig
    order = sorted(set(table["x"]), key=lambda v: sweeps.x_order(pd.Series([v], name="x"))[0])
    table = table.assign(position=table["x"].map(order.index)).sort_values("position")
    styles = style.series_styles(table["series"])
    for series, rows in table.groupby("series"):
        style.errorbar(axes[0], rows.assign(x=rows["position"]), series, styles[series])
        if second:
            axes[1].plot(
                rows["position"], rows["max_weight"], markersize=4, label=series, **styles[series]
            )
    axes[0].set_ylabel("BLEU (%)")
    if second:
        axes[1].set_ylabel("mean largest attention weight")
        style.min_span(axes[1], table["max_weight"])
    key = family["swept"][0]
    for ax in axes:
        ax.set_xticks(range(len(order)), order)
        ax.set_xlabel(axis_label(key))
    if table["series"].nunique() > 1:
        axes[-1].legend(fontsize="x-small")
    return fig


def draw(study: Study, figure: str):
    if figure == "bleu_by_length":
        return bleu_by_length(study)
    if figure.startswith("sweep_"):
        return sweep_figure(study, figure.removeprefix("sweep_"))
    raise ValueError(f"unknown figure {figure!r}")


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, draw, argv, named=True)


if __name__ == "__main__":
    main()
