"""Figures of the translation scores: BLEU by source length, and BLEU along each sweep.

bleu_by_length.pdf  BLEU per source-length bucket of each base model, 95% intervals (claim D1)
sweep_<key>.pdf     BLEU (left) and parameters or training loss (right) against the swept value
                    of one sweep key (heads: D5; d_k and scale: D3; causal_mask: D4)

python -m softlookup.report.figures.scores --results results --figure bleu_by_length --out F.pdf
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ...evaluate import score
from .. import study as load_study
from ..study import Study, metric_rows, pooled, run_facts, value_text
from . import style

SWEEP_LABELS = {
    "heads": "heads",
    "d_k": r"$d_k$ (width of a head)",
    "scale": "scaled scores",
    "causal_mask": "causal mask",
    "padding_mask": "padding mask",
    "max_train_words": "longest training source (words)",
}


def bucket_order(labels) -> list[str]:
    """Length buckets shortest first, without "all" (the figures' x axis)."""
    return [label for label in score.bucket_order(str(b) for b in labels) if label != score.ALL]


def length_data(study: Study) -> pd.DataFrame:
    """BLEU per bucket of the base runs (no sweep), seeds pooled, per test set."""
    rows = metric_rows(study, bucket=None)
    if rows.empty or "bucket" not in rows:
        return pd.DataFrame()
    rows = rows[rows["bucket"].astype(str) != "all"]
    facts = run_facts(study)
    if not facts.empty:
        base = facts.loc[facts["sweep_key"] == "", "run"]
        rows = rows[rows["run"].isin(base)] if len(base) else rows
    return pooled(rows, ["base_model", "test_set", "bucket"])


def bleu_by_length(study: Study):
    table = length_data(study)
    test_sets = sorted(table["test_set"].unique()) if not table.empty else [""]
    fig, axes = style.subplots(len(test_sets), sharey=True)
    if table.empty:
        style.note(axes[0], "no per-bucket BLEU in results/tables/scores.csv")
        return fig
    order = bucket_order(table["bucket"])
    styles = style.series_styles(table["base_model"])
    for ax, test_set in zip(axes, test_sets):
        for model, rows in table[table["test_set"] == test_set].groupby("base_model"):
            rows = rows.assign(x=rows["bucket"].map(order.index)).sort_values("x")
            ax.errorbar(
                rows["x"],
                rows["value"],
                yerr=style.interval_errors(rows),
                capsize=2,
                label=model,
                markersize=4,
                **styles[model],
            )
        ax.set_xticks(range(len(order)), order, rotation=45)
        ax.set_title(test_set)
        ax.set_xlabel("source length (words)")
    axes[0].set_ylabel("BLEU (%)")
    axes[-1].legend(fontsize="x-small")
    return fig


def sweep_keys(study: Study) -> list[str]:
    """Every setting some run of the config sweeps (grid sweeps give several)."""
    facts = run_facts(study)
    if facts.empty:
        return []
    return sorted({key for sweep in facts["sweep"] for key in sweep})


def sweep_data(study: Study, key: str, test_set: str | None = None) -> pd.DataFrame:
    """The variants that sweep `key` and their base models: one row per variant with the value
    of `key` (x), the other swept settings (series), BLEU pooled over seeds (the first test
    set), parameters, final training loss and whether it is the base model."""
    facts = run_facts(study)
    if facts.empty:
        return pd.DataFrame()
    swept = facts[[key in sweep for sweep in facts["sweep"]]]
    if swept.empty:
        return pd.DataFrame()
    others = sorted({k for sweep in swept["sweep"] for k in sweep} - {key})
    members = facts[
        facts.index.isin(swept.index)
        | ((facts["sweep_key"] == "") & facts["variant"].isin(swept["base_model"]))
    ]

    def setting(row, name: str) -> str:
        if name in row["sweep"]:
            return value_text(row["sweep"][name])
        if name in row and not pd.isna(row[name]):
            return value_text(row[name])
        return "default"

    several_models = members["base_model"].nunique() > 1  # one line per model, not across them
    members = members.assign(
        is_base=members["sweep_key"] == "",
        swept=[setting(row, key) for _, row in members.iterrows()],
        series=[
            ", ".join(
                [row["base_model"]] * several_models
                + [f"{k} = {setting(row, k)}" for k in others]
            )
            or key
            for _, row in members.iterrows()
        ],
    )
    test_set = test_set or (study.test_sets() or [None])[0]
    per_variant = members.groupby("variant", as_index=False).agg(
        swept=("swept", "first"),
        series=("series", "first"),
        is_base=("is_base", "first"),
        base_model=("base_model", "first"),
        label=("sweep_label", "first"),
        parameters=("parameters", "mean"),
        final_train_loss=("final_train_loss", "mean"),
        status=("status", "first"),
    )
    per_variant["max_weight"] = [
        saturation(study, members.loc[members["variant"] == v, "run"])
        for v in per_variant["variant"]
    ]
    bleu = pooled(metric_rows(study, test_set), ["variant"])
    if bleu.empty:
        return per_variant.assign(value=float("nan"), ci_low=float("nan"), ci_high=float("nan"))
    return per_variant.merge(bleu, on="variant", how="left")


def saturation(study: Study, runs) -> float:
    """Mean largest cross-attention weight of a row over the runs' attention analyses (NaN
    when none was analysed): 1 is a saturated softmax."""
    values = []
    for run in runs:
        table = study.attention.get(run)
        if table is None or not {"map", "quantity", "value"} <= set(table):
            continue
        rows = table[(table["map"] == "cross") & (table["quantity"] == "max_weight_mean")]
        values += list(rows["value"])
    return sum(values) / len(values) if values else float("nan")


SECOND_PANEL = {  # column -> axis label of the right-hand panel of a sweep figure
    "max_weight": "mean largest attention weight",
    "parameters": "parameters",
    "final_train_loss": "final training loss (nats per token)",
}


def second_panel(key: str, table: pd.DataFrame) -> str:
    """What the right panel shows: trained-model saturation for d_k and scale (when analysed),
    parameters for heads and d_k, else the final training loss."""
    if key in ("d_k", "scale") and "max_weight" in table and table["max_weight"].notna().any():
        return "max_weight"
    return "parameters" if key in ("heads", "d_k") else "final_train_loss"


def swept_order(values) -> list[str]:
    def order(value: str):
        try:
            return (0, float(value), value)
        except ValueError:
            return (1, 0.0, value)

    return sorted(set(values), key=order)


def sweep_figure(study: Study, key: str):
    table = sweep_data(study, key)
    second = second_panel(key, table)
    fig, axes = style.subplots(2)
    if table.empty:
        style.note(axes[0], f"no runs sweep {key}")
        style.note(axes[1], "")
        return fig
    order = swept_order(table["swept"])
    table = table.assign(x=table["swept"].map(order.index)).sort_values("x")
    styles = style.series_styles(table["series"])
    for series, rows in table.groupby("series"):
        axes[0].errorbar(
            rows["x"],
            rows["value"],
            yerr=style.interval_errors(rows),
            capsize=2,
            markersize=4,
            label=series,
            **styles[series],
        )
        axes[1].plot(rows["x"], rows[second], markersize=4, label=series, **styles[series])
    axes[0].set_ylabel("BLEU (%)")
    axes[1].set_ylabel(SECOND_PANEL[second])
    style.min_span(axes[1], table[second])
    for ax in axes:
        ax.set_xticks(range(len(order)), order)
        ax.set_xlabel(SWEEP_LABELS.get(key, key))
    if table["series"].nunique() > 1:
        axes[1].legend(fontsize="x-small")
    return fig


def draw(study: Study, figure: str):
    if figure == "bleu_by_length":
        return bleu_by_length(study)
    if figure.startswith("sweep_"):
        return sweep_figure(study, figure.removeprefix("sweep_"))
    raise ValueError(f"unknown figure {figure!r}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--figure", required=True, help="bleu_by_length or sweep_<key>")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--runs", nargs="*", help="the config's runs (default: all on disk)")
    args = parser.parse_args(argv)
    style.setup()
    print(style.save(draw(load_study.load(args.results, runs=args.runs), args.figure), args.out))


if __name__ == "__main__":
    main()
