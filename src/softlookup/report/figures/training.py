"""Training curves as small multiples: the validation loss per epoch of every variant (the mean
over its seeds), one panel per family of variants with its base model, the legend inside.

python -m softlookup.report.figures.training --results results --config results/paper/config.json \
    --out results/figures/training.pdf
"""

from __future__ import annotations

import math

from ..facts import training
from ..study import Study
from . import cli, style

COLUMNS = 3


def training_figure(study: Study):
    table = training.curves(study)
    panels = training.panels(study)
    if table.empty or not panels:
        fig, axes = style.subplots(1)
        style.note(axes[0], "no run wrote a training log")
        return fig
    rows = math.ceil(len(panels) / COLUMNS)
    fig, axes = style.grid(rows, min(COLUMNS, len(panels)), height=2.2 * rows)
    valid = table[table["split"] == "valid"]
    mean = valid.groupby(["variant", "label", "epoch"], as_index=False)["loss"].mean()
    for ax, (title, variants) in zip(axes, panels, strict=False):
        shown = mean[mean["variant"].isin(variants)]
        styles = style.series_styles(shown["label"])
        for label, curve in shown.groupby("label"):
            ax.plot(curve["epoch"], curve["loss"], markersize=3, label=label, **styles[label])
        ax.set(title=title, xlabel="epoch", xticks=sorted(shown["epoch"].unique()))
        ax.legend(fontsize=5, loc="upper right")
    for ax in axes[len(panels) :]:
        ax.set_visible(False)
    for ax in axes[::COLUMNS]:
        ax.set_ylabel("validation loss (nats)")
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, training_figure, argv)


if __name__ == "__main__":
    main()
