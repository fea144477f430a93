"""The statistical probes in one row of four panels, drawn with seaborn from their CSVs:
(a) the std of q.k against d, unscaled and scaled, with sqrt(d) dashed (B1); (b, c) the share
of saturated rows and the softmax Jacobian norm against d (B2); (d) the token-uniformity
residual against depth for four random stacks (B4).

python -m softlookup.report.figures.probes --results results --out results/figures/probes.pdf
"""

from __future__ import annotations

import numpy as np

from ..facts.back import probe_curves
from ..study import Study
from . import cli, style

PANELS = [  # probe, quantity, x, series, y label, whether its legend is drawn ((b) and (c) share
    # the series and looks of panel (a), whose legend names them)
    ("spread", "std_score", "d", "scaling", "std of q·k", True),
    ("saturation", "frac_rows_saturated", "d", "scaling", "share of rows saturated", False),
    ("saturation", "mean_softmax_jacobian_norm", "d", "scaling", "softmax Jacobian norm", False),
    (
        "averaging",
        "token_uniformity_residual",
        "depth",
        "stack",
        r"$\|X - \bar{x}\|_F / \|X\|_F$",
        True,
    ),
]
STACKS = {
    "attention": "attention",
    "attention_relu": "attention + ReLU",
    "attention_residual": "attention + residual",
    "linear": "linear",
}


def probes_figure(study: Study):
    fig, parts = style.parts(2, 2, height=4.6)
    for part, letter, (probe, quantity, x, series, ylabel, legend) in zip(
        parts, "abcd", PANELS, strict=True
    ):
        ax = part.subplots()
        rows = probe_curves(study, probe, quantity, x)
        if rows.empty:
            style.note(ax, f"no {probe} probe in results/probes")
            continue
        rows[series] = rows[series].astype(str).map(lambda name: STACKS.get(name, name))
        styles = style.series_styles(rows[series])
        for i, (name, line) in enumerate(rows.groupby(series)):
            line = line.sort_values(x)
            where = line[x] if x == "d" else style.dodged(line[x], i, len(styles))
            ax.plot(where, line["value"], label=name, fillstyle="none", **styles[name])
        ax.set(ylabel=ylabel, title=f"({letter})")
        if x == "d":
            dims = np.sort(rows[x].unique())
            if quantity == "std_score":
                ax.plot(
                    dims,
                    np.sqrt(dims),
                    label=r"$\sqrt{d}$",
                    **style.REFERENCE_LINE,
                    linestyle=(0, (2, 2)),
                )
                ax.set_yscale("log")
            style.log_axis(ax, dims)
            ax.set_xlabel("d (vector length)")
        else:
            ax.set(yscale="log", xlabel="depth (layers)")
            ax.set_xticks(range(0, int(rows[x].max()) + 1, 2))
        if legend:
            style.legend_below(part, ax, ncol=2)
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, probes_figure, argv)


if __name__ == "__main__":
    main()
