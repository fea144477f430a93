"""Alignment heatmaps of one trained run, from results/analysis/alignment_<run>.csv.

The CSV (long format: layer, head, query_pos, key_pos, query_token, key_token, weight) holds the
cross-attention weights of one example sentence; a GRU has one map, a Transformer's last decoder
layer is drawn averaged over heads and then head by head, all on one grey scale.

python -m softlookup.report.figures.alignment --csv results/analysis/alignment_R.csv --out F.pdf
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from . import style

COLUMNS = ["layer", "head", "query_pos", "key_pos", "query_token", "key_token", "weight"]
MAX_HEADS = 4


def maps(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """(title, query x key matrix) of the last layer: the head mean first, then each head."""
    if table.empty or not set(COLUMNS) <= set(table):
        return []
    last = table[table["layer"] == table["layer"].max()]
    heads = sorted(last["head"].unique())
    found = []
    grid = ["query_pos", "key_pos"]
    mean = last.groupby(grid, as_index=False)["weight"].mean()
    found.append(("mean over heads" if len(heads) > 1 else "cross attention", mean))
    if len(heads) > 1:
        for head in heads[:MAX_HEADS]:
            found.append((f"head {head}", last[last["head"] == head][grid + ["weight"]]))
    return found


def labels(table: pd.DataFrame, pos: str, token: str) -> list[str]:
    pieces = table.drop_duplicates(pos).sort_values(pos)
    return [str(t).replace("▁", "") or "_" for t in pieces[token]]


def alignment_figure(table: pd.DataFrame):
    found = maps(table)
    fig, axes = style.subplots(max(1, len(found)), height=3.2)
    if not found:
        style.note(axes[0], "no attention weights for this run")
        return fig
    queries = labels(table, "query_pos", "query_token")
    keys = labels(table, "key_pos", "key_token")
    top = max(float(rows["weight"].max()) for _, rows in found) or 1.0
    for i, (ax, (title, rows)) in enumerate(zip(axes, found)):
        matrix = rows.pivot(index="query_pos", columns="key_pos", values="weight")
        image = ax.imshow(matrix.to_numpy(), cmap=style.CMAP, vmin=0, vmax=top, aspect="auto")
        ax.set_title(title)
        # the pieces once, on the first panel: the heads share its columns and rows
        ax.set_xticks(range(len(keys)), keys if i == 0 else [], rotation=90, fontsize=5)
        ax.set_yticks(range(len(queries)), queries if i == 0 else [], fontsize=5)
        ax.grid(False)
    axes[0].set_xlabel("source piece (key)")
    axes[0].set_ylabel("target piece (query)")
    fig.colorbar(image, ax=axes, shrink=0.8, label="attention weight")
    return fig


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    style.setup()
    table = pd.read_csv(args.csv) if args.csv.exists() else pd.DataFrame()
    fig = alignment_figure(table)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(args.out, format="pdf", bbox_inches="tight")
    print(args.out)


if __name__ == "__main__":
    main()
