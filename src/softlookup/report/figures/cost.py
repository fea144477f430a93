"""The cost of attention in one figure (claims D7, D8): the time of one generation step against
the prefix length, with the KV cache and recomputing (results/bench/generation_<device>.csv),
then for each device its attention backends' time against the sequence length N, and their peak
memory where the device measured it (results/bench/attention_<device>.csv and the committed GPU
rows; rows a device did not run are left out, the text names them). A backend keeps its look
across panels; one legend under the panels names them.

python -m softlookup.report.figures.cost --results results --bench B.csv ... --out cost.pdf
"""

from __future__ import annotations

from matplotlib.lines import Line2D

from .. import numbers
from ..facts import cost
from ..study import Study
from . import cli, style

MEMORY = {
    "peak_mem_per_seq_mib": "peak memory per sequence (MiB)",
    "saved_for_backward_mib": "memory saved for backward (MiB)",
}
GENERATION = {
    "KV cache": {"color": "0.15", "marker": "X", "linestyle": "-"},
    "recompute": {"color": "0.55", "marker": "*", "linestyle": "--"},
}


def generation_panel(ax, study: Study) -> list:
    """The generation step's time; its legend entries (its looks differ from every backend's)."""
    table = cost.generation_data(study)
    if table.empty:
        style.note(ax, "no generation benchmark in results/bench")
        return []
    for mode, rows in table.groupby("mode"):
        rows = rows.sort_values("new_tokens")
        ax.plot(
            rows["new_tokens"], rows["seconds"], label=f"{mode} (generation)", **GENERATION[mode]
        )
    style.log_axis(ax, table["new_tokens"])
    style.value_axis(ax, table["seconds"], numbers.seconds)
    ax.set(xlabel="prefix length (tokens)", ylabel="time of the last step", title="generation")
    return ax.get_legend_handles_labels()[0]


def memory_column(rows) -> str | None:
    """The memory a device measured: peak per sequence where it has it, else saved tensors."""
    for column in MEMORY:
        if column in rows and rows[column].notna().any():
            return column
    return None


def kernel_panel(ax, rows, quantity: str, styles: dict) -> None:
    """One quantity of one device's backends against N, each backend's median over settings."""
    for series, line in rows.groupby("series"):
        line = line.groupby("seq_len", as_index=False)[quantity].median().dropna()
        ax.plot(line["seq_len"], line[quantity], label=series, **styles[series])
    style.log_axis(ax, rows.dropna(subset=[quantity])["seq_len"])
    ax.tick_params(axis="x", labelrotation=90)
    ax.set_xlabel("sequence length N (tokens)")


def cost_figure(study: Study):
    table = cost.kernel_data(study)
    devices = list(dict.fromkeys(table["device_label"])) if len(table) else []
    memory = [(d, memory_column(table[table["device_label"] == d])) for d in devices]
    memory = [(d, column) for d, column in memory if column]
    panels = 1 + max(len(devices), 1) + len(memory)
    fig, axes = style.grid(-(-panels // 2), 2, height=2.3 * -(-panels // 2))
    handles = generation_panel(axes[0], study)
    if table.empty:
        style.note(axes[1], "no attention benchmark in results/bench")
    styles = style.series_styles(table["series"]) if len(table) else {}
    for ax, device in zip(axes[1:], devices, strict=False):
        rows = table[table["device_label"] == device].assign(seconds=lambda t: t.time_ms / 1e3)
        kernel_panel(ax, rows, "seconds", styles)
        style.value_axis(ax, rows["seconds"], numbers.seconds)
        ax.set(ylabel="forward + backward time", title=f"attention, {device}")
    for ax, (device, column) in zip(axes[1 + len(devices) :], memory, strict=False):
        rows = table[table["device_label"] == device]
        kernel_panel(ax, rows, column, styles)
        style.value_axis(ax, rows[column], lambda v: f"{v:g}")
        ax.set(ylabel=MEMORY[column], title=f"memory, {device}")
    for ax in axes[panels:]:
        ax.set_visible(False)
    handles += [Line2D([], [], label=name, **look) for name, look in styles.items()]
    if handles:
        fig.legend(handles=handles, loc="outside lower center", ncol=3)
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, cost_figure, argv)


if __name__ == "__main__":
    main()
