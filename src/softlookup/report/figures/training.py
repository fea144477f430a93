"""Training curves as small multiples: the validation loss per epoch of every variant (the mean
over its seeds), one panel per family of variants with its base model, the legend under each
panel naming its lines by what they change (the base model's name said once, in the title).
Runs of a few epochs (facts.training.FEW_EPOCHS) are drawn as one row a variant, its loss after
each epoch a marker on it: a line of two points shows no curve.

python -m softlookup.report.figures.training --results results --config results/paper/config.json \
    --out results/figures/training.pdf
"""

from __future__ import annotations

import math

from ..facts import training
from ..labels import own_parts
from ..study import Study
from . import cli, style

COLUMNS = 2
SHORT_NAME = 20  # characters: line names up to this long fit two to a legend row
SHORT_TITLE = 36  # characters: a panel title up to this long fits on one line of half the width


def training_figure(study: Study):
    table = training.curves(study)
    panels = training.panels(study)
    if table.empty or not panels:
        fig, axes = style.subplots(1, height=1.6)
        style.note(axes[0], "no run wrote a training log")
        return fig
    columns = min(COLUMNS, len(panels))
    rows = math.ceil(len(panels) / columns)
    fig, parts = style.parts(rows, columns, height=2.15 * rows)
    valid = table[table["split"] == "valid"]
    mean = valid.groupby(["variant", "label", "epoch"], as_index=False)["loss"].mean()
    draw = epoch_rows if training.few_epochs(table) else curves
    for part, (title, variants) in zip(parts, panels, strict=False):
        ax = part.subplots()
        shown = mean[mean["variant"].isin(variants)]
        base, names = own_parts(shown["label"].unique())
        draw(part, ax, shown, names)
        ax.set_title(panel_title(title, base))
    return fig


def panel_title(title: str, base: str) -> str:
    """The panel's title with the part of the label its lines share (unless the title says it),
    on a second line when the two would be wider than half the figure."""
    if not base or title.endswith(base):
        return title
    return f"{title}:{' ' if len(title) + len(base) <= SHORT_TITLE else chr(10)}{base}"


def curves(part, ax, shown, names: dict[str, str]) -> None:
    """One line per variant: its validation loss against the epoch."""
    styles = style.series_styles(shown["label"])
    for i, (label, curve) in enumerate(shown.groupby("label")):
        ax.plot(
            style.dodged(curve["epoch"], i, len(styles)),
            curve["loss"],
            label=names[label],
            **styles[label],
        )
    ax.set(xlabel="epoch", xticks=sorted(shown["epoch"].unique()), ylabel="validation loss (nats)")
    columns = 2 if max(len(name) for name in names.values()) <= SHORT_NAME else 1
    style.legend_below(part, ax, ncol=columns)


def epoch_rows(part, ax, shown, names: dict[str, str]) -> None:
    """One row per variant (named on the y axis), a marker for its validation loss after each
    epoch (one series per epoch) on a thin line from the first to the last."""
    order = sorted(names, key=lambda label: (names[label] != "base model", names[label]))
    row = {label: i for i, label in enumerate(order)}
    for label, losses in shown.groupby("label"):
        ax.plot(losses["loss"], [row[label]] * len(losses), **style.REFERENCE_LINE)
    epochs = sorted(shown["epoch"].unique())
    styles = style.series_styles(f"epoch {epoch}" for epoch in epochs)
    for epoch in epochs:
        at = shown[shown["epoch"] == epoch]
        name = f"epoch {epoch}"
        look = {k: v for k, v in styles[name].items() if k != "linestyle"}
        ax.plot(at["loss"], at["label"].map(row), linestyle="none", label=name, **look)
    ax.set_yticks(range(len(order)), [names[label] for label in order])
    ax.set_ylim(len(order) - 0.5, -0.5)  # the first row at the top
    ax.margins(x=0.08)  # a marker at either end of the axis drawn whole
    ax.set_xlabel("validation loss (nats)")
    style.legend_below(part, ax, ncol=len(epochs))  # at most FEW_EPOCHS short names: one row


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, training_figure, argv)


if __name__ == "__main__":
    main()
