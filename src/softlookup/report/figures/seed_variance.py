"""Why no seed variance is pooled, shown: one panel per family of runs and test set, each
variant's seed SD of whole-test-set BLEU (final models) as a point (report.facts.pooling; panels
of the variants of two seeds or more).

python -m softlookup.report.figures.seed_variance --results results \
    --config results/paper/config.json --runs R ... --out results/figures/seed_variance.pdf
"""

from __future__ import annotations

from .. import numbers
from ..facts import pooling
from ..labels import own_parts, test_set_label
from ..study import Study
from . import cli, style

COLUMNS = 2
POINTS = "a variant's seed SD"


def title(panel: dict) -> str:
    """'GRU, 10 epochs, the 2016 Flickr test set', then its seeds."""
    low, high = panel["seeds"]
    seeds = f"{low} seeds" if low == high else f"{low}-{high} seeds"
    return f"{panel['family_label']}, {test_set_label(panel['test_set'])}\n{seeds} a variant"


def panel_plot(ax, panel: dict, look: dict) -> None:
    """The variants' seed SDs (one series, one x position each, named by what each adds to the
    labels' shared part, which the axis names)."""
    shared, own = own_parts(row["label"] for row in panel["rows"])
    ax.plot(
        range(len(panel["rows"])), [row["seed_sd"] for row in panel["rows"]], label=POINTS, **look
    )
    style.categories(
        ax, [own[row["label"]].replace(", ", ",\n") for row in panel["rows"]], rotation=90
    )
    ax.set(
        title=title(panel),
        xlabel=f"variant of {shared}" if shared else "variant",
        ylabel="seed SD (BLEU)",
    )
    ax.set_ylim(bottom=0)
    style.number_axis(ax, numbers.sd)


def seed_variance_figure(study: Study):
    drawn = pooling.panels(study)
    if not drawn:
        fig, axes = style.subplots(1, height=1.4)
        style.note(
            axes[0],
            "no seed variance to show: no family has two variants of two seeds"
            " or more on a whole test set",
        )
        return fig
    columns = min(COLUMNS, len(drawn))
    rows = -(-len(drawn) // columns)
    fig, axes = style.grid(rows, columns, height=3.0 * rows)
    look = {**style.series_styles([POINTS])[POINTS], "linestyle": "none"}
    for ax, panel in zip(axes, drawn, strict=False):
        panel_plot(ax, panel, look)
    for ax in axes[len(drawn) :]:
        ax.set_visible(False)
    style.legend_below(fig, axes[0], ncol=1)
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, seed_variance_figure, argv)


if __name__ == "__main__":
    main()
