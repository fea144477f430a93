"""The tidy tables as the report reads them: final-budget rows, seeds pooled, one row per run or
variant with its human label, paired comparisons named by their variants' labels.

Every section's facts and every figure start from these functions, so a number reaches the
prose and a figure through the same selection.
"""

from __future__ import annotations

import math

import pandas as pd

from ... import intervals
from ...data.buckets import ALL
from ...tables import RANGES, SETTING_COLUMNS, final_point
from ..labels import base_labels, pair_labels, sweep_label, variant_label
from ..study import Study, per_study

# the model and training settings a run differs by (the scores table's own columns)
SETTINGS = SETTING_COLUMNS[SETTING_COLUMNS.index("arch") : SETTING_COLUMNS.index("epochs")]
RUN_COLUMNS = [
    "run",
    "variant",
    "label",
    "base_model",
    "base_label",
    "seed",
    "status",
    "sweep",
    "sweep_key",
    "sweep_label",
    "parameters",
    "epochs",
    "steps",
    "tokens",
    "train_seconds",
    "tokens_per_s",
    "final_train_loss",
    "best_val_loss",
]
NAN = float("nan")
# the rows of the final training budget: a scores or comparisons table with budget points
# (column `epoch`) keeps only epoch == "final"
final = final_point


def metric_rows(
    study: Study, test_set: str | None = None, bucket: str | None = ALL, metric: str = "bleu"
) -> pd.DataFrame:
    """Score rows of one metric (and test set, bucket): one per run x test set x bucket."""
    scores = final(study.scores)
    if scores.empty or not {"metric", "value"} <= set(scores):
        return pd.DataFrame()
    rows = scores[scores["metric"] == metric]
    if test_set is not None and "test_set" in rows:
        rows = rows[rows["test_set"] == test_set]
    if bucket is not None and "bucket" in rows:
        rows = rows[rows["bucket"].astype(str) == bucket]
    return rows


SENTENCE_Z = intervals.critical(math.inf)  # sacrebleu's bootstrap interval: +-1.96 se


def pooled(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Seeds pooled: per group the mean over its runs and a 95% interval for that mean, on
    Student's t (softlookup.intervals) with two parts, as the comparisons have them
    (evaluate/compare.py): the runs' spread over seeds (variance / n on n - 1 df) and the test
    sentences' sampling variance of one run (sacrebleu's bootstrap interval read as +-1.96 se,
    mean over the runs; common to all seeds, so not divided by n), the calibrated df,
    cut to the metric's range (a BLEU in [0, 100]). One run: its own bootstrap interval."""
    if rows.empty:
        return rows
    ok = rows[rows["status"].fillna("ok") == "ok"] if "status" in rows else rows
    found = []
    for key, group in ok.groupby(by, dropna=False):
        values = group["value"].astype(float)
        sentence = (((group["ci_high"] - group["ci_low"]) / (2 * SENTENCE_Z)) ** 2).mean()
        seed = values.var(ddof=1) / len(values) if len(values) > 1 else 0.0
        low, high = math.nan, math.nan  # no interval without the runs' own
        if math.isfinite(sentence):
            df = intervals.calibrated_df(
                [(seed, len(values) - 1)] if len(values) > 1 else [], sentence
            )
            se = math.sqrt(seed + sentence)
            low, high = intervals.within(
                intervals.interval(values.mean(), se, df) if se > 0 else (values.mean(),) * 2,
                RANGES.get(str(group["metric"].iloc[0]), (-math.inf, math.inf))
                if "metric" in group
                else (-math.inf, math.inf),
            )
        keys = dict(zip(by, key if isinstance(key, tuple) else (key,), strict=True))
        found.append({**keys, "value": values.mean(), "ci_low": low, "ci_high": high,
                      "seeds": group["seed"].nunique()})  # fmt: skip
    return pd.DataFrame(found)


def side_interval(row: dict, side: str) -> tuple[float, float]:
    """One system's own 95% interval from a comparisons row: its ci_low_<side>/ci_high_<side>
    (evaluate.compare's, cut to the metric's range); a committed reference written before those
    columns existed: mean +- t(df) se, cut the same way. NaN without a standard error."""
    if f"ci_low_{side}" in row:
        return float(row[f"ci_low_{side}"]), float(row[f"ci_high_{side}"])
    mean, se, df = (float(row[f"{name}_{side}"]) for name in ("mean", "se", "df"))
    if not (math.isfinite(mean) and math.isfinite(se) and df > 0):
        return math.nan, math.nan
    limits = RANGES.get(str(row.get("metric")), (-math.inf, math.inf))
    return intervals.within(intervals.interval(mean, se, df), limits)


def main_test_set(study: Study) -> str:
    """The test set the paper reports first: the config's first, else the scores' first."""
    configured = study.config.get("evaluate", {}).get("test_sets")
    if configured:
        return configured[0]
    scores = study.scores
    return sorted(scores["test_set"].dropna().unique())[0] if "test_set" in scores else ""


def scored_settings(scored: pd.DataFrame, run: str) -> dict:
    """The run's resolved settings as the scores table records them (`scored`: its first row of
    each run, indexed by run)."""
    if run not in scored.index:
        return {}
    row = scored.loc[run]
    return {key: row[key] for key in SETTINGS if key in scored and not pd.isna(row[key])}


def base_models(study: Study) -> dict[str, dict]:
    """{base model: its settings} of the runs: the merged config's, else a run's own."""
    configured = study.config.get("models", {})
    models = {}
    for run in study.runs.values():
        settings = run.settings
        own = {k: v for k, v in settings.model.items() if k not in run.sweep}
        models.setdefault(settings.base_model, configured.get(settings.base_model) or own)
    return models


@per_study
def runs(study: Study) -> pd.DataFrame:
    """One row per run: variant, label, base model, seed, status, sweep, settings, budget."""
    labels = base_labels(base_models(study))
    scores = final(study.scores)
    scored = scores.drop_duplicates("run").set_index("run") if "run" in scores else scores
    rows = []
    for name, run in study.runs.items():
        meta, log, settings = run.meta, run.log, run.settings
        base = settings.base_model
        rows.append(
            {
                "run": name,
                "variant": run.variant,
                "label": variant_label(labels.get(base, base), run.sweep),
                "base_model": base,
                "base_label": labels.get(base, base),
                "seed": settings.seed,
                "status": run.status,
                "sweep": run.sweep,
                "sweep_key": "+".join(run.sweep),  # "" for a base run
                "sweep_label": sweep_label(run.sweep),
                "parameters": meta.get("parameters"),
                "epochs": meta.get("epochs", len(log) or None),
                "steps": log["steps"].iloc[-1] if "steps" in log and len(log) else None,
                "tokens": log["target_tokens"].sum() if "target_tokens" in log else None,
                "train_seconds": meta.get(
                    "train_wall_s", log["wall_s"].sum() if "wall_s" in log else None
                ),
                "tokens_per_s": meta.get("train_tokens_per_s"),
                "final_train_loss": meta.get("final_train_loss"),
                "best_val_loss": meta.get("best_val_loss"),
                **scored_settings(scored, name),
                # the run's own model settings (as trained, else as asked): a run the scores
                # lack still has them
                **{
                    key: value
                    for key, value in settings.model.items()
                    if key in SETTINGS and value is not None
                },
            }
        )
    return pd.DataFrame(rows) if rows else pd.DataFrame(columns=RUN_COLUMNS)


@per_study
def variants(study: Study, test_set: str | None = None) -> pd.DataFrame:
    """One row per variant: label, base model, sweep, settings, parameters, throughput and final
    training loss (seed means), statuses, seeds, and BLEU [interval] and chrF on `test_set`
    (the main test set by default), seeds pooled."""
    table = runs(study)
    if table.empty:
        return table
    first = {
        k: (k, "first")
        for k in [
            "label",
            "base_model",
            "base_label",
            "sweep",
            "sweep_key",
            "sweep_label",
            *[s for s in SETTINGS if s in table],
        ]
    }
    mean = {k: (k, "mean") for k in ["parameters", "tokens_per_s", "final_train_loss"]}
    per_variant = table.groupby("variant", as_index=False, sort=True).agg(
        **first, **mean, status=("status", lambda s: ", ".join(sorted(set(s))))
    )
    test_set = test_set or main_test_set(study)
    bleu = pooled(metric_rows(study, test_set), ["variant"])
    chrf = pooled(metric_rows(study, test_set, metric="chrf"), ["variant"])
    per_variant = per_variant.merge(
        bleu
        if not bleu.empty
        else pd.DataFrame(columns=["variant", "value", "ci_low", "ci_high", "seeds"]),
        on="variant",
        how="left",
    )
    chrf = chrf.set_index("variant")["value"] if not chrf.empty else pd.Series(dtype=float)
    per_variant["chrf"] = per_variant["variant"].map(chrf)
    return per_variant


def comparisons(study: Study, bucket: str | None = ALL, metric: str = "bleu") -> pd.DataFrame:
    """The paired comparisons (final budget) of one bucket and metric, each with the labels of
    its systems: delta = b - a, its interval and p-value."""
    table = final(study.comparisons)
    needed = {"comparison", "system_a", "system_b", "delta", "ci_low", "ci_high"}
    if table.empty or not needed <= set(table):
        return pd.DataFrame(columns=[*needed, "label_a", "label_b"])
    if bucket is not None and "bucket" in table:
        table = table[table["bucket"].astype(str) == bucket]
    if "metric" in table:
        table = table[table["metric"] == metric]
    labels = runs(study)
    labels = dict(zip(labels.get("variant", []), labels.get("label", []), strict=True))
    models = study.config.get("models") or {}
    sides = [
        pair_labels(labels, models, a, b)
        for a, b in zip(table["system_a"], table["system_b"], strict=True)
    ]
    return table.assign(
        label_a=[a for a, _ in sides],
        label_b=[b for _, b in sides],
    )


def paired(study: Study, a: str, b: str, test_set: str | None = None) -> dict | None:
    """The paired comparison of variants a and b on the whole test set as b - a, whichever way
    the config paired them ({delta, ci_low, ci_high, p_value, ...}); None when not configured."""
    table = comparisons(study)
    if table.empty:
        return None
    rows = table[table["system_a"].isin([a, b]) & table["system_b"].isin([a, b])]
    if test_set is not None and "test_set" in rows:
        rows = rows[rows["test_set"] == test_set]
    if rows.empty:
        return None
    row = rows.iloc[0].to_dict()
    if row["system_b"] == b:
        return row
    low, high = -row["ci_high"], -row["ci_low"]
    return {
        **row,
        "delta": -row["delta"],
        "ci_low": low,
        "ci_high": high,
        "system_a": a,
        "system_b": b,
        "label_a": row["label_b"],
        "label_b": row["label_a"],
    }


def bench(study: Study, kind: str) -> pd.DataFrame:
    """Every benchmark table of one kind (attention, generation, decode), devices together."""
    frames = [table for name, table in study.bench.items() if name.startswith(f"{kind}_")]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def attention_value(study: Study, run: str, quantity: str, csv_map: str = "cross") -> float:
    """One statistic of a run's attention analysis (NaN when the run was not analysed)."""
    table = study.attention.get(run)
    if table is None or not {"map", "quantity", "value"} <= set(table):
        return NAN
    rows = table[(table["quantity"] == quantity) & (table["map"] == csv_map)]
    return float(rows["value"].iloc[0]) if not rows.empty else NAN


def seed_mean(study: Study, runs_of_variant, quantity: str) -> float:
    """The mean of a statistic over a variant's analysed runs (NaN when none was analysed)."""
    values = [attention_value(study, run, quantity) for run in runs_of_variant]
    known = [v for v in values if v == v]
    return sum(known) / len(known) if known else NAN
