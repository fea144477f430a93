"""The statistical probes in one row of four panels, drawn with seaborn from their CSVs:
(a) the std of q.k against d, unscaled and scaled, with sqrt(d) dashed (B1); (b, c) the share
of saturated rows and the softmax Jacobian norm against d (B2); (d) the token-uniformity
residual against depth for four random stacks (B4).

python -m softlookup.report.figures.probes --results results --out results/figures/probes.pdf
"""

from __future__ import annotations

import numpy as np
import seaborn as sns

from ..facts.back import probe_curves
from ..study import Study
from . import cli, style

PANELS = [  # probe, quantity, x, series, y label, where the legend hides no line (None: the
    # series and styles of panel (a), whose legend serves them)
    ("spread", "std_score", "d", "scaling", "std of q·k", "upper left"),
    ("saturation", "frac_rows_saturated", "d", "scaling", "share of rows saturated", None),
    ("saturation", "mean_softmax_jacobian_norm", "d", "scaling", "softmax Jacobian norm", None),
    ("averaging", "token_uniformity_residual", "depth", "stack", r"$\|X - \bar{x}\|_F / \|X\|_F$",
     "center right"),
]


def probes_figure(study: Study):
    fig, axes = style.grid(1, 4, height=1.9, width_ratios=[1, 1, 1, 1.4])  # (d): its legend
    for ax, letter, (probe, quantity, x, series, ylabel, legend) in zip(axes, "abcd", PANELS, strict=True):
        rows = probe_curves(study, probe, quantity, x)
        if rows.empty:
            style.note(ax, f"no {probe} probe in results/probes")
            continue
        rows[series] = rows[series].astype(str).str.replace("attention", "attn").str.replace("_", " + ")
        sns.lineplot(rows, x=x, y="value", hue=series, style=series, markers=True, ax=ax)
        ax.set(ylabel=ylabel, title=f"({letter})")
        if x == "d":
            dims = np.sort(rows[x].unique())
            if quantity == "std_score":
                ax.plot(dims, np.sqrt(dims), "k--", linewidth=0.8, label=r"$\sqrt{d}$")
                ax.set_yscale("log")
            ax.set(xscale="log", xlabel="d")
            ax.set_xticks(dims[::2], [f"{d:g}" for d in dims[::2]])  # every other: no overlap
        else:
            ax.set(yscale="log", xlabel="depth (layers)")
        if legend:
            ax.legend(frameon=False, fontsize=5, handlelength=1.5, loc=legend)
        else:
            ax.get_legend().remove()
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, probes_figure, argv)


if __name__ == "__main__":
    main()
