"""Alignment heatmaps of the analysed runs, side by side across the text width: the cross
attention of one example sentence (results/analysis/alignment_<run>.csv, long format: layer,
head, query_pos, key_pos, query_token, key_token, weight), a Transformer's last decoder layer
averaged over its heads, all on one grey scale. The runs share the sentence, so the target
pieces label the first panel's rows only.

python -m softlookup.report.figures.alignment --results results --config results/paper/config.json \
    --runs R1 R2 --out results/figures/alignment.pdf
"""

from __future__ import annotations

import pandas as pd

from ..facts import results
from ..study import Study
from . import cli, style

COLUMNS = ["layer", "head", "query_pos", "key_pos", "query_token", "key_token", "weight"]
PER_ROW = 2  # panels side by side: each half the text width, a source piece a label apart
PIECE = 11 / 72  # inches a target piece takes on the y axis: labels at 7 pt do not touch
LABELS = 1.3  # inches a row of panels needs besides its pieces (title, source pieces, label)


def matrix(table: pd.DataFrame) -> pd.DataFrame:
    """query x key weights of the last layer, averaged over its heads."""
    last = table[table["layer"] == table["layer"].max()]
    mean = last.groupby(["query_pos", "key_pos"], as_index=False)["weight"].mean()
    return mean.pivot(index="query_pos", columns="key_pos", values="weight")


def labels(table: pd.DataFrame, pos: str, token: str) -> list[str]:
    pieces = table.drop_duplicates(pos).sort_values(pos)
    return [str(t).replace("▁", "") or "_" for t in pieces[token]]


def alignment_figure(study: Study):
    drawn = [
        (run, run["table"])
        for run in results.alignment_runs(study)
        if set(COLUMNS) <= set(run["table"])
    ]
    if not drawn:
        fig, axes = style.subplots(1, height=1.6)
        style.note(axes[0], "no attention weights for the analysed runs")
        return fig
    columns = min(PER_ROW, len(drawn))
    rows = -(-len(drawn) // columns)
    maps = [matrix(table) for _, table in drawn]
    pieces = max(m.shape[0] for m in maps)
    fig, axes = style.grid(rows, columns, height=rows * (LABELS + PIECE * pieces))
    top = max(float(m.max().max()) for m in maps) or 1.0
    for i, (ax, (run, table), weights) in enumerate(zip(axes, drawn, maps, strict=False)):
        image = ax.imshow(weights.to_numpy(), cmap=style.CMAP, vmin=0, vmax=top, aspect="auto")
        ax.set_title(run["label"])
        keys = labels(table, "key_pos", "key_token")
        ax.set_xticks(range(len(keys)), keys, rotation=90)
        queries = labels(table, "query_pos", "query_token") if i % columns == 0 else []
        ax.set_yticks(range(weights.shape[0]), queries or [""] * weights.shape[0])
        ax.grid(False)
        ax.set_xlabel("source piece (key)")
    for ax in axes[len(drawn) :]:
        ax.set_visible(False)
    axes[0].set_ylabel("target piece (query)")
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, alignment_figure, argv)


if __name__ == "__main__":
    main()
