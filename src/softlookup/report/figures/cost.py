"""The cost of attention in one figure (claims D7, D8): the time of one generation step against
the prefix length, with the KV cache and recomputing (results/bench/generation_<device>.csv),
then the time and peak memory of one attention against the sequence length N for each backend
(results/bench/attention_<device>.csv; rows a device did not run are left out, the text names
them).

python -m softlookup.report.figures.cost --results results --bench B.csv ... --out cost.pdf
"""

from __future__ import annotations

import matplotlib.ticker

from ..facts import cost
from ..study import Study
from . import cli, style


def generation_panel(ax, study: Study) -> None:
    table = cost.generation_data(study)
    if table.empty:
        style.note(ax, "no generation benchmark in results/bench")
        return
    styles = style.series_styles(table["mode"])
    for mode, rows in table.groupby("mode"):
        rows = rows.sort_values("new_tokens")
        ax.plot(rows["new_tokens"], rows["seconds"] * 1e3, label=mode, **styles[mode])
    style.log_axis(ax, table["new_tokens"])
    ax.set(yscale="log", xlabel="prefix length (tokens)", ylabel="time of the last step (ms)")
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.legend(fontsize="x-small")


def kernel_panels(time_ax, memory_ax, study: Study) -> None:
    table = cost.kernel_data(study)
    if table.empty:
        style.note(time_ax, "no attention benchmark in results/bench")
        style.note(memory_ax, "")
        return
    styles = style.series_styles(table["series"])
    peak = table.get("peak_mem_per_seq_mib")
    memory = (
        "peak_mem_per_seq_mib"
        if peak is not None and peak.notna().any()
        else ("saved_for_backward_mib")
    )
    for series, rows in table.groupby("series"):
        rows = rows.groupby("seq_len", as_index=False)[["time_ms", memory]].median()
        time_ax.plot(rows["seq_len"], rows["time_ms"], label=series, **styles[series])
        if rows[memory].notna().any():
            memory_ax.plot(rows["seq_len"], rows[memory], label=series, **styles[series])
    label = (
        "peak memory per sequence (MiB)"
        if memory == "peak_mem_per_seq_mib"
        else "memory saved for backward (MiB)"
    )
    for ax, ylabel in ((time_ax, "forward+backward time (ms)"), (memory_ax, label)):
        style.log_axis(ax, table["seq_len"])
        ax.set(yscale="log", xlabel="sequence length N (tokens)", ylabel=ylabel)
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        ax.tick_params(axis="x", labelrotation=90)


def cost_figure(study: Study):
    fig, axes = style.subplots(3, height=2.4)
    generation_panel(axes[0], study)
    kernel_panels(axes[1], axes[2], study)
    style.legend_below(fig, axes[1], ncol=4)
    return fig


def main(argv: list[str] | None = None) -> None:
    cli.run(__doc__, cost_figure, argv)


if __name__ == "__main__":
    main()
