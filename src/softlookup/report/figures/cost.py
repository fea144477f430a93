"""Cost figures from the benchmarks (claims D6-D8).

generation_steps.pdf  time of one generation step against the prefix length, with the KV cache
                      and recomputing the prefix (results/bench/generation_<device>.csv)
kernel_cost.pdf       time and peak memory of one attention against the sequence length N for
                      each backend (results/bench/attention_<device>.csv); rows a device did not
                      run are left out (the text names them)

python -m softlookup.report.figures.cost --results results --figure kernel_cost --out F.pdf
"""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib.ticker
import pandas as pd

from .. import study as load_study
from ..study import Study
from . import style


def bench_tables(study: Study, kind: str) -> pd.DataFrame:
    frames = [table for name, table in study.bench.items() if name.startswith(f"{kind}_")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def generation_data(study: Study) -> pd.DataFrame:
    """Long table: device, prefix (new tokens), mode (cache/recompute), seconds of the last step."""
    table = bench_tables(study, "generation")
    needed = {"new_tokens", "last_step_cache_s", "last_step_recompute_s"}
    if table.empty or not needed <= set(table):
        return pd.DataFrame()
    keep = ["device", "new_tokens"]
    long = table.melt(
        id_vars=[c for c in keep if c in table],
        value_vars=["last_step_cache_s", "last_step_recompute_s"],
        var_name="mode",
        value_name="seconds",
    )
    long["mode"] = long["mode"].map(
        {"last_step_cache_s": "KV cache", "last_step_recompute_s": "recompute"}
    )
    return long.groupby([c for c in ("device", "new_tokens", "mode") if c in long], as_index=False)[
        "seconds"
    ].median()


def kernel_data(study: Study) -> pd.DataFrame:
    """Rows of the attention benchmark that ran (status ok): time and memory per backend and N."""
    table = bench_tables(study, "attention")
    if table.empty or not {"seq_len", "time_ms", "backend"} <= set(table):
        return pd.DataFrame()
    if "status" in table:
        table = table[table["status"].fillna("ok") == "ok"]
    if "pass" in table and (table["pass"] == "forward_backward").any():
        table = table[table["pass"] == "forward_backward"]
    return table


def generation_figure(study: Study):
    table = generation_data(study)
    fig, axes = style.subplots(1)
    ax = axes[0]
    if table.empty:
        style.note(ax, "no generation benchmark in results/bench")
        return fig
    styles = style.series_styles(table["mode"])
    for mode, rows in table.groupby("mode"):
        rows = rows.sort_values("new_tokens")
        ax.plot(rows["new_tokens"], rows["seconds"] * 1e3, label=mode, **styles[mode])
    style.log_axis(ax, table["new_tokens"])
    ax.set(yscale="log", xlabel="prefix length (tokens)", ylabel="time of the last step (ms)")
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.legend(fontsize="x-small")
    return fig


def kernel_figure(study: Study):
    table = kernel_data(study)
    fig, axes = style.subplots(2)
    if table.empty:
        style.note(axes[0], "no attention benchmark in results/bench")
        style.note(axes[1], "")
        return fig
    table = table.assign(
        series=table["backend"].astype(str)
        + (
            " " + table["device"].astype(str)
            if table.get("device", pd.Series([])).nunique() > 1
            else ""
        )
    )
    styles = style.series_styles(table["series"])
    memory = (
        "peak_mem_per_seq_mib"
        if table.get("peak_mem_per_seq_mib", pd.Series(dtype=float)).notna().any()
        else "saved_for_backward_mib"
    )
    for series, rows in table.groupby("series"):
        rows = rows.groupby("seq_len", as_index=False)[["time_ms", memory]].median()
        axes[0].plot(rows["seq_len"], rows["time_ms"], label=series, **styles[series])
        if rows[memory].notna().any():
            axes[1].plot(rows["seq_len"], rows[memory], label=series, **styles[series])
    label = (
        "peak memory per sequence (MiB)"
        if memory == "peak_mem_per_seq_mib"
        else "memory saved for backward (MiB)"
    )
    for ax, ylabel in zip(axes, ("forward+backward time (ms)", label)):
        style.log_axis(ax, table["seq_len"])
        ax.set(yscale="log", xlabel="sequence length N (tokens)", ylabel=ylabel)
        ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    style.legend_below(fig, axes[0], ncol=4)
    return fig


DRAW = {"generation_steps": generation_figure, "kernel_cost": kernel_figure}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--figure", required=True, choices=sorted(DRAW))
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--bench", nargs="*", type=Path, help="benchmark CSVs (default: all)")
    args = parser.parse_args(argv)
    style.setup()
    print(
        style.save(
            DRAW[args.figure](load_study.load(args.results, runs=[], bench=args.bench)), args.out
        )
    )


if __name__ == "__main__":
    main()
