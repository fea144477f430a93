"""Effect paths: each D claim's paired effect against the training budget, one panel per claim,
this build's point beside the converged references' ladders (zero drawn; 95% intervals).

python -m softlookup.report.figures.convergence --config results/paper/config.json
    --comparisons results/tables/comparisons.csv --references results/reference/converged_scale
    --out results/figures/convergence.pdf
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib.pyplot as plt
import pandas as pd

from ..facts.convergence import STUDY, effect_paths, fixed_budget, point_order, read_reference
from . import style

METRIC_LABELS = {"bleu": "B - A (BLEU)", "chrf": "B - A (chrF)",
                 "bleu_share": "B - A (share kept)"}  # fmt: skip
PER_ROW = 2  # panels side by side: room for each panel's legend


def effect_label(row) -> str:
    """`d3_scaled_vs_unscaled_dk128` -> `scaled vs unscaled dk128` (and its bucket if not all)."""
    name = row.comparison.split("_", 1)[-1].replace("_", " ")
    return name if row.bucket == "all" else f"{name}, {row.bucket} words"


def with_references(paths: pd.DataFrame) -> pd.DataFrame:
    """The claims some reference trains, once one does: a claim with this build's point alone
    is a single point, already in the tables (all claims while no reference exists)."""
    studies = paths.groupby("claim").study.nunique()
    return paths[paths.claim.isin(studies[studies > 1].index)] if (studies > 1).any() else paths


def draw(paths: pd.DataFrame):
    paths = with_references(paths)
    claims = list(dict.fromkeys(paths.claim))
    columns = min(len(claims), PER_ROW) or 1
    rows_of_panels = -(-max(len(claims), 1) // columns)
    fig, grid = plt.subplots(rows_of_panels, columns, squeeze=False,
                             figsize=style.figsize(columns, 1.7 * rows_of_panels))  # fmt: skip
    axes = list(grid.flat)
    for spare in axes[len(claims):]:
        spare.set_visible(False)
    if paths.empty:
        style.note(axes[0], "no effect to draw: convergence.effects or the tables are empty")
        return fig
    order = point_order(paths.epoch)
    for ax, claim in zip(axes, claims, strict=False):  # spare panels stay hidden
        rows = paths[paths.claim == claim].assign(effect=lambda t: t.apply(effect_label, axis=1))
        series = rows.effect + " (" + rows.study + ")"
        styles = style.series_styles(series)
        for name, line in rows.assign(series=series).groupby("series"):
            line = line.assign(x=line.epoch.map(order.index)).sort_values("x")
            ax.errorbar(line.x, line.delta, yerr=style.interval_errors(
                line.rename(columns={"delta": "value"})), capsize=2, markersize=3, label=name,
                fillstyle="none" if line.study.iloc[0] == STUDY else "full", **styles[name])
        ax.axhline(0, color="0.3", linewidth=0.6)
        ax.set_xticks(range(len(order)), order)
        ax.set_title(claim)
        ax.set_xlabel("training budget (epochs)")
        ax.set_ylabel(METRIC_LABELS.get(rows.metric.iloc[0], rows.metric.iloc[0]))
    fig.tight_layout()
    for ax in axes[:len(claims)]:
        style.legend_over_data(ax)
    return fig


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", required=True, type=Path, help="the build's merged config")
    parser.add_argument("--comparisons", required=True, type=Path)
    parser.add_argument("--references", nargs="*", default=[], type=Path)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    config = json.loads(args.config.read_text())
    comparisons = pd.read_csv(args.comparisons, dtype={"epoch": str})
    references = [read_reference(folder) for folder in args.references]
    paths = effect_paths(comparisons, references, config["convergence"]["effects"],
                         epochs=fixed_budget(config))  # fmt: skip
    style.setup()
    print(style.save(draw(paths), args.out))


if __name__ == "__main__":
    main()
