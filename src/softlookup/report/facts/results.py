"""Facts of the results sections on trained translators: every variant, BLEU against source
length (D1), the score functions (D2), scaling (D3), heads (D5), masking (D4), the other sweeps,
and what the trained models attend to (B5)."""

from __future__ import annotations

import math

import pandas as pd

from ...data.buckets import ALL, bucket_order, bucket_start
from ..families import other_keys
from ..labels import setting_label
from ..latex import Tex
from ..study import Study, variant_of
from . import claims, convergence, sweeps, tables

PUBLISHED_WORDS = 60  # Bahdanau et al.'s length figure reaches sources of 60 words
ATTENTION_STATS = ["entropy_mean", "max_weight_mean", "argmax_on_top_key_share", "chance_share"]


def records(table: pd.DataFrame) -> list[dict]:
    return table.to_dict("records") if len(table) else []


def overview(study: Study) -> dict:
    """Table 1 (the headline claims) and Table 2 (every variant, seeds pooled)."""
    variants = tables.variants(study)
    budget = convergence.section(study) if study.config.get("convergence") else {}
    return {
        "headline": claims.headline(claims.claims(study)),
        "converged": budget.get("by_claim", {}),
        "budget": budget.get("budget"),
        "variants": records(variants.sort_values(["base_model", "sweep_key"])),
    }


def length_table(study: Study) -> pd.DataFrame:
    """BLEU per length bucket of the base runs (no sweep), seeds pooled: one row per base model
    x test set x bucket, with the model's label and architecture (the figure and the prose read
    this)."""
    rows = tables.metric_rows(study, bucket=None)
    if rows.empty or "bucket" not in rows:
        return pd.DataFrame()
    rows = rows[rows["bucket"].astype(str) != ALL]
    runs = tables.runs(study)
    base = runs.loc[runs["sweep_key"] == "", "run"]
    if len(base):
        rows = rows[rows["run"].isin(base)]
    labels = dict(zip(runs["base_model"], runs["base_label"], strict=True))
    arch = dict(zip(runs["base_model"], runs.get("arch", runs["base_model"]), strict=True))
    table = tables.pooled(rows, ["base_model", "test_set", "bucket"])
    return table.assign(
        label=[labels.get(m, m) for m in table["base_model"]],
        arch=[arch.get(m, m) for m in table["base_model"]],
    )


def buckets(labels) -> list[str]:
    """Length buckets shortest first, without the whole test set."""
    return [b for b in bucket_order(str(label) for label in labels) if b != ALL]


def length_effect(study: Study) -> dict | None:
    """Claim D1's measure, from the rows the ledger judges (comparisons.csv, metric bleu_share:
    the mean over seeds of each run's share, seed-aware t intervals): on the test set whose
    buckets reach the longest inputs, the share of its shortest-bucket BLEU each system keeps on
    the longest bucket, the fixed-vector model's and each attention model's compared with it, and
    their paired difference. None when no such comparison was scored."""
    table = length_table(study)
    rows = tables.comparisons(study, bucket=None, metric="bleu_share")
    if table.empty or rows.empty:
        return None
    longest = max(
        rows["test_set"].unique(),
        key=lambda t: max(bucket_start(b) for b in rows[rows["test_set"] == t]["bucket"]),
    )
    rows = rows[rows["test_set"] == longest]
    last = buckets(rows["bucket"])[-1]
    attention = tables.runs(study).groupby("variant")["attention"].first()
    rows = rows[
        (rows["bucket"] == last)
        & (rows["system_a"].map(attention) == "none")
        & (rows["system_b"].map(attention) != "none")
    ]
    if rows.empty:
        return None

    own = share_intervals(study, longest, last)  # each system's share from its own family

    def share(row, side: str) -> dict:
        return {"label": row[f"label_{side}"], **own[row[f"system_{side}"]]}

    compared = records(rows.sort_values("mean_b", ascending=False))
    by_gap = sorted(compared, key=lambda row: row["delta"])
    return {
        "test_set": longest,
        "first": buckets(table[table["test_set"] == longest]["bucket"])[0],
        "last": last,
        "fixed": share(compared[0], "a"),
        "attention": [{**share(row, "b"), "gap": row} for row in compared],
        "gaps": {
            "low": by_gap[0],
            "high": by_gap[-1],
            "p_max": max(row["p_value"] for row in compared),
        },
        "published_words": PUBLISHED_WORDS,
        "reaches_published": bucket_start(last) >= PUBLISHED_WORDS,
    }


def share_intervals(study: Study, test_set: str, last: str) -> dict[str, dict]:
    """{variant: {value, ci_low, ci_high, check}}: each system's own share of its shortest-bucket
    BLEU kept on bucket `last` (mean over seeds, with its own seed-aware interval, at least 0):
    the ledger check's where one measures it (ledger_shares), else from the bleu_share rows of
    the comparisons on `test_set` that name it (comparisons.csv's interval of a side: the one
    interval of that system every table reads)."""
    rows = tables.comparisons(study, bucket=last, metric="bleu_share")
    if rows.empty or "test_set" not in rows:
        return {}
    rows = rows[rows["test_set"] == test_set]
    found = {}
    for row in rows.to_dict("records"):
        for side in ("a", "b"):
            low, high = tables.side_interval(row, side)
            found[row[f"system_{side}"]] = {
                "value": row[f"mean_{side}"],
                "ci_low": low,
                "ci_high": high,
                "check": None,
            }
    return found | ledger_shares(study, test_set, last)


def ledger_shares(study: Study, test_set: str, last: str) -> dict[str, dict]:
    """{variant: {value, ci_low, ci_high, check}} for each system whose share kept on bucket
    `last` a ledger check measures: the paper prints the check's number and interval wherever it
    prints that share (one quantity, one number)."""
    found = {}
    for claim in claims.claims(study).values():
        for check in claim.checks:
            facts = check.facts
            side = facts.get("side")
            if (
                facts.get("metric") != "bleu_share"
                or side not in ("a", "b")
                or (facts.get("test_set"), facts.get("bucket")) != (test_set, last)
                or check.value is None
            ):
                continue
            found[facts[f"system_{side}"]] = {
                "value": check.value,
                "ci_low": math.nan if check.ci_low is None else check.ci_low,
                "ci_high": math.nan if check.ci_high is None else check.ci_high,
                "check": check,
            }
    return found


def length_shares(study: Study) -> dict | None:
    """Every base model's BLEU on the longest bucket as a share of its BLEU on the shortest, on
    the test set whose buckets reach furthest: {test_set, first, last, fixed: rows without
    attention, attention: rows with it, by share descending}; None without buckets. A model some
    comparison pairs on that test set has its share from there (mean over seeds, with its
    interval); any other has the share of its seed-pooled BLEU and no interval. The abstract and
    the length section's table read this one fact."""
    table = length_table(study)
    if table.empty:
        return None
    longest = max(
        table["test_set"].unique(),
        key=lambda t: max(bucket_start(b) for b in table[table.test_set == t].bucket),
    )
    rows = table[table["test_set"] == longest]
    order = buckets(rows["bucket"])
    first, last = order[0], order[-1]
    runs = tables.runs(study)
    attention = runs.groupby("base_model")["attention"].first() if "attention" in runs else {}
    compared = share_intervals(study, longest, last)
    shares = []
    for model, own in rows.groupby("base_model"):
        at = own.set_index(own["bucket"].astype(str))["value"]
        if first not in at or last not in at or pd.isna(at[last]) or not at[first] > 0:
            continue
        pooled = {"value": at[last] / at[first], "ci_low": math.nan, "ci_high": math.nan}
        kept = compared.get(model, pooled | {"check": None})
        shares.append(
            {
                "label": own["label"].iloc[0],
                "first": at[first],
                "last": at[last],
                "share": kept["value"],
                "value": kept["value"],
                "ci_low": kept["ci_low"],
                "ci_high": kept["ci_high"],
                "check": kept["check"],
                "attends": attention.get(model, "dot") != "none",
            }
        )
    shares.sort(key=lambda row: -row["share"])
    return {
        "test_set": longest,
        "first": first,
        "last": last,
        "fixed": [r for r in shares if not r["attends"]],
        "attention": [r for r in shares if r["attends"]],
    }


def length(study: Study) -> dict:
    return {"effect": length_effect(study), "shares": length_shares(study)}


def score_functions(study: Study) -> dict:
    """The recurrent base models, which differ only in the score function: their table, and
    dot against additive (paired when the config pairs them, else by the two intervals)."""
    variants = tables.variants(study)
    if variants.empty or "attention" not in variants:
        return {"rows": [], "dot": None, "additive": None}
    gru = variants[(variants.get("arch") == "gru") & (variants["sweep_key"] == "")]
    gru = gru[gru["value"].notna()]
    by_score = {row["attention"]: row for row in records(gru)}
    dot, additive = by_score.get("dot"), by_score.get("additive")
    found = {"rows": records(gru), "dot": dot, "additive": additive, "paired": None}
    if dot and additive:
        found["paired"] = tables.paired(study, additive["variant"], dot["variant"])
        found["faster"] = dot["tokens_per_s"] > additive["tokens_per_s"]
    return found


def scaling(study: Study) -> dict:
    """The d_k x scale family, and the trained models' saturation along it: the mean largest
    weight of a row, unscaled against scaled, at each width both were trained at."""
    family = sweeps.family(study, "scaling")
    saturation = []
    if family["saturation"]:
        others = [k for k in family["swept"] if k != "scale"]
        rows = pd.DataFrame(family["rows"])
        rows["scaled"] = [sweeps.setting(r, "scale") != "false" for _, r in rows.iterrows()]
        rows["at"] = [tuple(sweeps.setting(r, k) for k in others) for _, r in rows.iterrows()]
        for at, pair in rows.dropna(subset=["max_weight"]).groupby("at", sort=False):
            if pair["scaled"].nunique() == 2:
                saturation.append(
                    {
                        "at": Tex(
                            ", ".join(setting_label(k, v) for k, v in zip(others, at, strict=True))
                        ),
                        "scaled": pair.loc[pair["scaled"], "max_weight"].iloc[0],
                        "unscaled": pair.loc[~pair["scaled"], "max_weight"].iloc[0],
                    }
                )
    return {"family": family, "saturation": saturation}


def heads(study: Study) -> dict:
    """The heads family: the best paired gain over the reference head count, whether every
    count beats it, and whether the parameter count stays the same."""
    family = sweeps.family(study, "heads")
    contrasts = family["contrasts"]
    parameters = pd.Series([r["parameters"] for r in family["rows"]], dtype=float).dropna()
    return {
        "family": family,
        "best": max(contrasts, key=lambda c: c["delta"]) if contrasts else None,
        "all_above": bool(contrasts) and all(c["ci_low"] > 0 for c in contrasts),
        "parameters": parameters.iloc[0] if parameters.nunique() == 1 else None,
    }


def masking(study: Study) -> dict:
    """The masking family, per switched-off mask: its BLEU against the base model's (paired
    when configured) and the final training loss of both (the copying pattern: lower loss,
    worse translations), and how much weight padding keys receive in the analysed runs."""
    family = sweeps.family(study, "masking")
    rows = pd.DataFrame(family["rows"])
    switches = []
    if len(rows):
        bases = rows[rows["is_base"]].set_index("variant")
        for _, row in rows[~rows["is_base"]].iterrows():
            if row["base_model"] not in bases.index:
                continue
            base = bases.loc[row["base_model"]]
            paired = tables.paired(study, base.name, row["variant"])
            worse = bool(paired["ci_high"] < 0) if paired else None  # only a paired test decides
            switches.append(
                {
                    "row": row.to_dict(),
                    "base": base.to_dict(),
                    "paired": paired,
                    # the copying pattern is the causal mask's: without it the decoder sees
                    # the target it predicts; the padding mask only hides filler keys
                    "causal": "causal_mask" in row["sweep"],
                    "lower_loss": row["final_train_loss"] < base["final_train_loss"],
                    "worse": worse,
                }
            )
    return {"family": family, "switches": switches, "padding": padding(study)}


def padding(study: Study) -> dict:
    """The analysed runs' padding mass: how many give padding keys no weight at all, and the
    runs (labels with seeds) where it is not zero."""
    runs = tables.runs(study)
    labels = {
        run: f"{label}, seed {seed}"
        for run, label, seed in zip(runs["run"], runs["label"], runs["seed"], strict=True)
    }
    masses = {
        run: tables.attention_value(study, run, "padding_mass_mean")
        for run in sorted(study.attention)
    }
    masses = {run: mass for run, mass in masses.items() if not math.isnan(mass)}
    leaking = [
        {"run": run, "label": labels.get(run, variant_of(run)), "mass": mass}
        for run, mass in masses.items()
        if mass != 0
    ]
    return {"analysed": len(masses), "zero": len(masses) - len(leaking), "leaking": leaking}


def other_sweeps(study: Study) -> dict:
    keys = {k for sweep in tables.runs(study).get("sweep", []) for k in sweep}
    return {"families": [sweeps.family(study, key) for key in other_keys(keys)]}


def attention_rows(study: Study) -> list[dict]:
    """One row per analysed variant: the cross-attention statistics, mean over its seeds."""
    runs = tables.runs(study)
    labels = dict(zip(runs["variant"], runs["label"], strict=True))
    per_run = [
        {
            "variant": variant_of(run),
            **{k: tables.attention_value(study, run, k) for k in ATTENTION_STATS},
        }
        for run in sorted(study.attention)
    ]
    table = pd.DataFrame(per_run, columns=["variant", *ATTENTION_STATS])
    table = (
        table.dropna(subset=["entropy_mean"])
        .groupby("variant", as_index=False)
        .agg(seeds=("entropy_mean", "count"), **{k: (k, "mean") for k in ATTENTION_STATS})
    )
    table["label"] = [labels.get(v, v) for v in table["variant"]]
    table["above_chance"] = table["argmax_on_top_key_share"] > 2 * table["chance_share"]
    return records(table.sort_values("variant"))


def alignment_runs(study: Study) -> list[dict]:
    """The runs whose example sentence the alignment figure draws: those config analysis.runs
    names (every analysed base run without a config) that have attention weights, with their
    labels, head counts and weights (the alignment table)."""
    named = study.config.get("analysis", {}).get("runs")
    runs = tables.runs(study)
    chosen = runs[runs["run"].isin(named)] if named else runs[runs["sweep_key"] == ""]
    drawn = []
    for _, run in chosen.sort_values("run").iterrows():
        table = study.alignment.get(run["run"])
        if table is None or table.empty:
            continue
        heads = table["head"].nunique() if "head" in table else 1
        drawn.append({"run": run["run"], "label": run["label"], "heads": heads, "table": table})
    return drawn


def attention(study: Study) -> dict:
    rows = attention_rows(study)
    return {
        "rows": rows,
        "above_chance": [r for r in rows if r["above_chance"]],
        "alignments": alignment_runs(study),
    }
