"""Figures of the translation scores: BLEU by source length, and BLEU along a sweep family.

bleu_by_length.pdf  BLEU per source-length bucket of each base model, 95% intervals (claim D1):
                    one row of panels per test set, one column per architecture (at most six
                    models a panel), each panel's buckets those its test set fills
sweep_<family>.pdf  BLEU (left) against the first key of one sweep family (scaling: d_k, one
                    line per scaling; heads), and the trained models' mean largest attention
                    weight of a row (right) where the runs were analysed

python -m softlookup.report.figures.scores --results results --config results/paper/config.json \
    --figure bleu_by_length --out F.pdf
"""

from __future__ import annotations

import pandas as pd

from .. import numbers
from ..facts import results, sweeps
from ..labels import ARCHITECTURES, axis_label, test_set_label
from ..study import Study
from . import cli, style


def bucket_panel(ax, table: pd.DataFrame, styles: dict) -> None:
    """BLEU per source-length bucket, one line per label of `table` (label, bucket, value,
    ci_low, ci_high); the x axis holds the buckets this table fills, shortest first."""
    order = results.buckets(table["bucket"])
    labels = sorted(table["label"].unique())
    for i, label in enumerate(labels):
        rows = table[table["label"] == label]
        x = rows["bucket"].map(order.index)
        rows = rows.assign(x=style.dodged(x, i, len(labels))).sort_values("x")
        style.errorbar(ax, rows, label, styles[label])
    style.categories(ax, order, rotation=45)
    ax.set_xlabel("source length (words)")
    style.number_axis(ax, numbers.bleu)


def bleu_by_length(study: Study):
    table = results.length_table(study)
    if table.empty:
        fig, axes = style.subplots(1, height=1.6)
        style.note(axes[0], "no per-bucket BLEU in results/tables/scores.csv")
        return fig
    test_sets = sorted(table["test_set"].unique())
    groups = sorted(table["arch"].astype(str).unique())
    fig, columns = style.parts(1, len(groups), height=0.6 + 1.9 * len(test_sets))
    top = table["ci_high"].max()
    for column, group in zip(columns, groups, strict=True):
        models = table[table["arch"].astype(str) == group]
        styles = style.series_styles(models["label"])
        axes = column.subplots(len(test_sets), 1, squeeze=False)[:, 0]
        for ax, test_set in zip(axes, test_sets, strict=True):
            bucket_panel(ax, models[models["test_set"] == test_set], styles)
            ax.set(
                title=f"{ARCHITECTURES.get(group, group)}, {test_set_label(test_set)}",
                ylabel="BLEU (%)",
                ylim=(0, 1.05 * top),
            )
        style.legend_below(column, axes[0], ncol=2 if len(styles) > 3 else 1)
    return fig


def sweep_figure(study: Study, name: str):
    family = sweeps.family(study, name)
    table = pd.DataFrame(family["rows"])
    second = family["saturation"]
    fig, axes = style.subplots(2 if second else 1, height=2.3)
    if table.empty:
        style.note(axes[0], f"no runs sweep {name}")
        return fig
    order = sorted(set(table["x"]), key=lambda v: sweeps.x_order(pd.Series([v], name="x"))[0])
    styles = style.series_styles(table["series"])
    names = sorted(styles)
    for series, rows in table.groupby("series"):
        x = style.dodged(rows["x"].map(order.index), names.index(str(series)), len(names))
        rows = rows.assign(x=x).sort_values("x")
        style.errorbar(axes[0], rows, series, styles[str(series)])
        if second:
            axes[1].plot(rows["x"], rows["max_weight"], label=series, **styles[str(series)])
    axes[0].set_ylabel("BLEU (%)")
    style.number_axis(axes[0], numbers.bleu)
    if second:
        axes[1].set_ylabel("mean largest weight")
        style.min_span(axes[1], table["max_weight"])
        style.number_axis(axes[1], numbers.share)
    key = family["swept"][0]
    for ax in axes:
        style.categories(ax, order)
        ax.set_xlabel(axis_label(key))
    if len(names) > 1:
        style.legend_below(fig, axes[0], ncol=min(len(names), 3))
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
