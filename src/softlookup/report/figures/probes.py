"""Figures of the statistical probes, drawn from their CSVs with seaborn.

spread.pdf: std of q.k against d, unscaled and scaled, with sqrt(d) dashed (B1).
saturation.pdf: share of saturated rows and the softmax Jacobian norm against d (B2).
collapse.pdf: token-uniformity residual against depth for the four stacks (B4).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns

from . import style

FIGURES = {"spread": "spread", "saturation": "saturation", "collapse": "averaging"}  # -> probe


def quantity(frame: pd.DataFrame, name: str, numeric: str) -> pd.DataFrame:
    rows = frame[frame.quantity == name].copy()
    rows[numeric] = pd.to_numeric(rows[numeric])
    return rows


def spread_figure(frame: pd.DataFrame) -> plt.Figure:
    rows = quantity(frame, "std_score", "d")
    fig, ax = plt.subplots(figsize=(4.5, 3.2))
    sns.lineplot(rows, x="d", y="value", hue="scaling", style="scaling", markers=True, ax=ax)
    dims = np.sort(rows.d.unique())
    ax.plot(dims, np.sqrt(dims), "k--", linewidth=0.8, label=r"$\sqrt{d}$")
    ax.set(xscale="log", yscale="log", xlabel="d (vector length)", ylabel="std of the score q·k")
    ax.set_xticks(dims, [f"{d:g}" for d in dims])
    ax.legend(frameon=False)
    return fig


def saturation_figure(frame: pd.DataFrame) -> plt.Figure:
    panels = (
        ("frac_rows_saturated", "rows with largest weight > threshold"),
        ("mean_softmax_jacobian_norm", "softmax Jacobian norm (mean)"),
    )
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for ax, (name, label) in zip(axes, panels):
        rows = quantity(frame, name, "d")
        sns.lineplot(rows, x="d", y="value", hue="scaling", style="scaling", markers=True, ax=ax)
        dims = np.sort(rows.d.unique())
        ax.set(xscale="log", xlabel="d (vector length)", ylabel=label)
        ax.set_xticks(dims, [f"{d:g}" for d in dims])
        ax.legend(frameon=False)
    fig.tight_layout()
    return fig


def collapse_figure(frame: pd.DataFrame) -> plt.Figure:
    rows = quantity(frame, "token_uniformity_residual", "depth")
    fig, ax = plt.subplots(figsize=(5, 3.2))
    sns.lineplot(rows, x="depth", y="value", hue="stack", style="stack", markers=True, ax=ax)
    ax.set(yscale="log", xlabel="depth (layers)", ylabel=r"$\|X - \bar{x}\|_F / \|X\|_F$")
    ax.legend(frameon=False, fontsize="small")
    return fig


DRAW = {"spread": spread_figure, "saturation": saturation_figure, "collapse": collapse_figure}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--probes-dir", type=Path, required=True, help="the probes' CSVs")
    parser.add_argument("--out-dir", type=Path, required=True, help="where <figure>.pdf go")
    args = parser.parse_args(argv)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    style.setup()
    for figure, probe in FIGURES.items():
        path = args.probes_dir / f"{probe}.csv"
        if not path.exists():
            raise FileNotFoundError(f"{path} is needed for {figure}.pdf; run the probe first")
        fig = DRAW[figure](pd.read_csv(path, dtype={"scaling": str, "stack": str}))
        style.save(fig, args.out_dir / f"{figure}.pdf")
        print(f"{figure}.pdf <- {path}")


if __name__ == "__main__":
    main()
