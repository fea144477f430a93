"""Effect paths: each D claim's paired effect against the training budget, one panel per claim
(per comparison where a claim has more lines than a panel keeps apart),
this build's point beside the converged references' ladders (zero drawn; 95% intervals). The
paths come from report.facts.convergence (this build's comparisons and the committed references
of `convergence.references`), as the appendix's table does.

python -m softlookup.report.figures.convergence --results results \
    --config results/paper/config.json --out results/figures/convergence.pdf
"""

from __future__ import annotations

import pandas as pd

from ...data.buckets import ALL
from .. import numbers
from ..facts.convergence import STUDY, legend_paths, point_order
from ..study import Study
from . import cli, style

METRIC_LABELS = {"bleu": "B - A (BLEU)", "chrf": "B - A (chrF)", "bleu_share": "B - A (share kept)"}
METRIC_NUMBERS = {"bleu": numbers.bleu, "chrf": numbers.bleu, "bleu_share": numbers.share}
PER_ROW = 2  # panels side by side: room for each panel's legend
LEGEND_CHARS = 48  # a legend line as wide as half the text width holds
MAX_SERIES = 4  # lines a panel holds before its claim is split by comparison


def drawn_claims(paths: pd.DataFrame) -> list[str]:
    """The claims whose path has two budget points or more (a lone point is in the tables)."""
    points = paths.groupby("claim", sort=False).epoch.nunique()
    return list(points[points > 1].index)


def panels(paths: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, rows) per panel: one per drawn claim; a claim with more than MAX_SERIES lines gets
    one panel per comparison, so that its dodged intervals stay apart."""
    drawn = []
    for claim in drawn_claims(paths):
        rows = paths[paths.claim == claim]
        buckets = set(rows.bucket) - {ALL}
        title = f"{claim}, {buckets.pop()} words" if len(buckets) == 1 else claim
        if rows.series.nunique() <= MAX_SERIES:
            drawn.append((title, rows))
        else:
            drawn += [(f"{title}: {pair}", part) for pair, part in rows.groupby("pair", sort=False)]
    return drawn


def draw(paths: pd.DataFrame):
    drawn = panels(paths)
    if not drawn:
        fig, axes = style.subplots(1, height=1.4)
        style.note(axes[0], "no effect to draw: no claim's effect has two budget points")
        return fig
    columns = min(len(drawn), PER_ROW)
    rows_of_panels = -(-len(drawn) // columns)
    fig, parts = style.parts(rows_of_panels, columns, height=2.5 * rows_of_panels)
    for part, (title, rows) in zip(parts, drawn, strict=False):  # a spare part stays empty
        ax = part.subplots()
        styles = style.series_styles(rows.series)
        names, order = sorted(styles), point_order(rows.epoch)  # this panel's budget points
        for name, line in rows.groupby("series"):
            x = style.dodged(line.epoch.map(order.index), names.index(name), len(names))
            line = line.assign(x=x, value=line.delta).sort_values("x")
            ax.errorbar(
                line.x,
                line.value,
                yerr=style.interval_errors(line),
                capsize=2,
                label=name,
                fillstyle="none" if line.study.iloc[0] == STUDY else "full",
                **styles[name],
            )
        ax.axhline(0, **style.REFERENCE_LINE)
        style.categories(ax, order)
        metric = rows.metric.iloc[0]
        ax.set(
            title=title, xlabel="training budget (epochs)", ylabel=METRIC_LABELS.get(metric, metric)
        )
        style.number_axis(ax, METRIC_NUMBERS.get(metric, numbers.bleu))
        style.legend_below(part, ax, wrap=LEGEND_CHARS)
    return fig


def convergence_figure(study: Study):
    """The paths of this build and of the committed references, as the facts give them."""
    return draw(legend_paths(study))


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, convergence_figure, argv)


if __name__ == "__main__":
    main()
