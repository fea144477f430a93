"""Training curves as small multiples: the validation loss per epoch of every variant (the mean
over its seeds), one panel per family of variants with its base model, the legend under each
panel naming its lines by what they change (the base model's name said once, in the title).

python -m softlookup.report.figures.training --results results --config results/paper/config.json \
    --out results/figures/training.pdf
"""

from __future__ import annotations

import math

from ..facts import training
from ..study import Study
from . import cli, style

COLUMNS = 2
SHORT_NAME = 20  # characters: line names up to this long fit two to a legend row


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
    for part, (title, variants) in zip(parts, panels, strict=False):
        ax = part.subplots()
        shown = mean[mean["variant"].isin(variants)]
        base, names = line_names(shown["label"].unique())
        styles = style.series_styles(shown["label"])
        for i, (label, curve) in enumerate(shown.groupby("label")):
            ax.plot(
                style.dodged(curve["epoch"], i, len(styles)),
                curve["loss"],
                label=names[label],
                **styles[label],
            )
        ax.set(
            title=f"{title}: {base}" if base else title,
            xlabel="epoch",
            xticks=sorted(shown["epoch"].unique()),
            ylabel="validation loss (nats)",
        )
        columns = 2 if max(len(name) for name in names.values()) <= SHORT_NAME else 1
        style.legend_below(part, ax, ncol=columns)
    return fig


def line_names(labels) -> tuple[str, dict[str, str]]:
    """(base, {label: name}): when every label is one base model's label or that label and what
    a sweep changes ("Transformer, 1+1 layers, 8 heads"), each line is named by the change alone
    and the base by "base model"; otherwise ("", the labels as they are)."""
    labels = sorted(labels, key=len)
    base = labels[0] if labels else ""
    if len(labels) < 2 or not all(label.startswith(f"{base}, ") for label in labels[1:]):
        return "", {label: label for label in labels}
    return base, {base: "base model"} | {label: label[len(base) + 2 :] for label in labels[1:]}


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, training_figure, argv)


if __name__ == "__main__":
    main()
