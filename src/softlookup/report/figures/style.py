"""The one look of every figure: seaborn, vector PDF, readable in greyscale, labelled axes.

Every figure module calls `setup()` once, takes its colours, markers and line styles from
`series_styles()` (so lines differ by marker and dash as well as by colour, and survive a greyscale
print), sizes figures with `figsize()` and writes them with `save()`.
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt
import seaborn as sns

WIDTH = 6.3  # inches: the text width of the paper (a4, 2.5 cm margins)
HEIGHT = 2.6
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*"]
DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1)), (0, (3, 1, 1, 1, 1, 1))]
CMAP = "Greys"  # heatmaps: white = no weight, black = all of it
LEAST_DATA_SHARE = 0.4  # of an axes' height left to the data under a legend over it


def setup() -> None:
    """Seaborn's paper context on a white grid, fonts embedded as Type 42 (searchable PDF)."""
    sns.set_theme(
        style="whitegrid", context="paper", font_scale=0.9, palette=sns.color_palette("cividis", 4)
    )  # dark to light: greyscale-safe
    matplotlib.rcParams.update(
        {
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "savefig.dpi": 300,
            "legend.frameon": False,
            "axes.titlesize": "medium",
        }
    )


def palette(n: int) -> list:
    """n colours that also differ in lightness (cividis runs dark to light)."""
    return sns.color_palette("cividis", max(n, 2))[: max(n, 1)] if n > 1 else ["0.15"]


def series_styles(names) -> dict[str, dict]:
    """name -> matplotlib keywords (colour, marker, line style), stable for the sorted names."""
    names = sorted(dict.fromkeys(str(n) for n in names))
    colours = palette(len(names))
    return {
        name: {
            "color": colours[i],
            "marker": MARKERS[i % len(MARKERS)],
            "linestyle": DASHES[i % len(DASHES)],
        }
        for i, name in enumerate(names)
    }


def figsize(panels: int = 1, height: float = HEIGHT, max_width: float = WIDTH) -> tuple:
    return (min(max_width, 3.2 * panels), height)


def subplots(panels: int = 1, height: float = HEIGHT, **kwargs):
    fig, axes = plt.subplots(1, panels, figsize=figsize(panels, height), squeeze=False, **kwargs)
    return fig, list(axes[0])


def grid(rows: int, columns: int, height: float, **kwargs):
    """Small multiples: rows x columns panels across the text width, axes in reading order."""
    fig, axes = plt.subplots(rows, columns, figsize=(WIDTH, height), squeeze=False, **kwargs)
    return fig, list(axes.flat)


def errorbar(ax, rows, label: str, kwargs: dict) -> None:
    """One series of rows (x, value, ci_low, ci_high) with its 95% intervals as error bars."""
    ax.errorbar(
        rows["x"],
        rows["value"],
        yerr=[rows["value"] - rows["ci_low"], rows["ci_high"] - rows["value"]],
        capsize=2,
        markersize=4,
        label=label,
        **kwargs,
    )


def note(ax, text: str) -> None:
    """A panel with no data: say so inside the axes instead of leaving it blank."""
    ax.text(
        0.5,
        0.5,
        text,
        ha="center",
        va="center",
        wrap=True,
        transform=ax.transAxes,
        fontsize="small",
        color="0.3",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def legend_below(fig, ax, ncol: int, fontsize="x-small") -> None:
    """The legend of `ax` under all panels of `fig`, where it hides no line."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(
        handles,
        labels,
        loc="upper center",
        bbox_to_anchor=(0.5, 0.0),
        ncol=ncol,
        fontsize=fontsize,
        frameon=False,
    )


def legend_over_data(ax, fontsize=5) -> None:
    """The legend at the top of `ax`, in a band the y axis adds above the data, where it hides
    no line (call after the layout is final: the band is measured in the axes' own height)."""
    legend = ax.legend(loc="upper center", fontsize=fontsize, frameon=False)
    ax.figure.canvas.draw()
    share = legend.get_window_extent().transformed(ax.transAxes.inverted()).height
    low, high = ax.get_ylim()
    ax.set_ylim(low, low + (high - low) / max(1 - share, LEAST_DATA_SHARE))


def min_span(ax, values, relative: float = 0.05) -> None:
    """A linear y axis at least `relative` x |mean| tall, centred on the data: a difference of a
    few thousandths must not fill the panel as if it were large."""
    values = [float(v) for v in values if not math.isnan(float(v))]
    if not values:
        return
    low, high = min(values), max(values)
    centre, span = (low + high) / 2, relative * abs(sum(values) / len(values))
    if high - low < span:
        ax.set_ylim(centre - span / 2, centre + span / 2)


def interval_errors(rows) -> list:
    """matplotlib's yerr of rows with value, ci_low, ci_high. sacrebleu rounds its interval to
    the printed digits, so a BLEU of 0.00001 can sit just above an interval of [0.0, 0.0]: such
    an error bar is drawn with length 0, never negative."""
    return [(rows["value"] - rows["ci_low"]).clip(lower=0),
            (rows["ci_high"] - rows["value"]).clip(lower=0)]  # fmt: skip


def log_axis(ax, values, axis: str = "x") -> None:
    """A log axis labelled at the measured values in short numbers (no crowded minor labels)."""
    from matplotlib.ticker import NullFormatter

    ticks = sorted({float(v) for v in values if v and v > 0})
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_minor_formatter(NullFormatter())
    if ticks:
        getattr(ax, f"set_{axis}ticks")(ticks, [tick_label(t) for t in ticks])


def tick_label(value: float) -> str:
    """1024 -> '1k', 16384 -> '16k' (powers of two as sequence lengths are written); else '%g'."""
    if value >= 1024 and value % 1024 == 0:
        return f"{value / 1024:g}k"
    return f"{value:g}"


def save(fig, out: Path) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    if fig.get_layout_engine() is None:  # a figure with a colorbar lays itself out
        fig.tight_layout()
    fig.savefig(out, format="pdf", bbox_inches="tight")
    plt.close(fig)
    return out
