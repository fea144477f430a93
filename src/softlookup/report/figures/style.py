"""The one look of every figure: drawn at the width the paper prints it, every text at least
MIN_FONT points, legends outside the data, at most MAX_SERIES series a panel, each with its own
colour, marker and dash (so lines survive a greyscale print), vector PDF.

Every figure module calls `setup()` once, takes its series' looks from `series_styles()`, makes
its figure with `subplots()` or `grid()` (constrained layout, WIDTH wide) and writes it with
`save()`, which keeps that size: the PDF is placed at \\linewidth unscaled, so a point of text
here is a point on paper.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path

import matplotlib

matplotlib.use("agg")
import matplotlib.pyplot as plt
import matplotlib.ticker
import seaborn as sns

# paper/paper.tex: a4paper (210 mm wide), geometry margin=2.5cm -> \textwidth = 160 mm
WIDTH = 160 / 25.4  # inches
HEIGHT = 2.4
FONT = 8  # points: labels and titles
MIN_FONT = 7  # points: tick labels, legends, notes; nothing smaller
MAX_SERIES = 6  # a panel with more lines is split (by the figure, into panels of related lines)
COLOURS = sns.color_palette(
    "colorblind", MAX_SERIES
)  # distinct hues; markers tell them apart in grey
MARKERS = ["o", "s", "^", "D", "v", "P"]
DASHES = ["-", "--", ":", "-.", (0, (5, 1, 1, 1)), (0, (1, 1))]
REFERENCE_LINE = {"color": "0.3", "linewidth": 0.7, "zorder": 1}  # zero, sqrt(d): no marker
CMAP = "Greys"  # heatmaps: white = no weight, black = all of it
DODGE = 0.06  # of the distance between two x positions: series that coincide stay visible


def setup() -> None:
    """Seaborn's white grid at explicit point sizes, fonts embedded as Type 42 (searchable)."""
    sns.set_theme(style="whitegrid", context="paper")
    matplotlib.rcParams.update(
        {
            "font.size": FONT,
            "axes.titlesize": FONT,
            "axes.labelsize": FONT,
            "xtick.labelsize": MIN_FONT,
            "ytick.labelsize": MIN_FONT,
            "legend.fontsize": MIN_FONT,
            "legend.title_fontsize": MIN_FONT,
            "legend.frameon": False,
            "lines.markersize": 4,
            "lines.linewidth": 1.1,
            "pdf.fonttype": 42,
            "ps.fonttype": 42,
            "savefig.dpi": 300,
        }
    )


def series_styles(names) -> dict[str, dict]:
    """name -> matplotlib keywords (colour, marker, line style), stable for the sorted names and
    distinct for each; more than MAX_SERIES names is an error (split the panel)."""
    names = sorted(dict.fromkeys(str(n) for n in names))
    if len(names) > MAX_SERIES:
        raise ValueError(
            f"{len(names)} series in one panel ({', '.join(names)}): at most {MAX_SERIES} can "
            "be told apart; split the panel"
        )
    return {
        name: {"color": COLOURS[i], "marker": MARKERS[i], "linestyle": DASHES[i]}
        for i, name in enumerate(names)
    }


def subplots(panels: int = 1, height: float = HEIGHT, **kwargs):
    """One row of panels across the text width."""
    return grid(1, panels, height, **kwargs)


def grid(rows: int, columns: int, height: float, **kwargs):
    """Small multiples: rows x columns panels across the text width, axes in reading order."""
    fig, axes = plt.subplots(
        rows, columns, figsize=(WIDTH, height), squeeze=False, layout="constrained", **kwargs
    )
    return fig, list(axes.flat)


def dodged(x, index: int, count: int):
    """x positions of series `index` of `count`, shifted so that equal values stay visible."""
    return x + DODGE * (index - (count - 1) / 2)


def errorbar(ax, rows, label: str, kwargs: dict) -> None:
    """One series of rows (x, value, ci_low, ci_high) with its 95% intervals as error bars."""
    ax.errorbar(
        rows["x"], rows["value"], yerr=interval_errors(rows), capsize=2, label=label, **kwargs
    )


def interval_errors(rows) -> list:
    """matplotlib's yerr of rows with value, ci_low, ci_high. sacrebleu rounds its interval to
    the printed digits, so a BLEU of 0.00001 can sit just above an interval of [0.0, 0.0]: such
    an error bar is drawn with length 0, never negative."""
    return [
        (rows["value"] - rows["ci_low"]).clip(lower=0),
        (rows["ci_high"] - rows["value"]).clip(lower=0),
    ]


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
        fontsize=MIN_FONT,
        color="0.3",
    )
    ax.set_xticks([])
    ax.set_yticks([])


def parts(rows: int, columns: int, height: float) -> tuple:
    """The figure (text width) as rows x columns subfigures, in reading order: each holds its
    own panels and its own legend under them (`legend_below`)."""
    fig = plt.figure(figsize=(WIDTH, height), layout="constrained")
    return fig, list(fig.subfigures(rows, columns, squeeze=False).flat)


def legend_below(part, handles_from, ncol: int = 1, wrap: int | None = None) -> None:
    """The legend of the lines of axes `handles_from`, under all panels of `part` (a figure or
    a subfigure), where the layout makes room for it and it hides no data; each label broken
    into lines of at most `wrap` characters where given (a legend as narrow as its panel)."""
    handles, labels = handles_from.get_legend_handles_labels()
    if wrap:
        labels = [textwrap.fill(label, wrap) for label in labels]
    part.legend(handles, labels, loc="outside lower center", ncol=ncol)


def categories(ax, labels, rotation: int = 0) -> None:
    """A categorical x axis: one tick per label at 0, 1, ... (each with data: no empty one)."""
    ax.set_xticks(range(len(labels)), labels, rotation=rotation)
    ax.set_xlim(-0.5, len(labels) - 0.5)


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


def log_axis(ax, values, axis: str = "x") -> None:
    """A log x axis labelled at the measured values in short numbers (no crowded minor labels)."""
    ticks = sorted({float(v) for v in values if v and v > 0})
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_minor_formatter(matplotlib.ticker.NullFormatter())
    target.set_minor_locator(matplotlib.ticker.NullLocator())
    if ticks:
        getattr(ax, f"set_{axis}ticks")(ticks, [tick_label(t) for t in ticks])


def value_axis(ax, values, formatter) -> None:
    """A y axis for positive values: log where they span more than a decade, else linear, and
    labelled by `formatter` (a report.numbers rule) at no fewer than three ticks."""
    values = [float(v) for v in values if v == v and v > 0]
    if values and max(values) / min(values) > 10:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        if max(values) / min(values) < 100:  # under two decades: label 1, 2 and 5 of each
            ax.yaxis.set_major_locator(matplotlib.ticker.LogLocator(subs=(1.0, 2.0, 5.0)))
    else:
        ax.yaxis.set_major_locator(matplotlib.ticker.MaxNLocator(4, min_n_ticks=3))
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: formatter(v)))


class ShownTicks(matplotlib.ticker.MaxNLocator):
    """Ticks that a report.numbers rule prints as they are: as many as the axis fits, fewer where
    two labels would be alike or a label would not be its tick's value (0.605 shown as '0.60')."""

    def __init__(self, formatter):
        super().__init__(nbins="auto", steps=[1, 2, 2.5, 5, 10])
        self.formatter = formatter

    def shown(self, ticks) -> bool:
        labels = [self.formatter(t) for t in ticks]
        try:
            exact = all(
                abs(float(label) - t) < 1e-9 for label, t in zip(labels, ticks, strict=True)
            )
        except ValueError:  # a rule that prints more than a number: labels need only differ
            exact = True
        return exact and len(set(labels)) == len(labels)

    def tick_values(self, vmin, vmax):
        self.set_params(nbins="auto")
        ticks = super().tick_values(vmin, vmax)
        bins = len(ticks)
        while not self.shown(ticks) and bins > 2:  # fewer ticks until the rule prints each
            bins -= 1
            self.set_params(nbins=bins)
            ticks = super().tick_values(vmin, vmax)
        return ticks


def number_axis(ax, formatter, axis: str = "y") -> None:
    """Tick labels by a report.numbers rule (one rule per kind of number), at ticks it prints."""
    target = ax.yaxis if axis == "y" else ax.xaxis
    if target.get_scale() == "linear":
        target.set_major_locator(ShownTicks(formatter))
    target.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: formatter(v)))


def tick_label(value: float) -> str:
    """1024 -> '1k', 16384 -> '16k' (powers of two as sequence lengths are written); else '%g'."""
    if value >= 1024 and value % 1024 == 0:
        return f"{value / 1024:g}k"
    return f"{value:g}"


def save(fig, out: Path) -> Path:
    """The figure as a PDF of its own size (no cropping: it is printed at that width)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, format="pdf")
    plt.close(fig)
    return out
