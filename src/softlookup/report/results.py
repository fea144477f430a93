"""The results sections of the paper, one per claim group, each with its figures, tables and a
paragraph whose directional sentences are chosen from the measurement or the ledger's verdict; a
missing measurement gives a sentence naming what is pending and why."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..evaluate.score import bucket_start
from . import latex
from .figures import cost as cost_figures
from .figures import scores as score_figures
from .figures import training as training_figures
from .latex import escape, interval, number, small, words_list
from .macros_attention import summary as attention_summary
from .macros_scores import budget_table, results_table
from .prose import (
    GROUPS,
    Paper,
    bleu_text,
    comparison_word,
    loglog_slope,
    overlap,
    section,
)
from .study import Study, metric_rows, pooled, variant_of

# --------------------------------------------------------------------------- results sections


def split_by_attention(paper: Paper, models) -> tuple[set, set]:
    """(fixed-vector models, models with attention) among `models`."""
    facts = paper.facts
    if facts.empty or "attention" not in facts:
        return set(), set()
    fixed = set(facts.loc[facts["attention"] == "none", "base_model"]) & set(models)
    return fixed, set(models) - fixed


def longest_test_set(data: pd.DataFrame) -> tuple[str, pd.DataFrame, list[str]]:
    """The test set whose buckets reach the longest inputs, its rows, and its buckets in order."""
    longest_set = max(
        data["test_set"].unique(),
        key=lambda t: max(bucket_start(b) for b in data[data["test_set"] == t]["bucket"]),
    )
    rows = data[data["test_set"] == longest_set]
    return longest_set, rows, score_figures.bucket_order(rows["bucket"])


def kept_share(first: float, last: float) -> float:
    """The share of its shortest-bucket BLEU a model keeps on the longest bucket (claim D1's
    measure in config/claims.yaml); NaN when the shortest bucket scores nothing."""
    return last / first if first > 0 else float("nan")


def percent(share: float) -> str:
    return f"{100 * share:.0f}\\%"


def length_kept(paper: Paper) -> tuple[str, str, str, dict] | None:
    """(test set, first bucket, last bucket, {model: share of short-input BLEU kept}) on the
    test set with the longest inputs; None without per-bucket BLEU."""
    data = score_figures.length_data(paper.study)
    if data.empty:
        return None
    longest_set, rows, order = longest_test_set(data)
    kept = {}
    for model, model_rows in rows.groupby("base_model"):
        by_bucket = model_rows.set_index("bucket")
        if order[0] in by_bucket.index and order[-1] in by_bucket.index:
            share = kept_share(by_bucket.loc[order[0], "value"], by_bucket.loc[order[-1], "value"])
            if not math.isnan(share):
                kept[model] = share
    return longest_set, order[0], order[-1], kept


def length_section(paper: Paper) -> str:
    study = paper.study
    data = score_figures.length_data(study)
    body = []
    if data.empty:
        body.append(
            "BLEU per source-length bucket is pending: the scores table of this build"
            " has no per-bucket BLEU rows, so the length effect of claim D1 cannot be"
            " shown. "
        )
        return section(GROUPS[0][1], "length", body + [paper.verdict_sentence("D1")])
    longest_set, rows, order = longest_test_set(data)
    first, last = order[0], order[-1]
    kept = {}
    sentences = []
    for model, model_rows in rows.groupby("base_model"):
        by_bucket = model_rows.set_index("bucket")
        if first in by_bucket.index and last in by_bucket.index:
            a, b = by_bucket.loc[first], by_bucket.loc[last]
            share = kept_share(a["value"], b["value"])
            if not math.isnan(share):
                kept[model] = share
            sentences.append(f"{latex.name(model)} from {bleu_text(a)} to {bleu_text(b)}")
    body.append(
        f"Figure~\\ref{{fig:bleu_by_length}} shows BLEU against the length of the source sentence"
        f" for every base model. On \\texttt{{{escape(longest_set)}}}, from the shortest bucket"
        f" ({escape(first)} words) to the longest ({escape(last)} words), BLEU goes "
        + (words_list(sentences) if sentences else "unmeasured for every model")
        + ". "
    )
    fixed_models, attn_models = split_by_attention(paper, kept)
    if fixed_models and attn_models:
        # the direction is the ledger's to judge, on paired comparisons (the verdict below)
        attn_shares = sorted(kept[m] for m in attn_models)
        body.append(
            "On the longest inputs the fixed-vector model keeps"
            f" {percent(max(kept[m] for m in fixed_models))} of its short-sentence BLEU and the"
            " models with attention "
            + (
                f"keep {percent(attn_shares[0])}"
                if len(attn_shares) == 1
                else f"between {percent(attn_shares[0])} and {percent(attn_shares[-1])}"
            )
            + " (seeds pooled). "
        )
    else:
        body.append(
            "The comparison between a fixed-vector model and a model with attention is"
            " pending: this configuration does not score both kinds. "
        )
    if bucket_start(last) < 60:
        body.append(
            f"The longest inputs scored here fall in the bucket {escape(last)}, short of the"
            " sixty-word inputs of Bahdanau et al.'s length figure; joining more consecutive"
            " test pairs (config \\texttt{data.joined\\_tests}) would reach them. "
        )
    body.append(paper.verdict_sentence("D1"))
    body.append(
        paper.figure(
            "bleu_by_length",
            "BLEU (\\%) by source length (words) for each base model; bars are"
            " 95\\% bootstrap intervals, seeds pooled. One panel per test set.",
        )
    )
    return section(GROUPS[0][1], "length", body)


def score_function_section(paper: Paper) -> str:
    facts, study = paper.facts, paper.study
    bleu = pooled(metric_rows(study, paper.test_set), ["variant"])
    body = []
    if facts.empty or bleu.empty or "attention" not in facts:
        body.append(
            "The comparison of score functions is pending: no scored run with a"
            " recorded attention type exists in this build. "
        )
        return section(GROUPS[1][1], "scores", body + [paper.verdict_sentence("D2")])
    gru = facts[(facts.get("arch") == "gru") & (facts["sweep_key"] == "")]
    table = (
        gru.groupby("variant", as_index=False)
        .agg(
            attention=("attention", "first"),
            parameters=("parameters", "mean"),
            tokens_per_s=("tokens_per_s", "mean"),
        )
        .merge(bleu, on="variant", how="inner")
    )
    if table.empty:
        body.append(
            "No recurrent model was scored in this build, so the score functions are not compared. "
        )
        return section(GROUPS[1][1], "scores", body + [paper.verdict_sentence("D2")])
    rows = [
        [
            latex.name(r["variant"]),
            escape(r["attention"]),
            bleu_text(r),
            latex.number(r["parameters"], 0) if not pd.isna(r["parameters"]) else "--",
            latex.number(r["tokens_per_s"], 0) if not pd.isna(r["tokens_per_s"]) else "--",
        ]
        for _, r in table.sort_values("variant").iterrows()
    ]
    body.append(
        "Table~\\ref{tab:scores} compares the recurrent models, which differ only in how the"
        f" decoder scores the encoder states, on \\texttt{{{escape(paper.test_set)}}}. "
    )
    by_kind = table.set_index("attention")
    if {"dot", "additive"} <= set(by_kind.index):
        dot, additive = by_kind.loc["dot"], by_kind.loc["additive"]
        body.append(
            f"The dot-product score reaches {bleu_text(dot)} BLEU, which is"
            f" {comparison_word(dot, additive)} the additive score's {bleu_text(additive)}. "
        )
        if not pd.isna(dot["tokens_per_s"]) and not pd.isna(additive["tokens_per_s"]):
            faster = dot["tokens_per_s"] > additive["tokens_per_s"]
            body.append(
                f"It trains at {latex.number(dot['tokens_per_s'], 0)} target tokens per second"
                f" against {latex.number(additive['tokens_per_s'], 0)}, "
                + (
                    "so on this machine it is also the cheaper score. "
                    if faster
                    else "so on this machine it is not the cheaper score. "
                )
            )
    else:
        body.append(
            "The dot-product and additive scores are not both trained in this"
            " configuration, so claim D2's comparison is pending. "
        )
    body.append(paper.verdict_sentence("D2"))
    body.append(
        "\\begin{table}[htbp]\\centering\\small\n"
        + latex.tabular(
            ["variant", "score", "BLEU [95\\%]", "parameters", "tokens/s"], rows, "llrrr"
        )
        + "\\caption{Recurrent encoder-decoders by score function: BLEU with its 95\\% interval"
        " (seeds pooled), parameters and training throughput. Rule \\texttt{paper\\_sections},"
        " from \\texttt{results/tables/scores.csv} and each run's \\texttt{meta.json}.}"
        "\\label{tab:scores}\n\\end{table}"
    )
    return section(GROUPS[1][1], "scores", body)


def sweep_paragraph(paper: Paper, key: str) -> str:
    data = score_figures.sweep_data(paper.study, key)
    if data.empty:
        return ""
    base = data[data["is_base"].astype(bool)]
    others = data.drop(base.index)
    bases = {row["variant"]: row for _, row in base.iterrows() if not pd.isna(row["value"])}
    several = len(set(others["base_model"])) > 1  # e.g. one length cap on two models: name each
    parts = []
    for _, row in others.iterrows():
        reference = bases.get(row["base_model"])
        if reference is None:
            continue
        model = f"{latex.name(row['base_model'])} " if several else ""
        if pd.isna(row["value"]):
            parts.append(
                f"the {model}run with {escape(row['label'])} has no BLEU"
                " (it did not finish or was not scored)"
            )
            continue
        parts.append(
            f"{model}with {escape(row['label'])} BLEU is {bleu_text(row)},"
            f" {paired_word(paper, row, reference)} the base model's {bleu_text(reference)}"
        )
    text = (
        f"Sweeping \\texttt{{{escape(key)}}} on \\texttt{{{escape(paper.test_set)}}}: "
        + ("; ".join(parts) if parts else "the base run has no BLEU to compare with")
        + ". "
    )
    params = data["parameters"].dropna()
    if key in ("heads", "d_k") and len(params) > 1:
        if params.nunique() == 1:
            text += f"The parameter count stays at {latex.number(params.iloc[0], 0)}. "
        else:
            text += (
                f"The parameter count ranges from {latex.number(params.min(), 0)} to"
                f" {latex.number(params.max(), 0)}. "
            )
    losses = data.dropna(subset=["final_train_loss"])
    if key in ("causal_mask", "padding_mask") and len(losses) > 1:
        for _, row in others.iterrows():
            reference = bases.get(row["base_model"])
            if reference is None or pd.isna(row["final_train_loss"]) or pd.isna(
                reference["final_train_loss"]
            ):
                continue
            lower_loss = row["final_train_loss"] < reference["final_train_loss"]
            lower_bleu = row["value"] < reference["value"] and not overlap(row, reference)
            text += (
                f"With {escape(row['label'])} the final training loss is"
                f" {number(row['final_train_loss'], 2)} against"
                f" {number(reference['final_train_loss'], 2)} with it, "
                + (
                    "lower in training while generation is worse: the pattern of a decoder that"
                    " copies the answer it can see. "
                    if lower_loss and lower_bleu
                    else "lower in training, but generation is not measurably worse. "
                    if lower_loss
                    else "not lower in training, so this build does not show the copying pattern. "
                )
            )
    return text


def paired_word(paper: Paper, row, reference) -> str:
    """How a sweep variant compares with its base model: by their paired comparison on the
    paper's test set when the config has one (its interval named), else by the two intervals."""
    table = paper.study.comparisons
    if not table.empty and {"system_a", "system_b", "test_set", "bucket", "metric"} <= set(table):
        pair = {row["variant"], reference["variant"]}
        rows = table[
            table["system_a"].isin(pair) & table["system_b"].isin(pair)
            & (table["test_set"] == paper.test_set) & (table["bucket"].astype(str) == "all")
            & (table["metric"] == "bleu")
        ]  # fmt: skip
        if len(rows):
            paired = rows.iloc[0]
            sign = 1 if paired["system_b"] == row["variant"] else -1  # delta = b - a
            low, high = sorted([sign * paired["ci_low"], sign * paired["ci_high"]])
            word = "higher than" if low > 0 else "lower than" if high < 0 else "not different from"
            return (
                f"{word} (paired difference"
                f" {interval(sign * paired['delta'], low, high, 2)})"
            )
    return comparison_word(row, reference)


def attention_value(paper: Paper, run: str, quantity: str, csv_map: str = "cross") -> float:
    table = paper.study.attention.get(run)
    if table is None or not {"map", "quantity", "value"} <= set(table):
        return float("nan")
    rows = table[(table["quantity"] == quantity) & (table["map"] == csv_map)]
    return float(rows["value"].iloc[0]) if not rows.empty else float("nan")


def mean_of(values) -> float:
    """The mean of the values that are numbers (NaN when none is)."""
    known = [v for v in values if not math.isnan(v)]
    return sum(known) / len(known) if known else float("nan")


def sweep_saturation(paper: Paper, keys: list[str]) -> str:
    """Trained-model saturation along the sweep: the mean largest weight of a cross-attention
    row and the gradient norm reaching the attention logits, or why they are pending."""
    facts = paper.facts
    if facts.empty:
        return ""
    swept = facts[[any(k in sweep for k in keys) for sweep in facts["sweep"]]]
    members = facts[
        facts.index.isin(swept.index)
        | ((facts["sweep_key"] == "") & facts["variant"].isin(swept["base_model"]))
    ]
    values = []
    for _, runs in members.sort_values("run").groupby("variant", sort=False):
        row = runs.iloc[0]  # seeds pooled by their mean
        weight = mean_of(attention_value(paper, r, "max_weight_mean") for r in runs["run"])
        grad = mean_of(attention_value(paper, r, "logit_grad_norm_mean") for r in runs["run"])
        if math.isnan(weight):
            continue
        label = escape(row["sweep_label"]) if row["sweep_key"] else "the base model"
        values.append(
            f"{label} {number(weight, 3)}"
            + ("" if math.isnan(grad) else f" (logit gradient norm {small(grad)})")
        )
    if values:
        return (
            "In the trained models, the mean largest cross-attention weight of a row (1 for a"
            " saturated softmax) is " + words_list(values) + ". "
        )
    if len(swept):
        return (
            "The saturation of the trained models' attention along this sweep is pending:"
            " the attention analysis (config \\texttt{analysis}) does not cover the swept"
            " runs. "
        )
    return ""


def padding_sentence(paper: Paper) -> str:
    """How much weight padding keys receive in the analysed runs (zero when masked): the runs
    where it is not zero by name, the others counted."""
    masses = {
        run: attention_value(paper, run, "padding_mass_mean")
        for run in sorted(paper.study.attention)
    }
    masses = {run: mass for run, mass in masses.items() if not math.isnan(mass)}
    if not masses:
        return (
            "The weight that padding keys receive in trained models is pending: the"
            " attention analysis records no padding mass. "
        )
    leaking = [
        f"{latex.name(run)} {small(mass) if 0 < mass < 1e-3 else number(mass, 3)}"
        for run, mass in masses.items()
        if mass != 0
    ]
    zero = len(masses) - len(leaking)
    text = (
        f"In none of the {len(masses)} analysed runs do padding keys receive zero weight"
        if not zero
        else f"In {'all' if zero == len(masses) else f'{zero} of the'} {len(masses)} analysed"
        " runs padding keys receive exactly zero weight, as the padding mask intends"
    )
    if leaking:
        text += "; they receive a mean weight per row of " + words_list(leaking) + " in the others"
    return text + ". "


def sweep_table(paper: Paper, name: str, keys: list[str]) -> str:
    """Every variant of the sweeps on `keys` with its base model, in the manner of Vaswani et
    al.'s Table 3: the changed settings, BLEU with its interval, parameters, final train loss."""
    frames = [score_figures.sweep_data(paper.study, key) for key in keys]
    frames = [f for f in frames if not f.empty]
    if not frames:
        return ""
    table = (
        pd.concat(frames)
        .drop_duplicates("variant")
        .sort_values(["is_base", "variant"], ascending=[False, True])
    )
    saturation = "max_weight" in table and table["max_weight"].notna().any()
    rows = [
        [
            "base model" if row["is_base"] else escape(row["label"]),
            "--" if pd.isna(row["value"]) else bleu_text(row),
            "--" if pd.isna(row["parameters"]) else number(row["parameters"], 0),
            "--" if pd.isna(row["final_train_loss"]) else number(row["final_train_loss"], 2),
            *(
                ["--" if pd.isna(row["max_weight"]) else number(row["max_weight"], 3)]
                if saturation
                else []
            ),
            escape(row["status"]),
        ]
        for _, row in table.iterrows()
    ]
    header = [
        "changed setting",
        "BLEU [95\\%]",
        "parameters",
        "train loss",
        *(["max weight"] if saturation else []),
        "status",
    ]
    return (
        "\\begin{table}[htbp]\\centering\\small\n"
        + latex.tabular(header, rows, "l" + "r" * (len(header) - 2) + "l")
        + f"\\caption{{Every variant of the sweep(s) on {words_list([escape(k) for k in keys])}"
        f" and its base model on \\texttt{{{escape(paper.test_set)}}}: BLEU with its 95\\%"
        " interval (seeds pooled), parameters, final training loss (nats per token) and, where the"
        " runs were analysed, the mean largest cross-attention weight of a row. Rule"
        " \\texttt{paper\\_sections}, from \\texttt{results/tables/scores.csv} and the runs'"
        f" \\texttt{{meta.json}}.}}\\label{{tab:sweep-{name}}}\n\\end{{table}}"
    )


def sweep_section(paper: Paper, name: str, title: str, claims: list[str], keys: list[str]) -> str:
    present = [k for k in keys if k in score_figures.sweep_keys(paper.study)]
    body = []
    if not present:
        body.append(
            f"No run of this configuration sweeps {words_list([escape(k) for k in keys], 'or')},"
            f" so the trained-model evidence for claim {claims[0]} is pending. "
        )
    for key in present:
        body.append(sweep_paragraph(paper, key))
    if name == "scaling":
        body.append(sweep_saturation(paper, keys))
    if name == "masking":
        body.append(padding_sentence(paper))
    body += [paper.verdict_sentence(c) for c in claims]
    body.append(sweep_table(paper, name, present))
    for key in present:
        body.append(
            paper.figure(
                f"sweep_{key}",
                f"Sweep of \\texttt{{{escape(key)}}}: BLEU (\\%) with 95\\% intervals (left) and "
                + score_figures.SECOND_PANEL[
                    score_figures.second_panel(key, score_figures.sweep_data(paper.study, key))
                ]
                + " (right) against the swept value.",
            )
        )
    return section(title, name, body)


def other_sweeps_section(paper: Paper) -> str:
    known = {k for *_, keys in GROUPS for k in keys}
    extra = [k for k in score_figures.sweep_keys(paper.study) if k not in known]
    if not extra:
        return ""
    body = [sweep_paragraph(paper, key) for key in extra]
    body += [
        paper.figure(
            f"sweep_{key}",
            f"Sweep of \\texttt{{{escape(key)}}}: BLEU (\\%) with"
            " 95\\% intervals and the final training loss.",
        )
        for key in extra
    ]
    return section("Other sweeps", "sweeps", body)


def runs_named(names: list[str], total: int, unit: str = "run") -> str:
    """Runs (or another unit) a sentence is about: named when few, else counted ('every run
    (42)', '38 of the 42 runs')."""
    if len(names) == total and total > 1:
        return f"every {unit} ({total})"
    if len(names) <= 6:
        return words_list(names)
    return f"{len(names)} of the {total} {unit}s"


def training_section(paper: Paper) -> str:
    facts = paper.facts
    curves = training_figures.curves(paper.study)
    body = []
    if curves.empty:
        body.append("Training curves are pending: no run wrote a training log. ")
        return section("Training", "training", body)
    still_falling, diverged = [], []
    for run, rows in curves[curves["split"] == "valid"].groupby("run"):
        losses = rows.sort_values("epoch")["loss"].to_numpy()
        if len(losses) < 2 or losses[-1] < losses[-2]:
            still_falling.append(latex.name(run))
        if not np.isfinite(losses).all():
            diverged.append(latex.name(run))
    status = facts[facts["status"] != "ok"] if "status" in facts else facts.iloc[:0]
    epochs = facts["epochs"].dropna() if "epochs" in facts else pd.Series(dtype=float)
    body.append(
        "Figure~\\ref{fig:training} shows training and validation loss per epoch and"
        " Table~\\ref{tab:budget} what each run cost. "
        + (
            (
                f"Runs trained for {latex.number(epochs.min(), 0)} to"
                f" {latex.number(epochs.max(), 0)} epochs. "
                if epochs.min() != epochs.max()
                else f"Every run trained for {latex.number(epochs.max(), 0)} epoch(s). "
            )
            if len(epochs)
            else ""
        )
    )
    runs = curves["run"].nunique()
    if still_falling:
        body.append(
            f"The validation loss of {runs_named(still_falling, runs)} was still falling at the"
            " last epoch (or only one epoch ran): these models are not converged, and their scores"
            " understate what the architecture can do. "
        )
    else:
        body.append("Every run's validation loss stopped falling before its last epoch. ")
    if len(status):
        body.append(
            "Runs that did not finish normally: "
            + words_list(
                [f"{latex.name(r['run'])} ({escape(r['status'])})" for _, r in status.iterrows()]
            )
            + "; their scores count as the worst in the ledger. "
        )
    body.append(
        paper.figure(
            "training",
            "Training (left) and validation (right) loss in nats"
            " per target token against the epoch, one line per variant (the mean over its seeds).",
        )
    )
    table = budget_table(paper.study)
    if table:
        body.append(
            "\\begin{table}[htbp]\\centering\\scriptsize\n"
            + table
            + "\\caption{Training budget of every run: parameters, epochs, optimiser"
            " steps, target tokens seen, wall time and throughput, from each run's"
            " \\texttt{log.csv} and \\texttt{meta.json} (rule \\texttt{train}).}"
            "\\label{tab:budget}\n\\end{table}"
        )
    return section("Training", "training", body)


def measured_elsewhere(study: Study, bench_config: dict) -> str:
    """Where the bench rows of bench.measured come from: device, versions, commit and folder."""
    folders = bench_config.get("measured") or []
    produced = set(bench_config.get("devices", []))
    rows = [
        table
        for name, table in study.bench.items()
        if name.split("_", 1)[-1] not in produced and "commit" in table
    ]
    if not folders or not rows:
        return ""
    rows = pd.concat(rows)
    sources = rows.drop_duplicates(["device_name", "commit", "torch", "triton"])
    origin = words_list([
        f"{escape(row.device_name)} (torch {escape(row.torch)}, Triton {escape(row.triton)})"
        f" at commit \\texttt{{{escape(str(row.commit)[:7])}}}"
        for row in sources.itertuples()
    ])  # fmt: skip
    return (
        f"The {words_list(sorted({escape(d) for d in rows['device']}))} rows come from outside"
        f" this build: \\texttt{{scripts/gpu\\_check.sh}} measured them on {origin}, and this"
        " build reads them as they are from "
        + words_list([f"\\texttt{{{escape(folder)}/}}" for folder in folders])
        + " (\\texttt{bench.measured}). "
    )


def cost_section(paper: Paper) -> str:
    study = paper.study
    body = []
    generation = cost_figures.bench_tables(study, "generation")
    if generation.empty:
        body.append(
            "The generation benchmark is pending: no \\texttt{results/bench/generation\\_*"
            ".csv} in this build. "
        )
    else:
        longest = generation.sort_values("new_tokens").groupby("device").tail(1)
        for _, row in longest.iterrows():
            speedup = row.get("speedup", float("nan"))
            same = str(row.get("identical", "")).lower() == "true"
            body.append(
                f"Generating {int(row['new_tokens'])} tokens with a random-weight Transformer on"
                f" {escape(row.get('device', 'the device'))}, the KV cache is"
                f" {number(speedup, 1)} times "
                + ("faster" if speedup > 1 else "slower")
                + " than recomputing the prefix at"
                " every step, "
                + (
                    "and the generated tokens are identical. "
                    if same
                    else "but the generated tokens differ. "
                )
            )
        steps = cost_figures.generation_data(study)
        if not steps.empty and steps["new_tokens"].nunique() >= 2:
            slopes = {
                mode: loglog_slope(rows["new_tokens"], rows["seconds"])
                for mode, rows in steps.groupby("mode")
            }
            body.append(
                "Against the prefix length, the time of the last step grows with log-log slope "
                + words_list([f"{number(v, 2)} ({escape(k)})" for k, v in slopes.items()])
                + f" over {steps['new_tokens'].nunique()} prefix lengths. "
            )
            if steps["new_tokens"].nunique() < 4:
                body.append(
                    "Fewer than four prefix lengths were timed, too few to tell linear"
                    " from quadratic growth. "
                )
    kernels = cost_figures.bench_tables(study, "attention")
    if kernels.empty:
        body.append(
            "The kernel benchmark is pending: no \\texttt{results/bench/attention\\_*.csv}"
            " in this build. "
        )
    else:
        ok = (
            kernels[kernels.get("status", "ok").fillna("ok") == "ok"]
            if "status" in kernels
            else kernels
        )
        pending = kernels.drop(ok.index)
        if "max_abs_err" in ok and "backend" in ok:
            errors = ok.groupby("backend")["max_abs_err"].max().dropna()
            if len(errors):
                body.append(
                    "Against the fp32 reference the largest absolute error is "
                    + words_list([f"{small(v)} ({escape(k)})" for k, v in errors.items()])
                    + ". "
                )
        if "seq_len" in ok and len(ok):
            body.append(
                f"Sequence lengths from {int(ok['seq_len'].min()):,} to"
                f" {int(ok['seq_len'].max()):,} tokens were timed on "
                + words_list(sorted({escape(d) for d in ok.get("device", ["?"])}))
                + ". "
            )
        if len(pending):
            reasons = sorted({str(r) for r in pending.get("reason", pd.Series(["unstated"]))})
            body.append(
                f"{len(pending)} benchmark rows did not run here ("
                + escape("; ".join(reasons)[:300])
                + ") and are pending. "
            )
    bench_config = paper.study.config.get("bench", {})
    body.append(measured_elsewhere(study, bench_config))
    if "cuda" not in bench_config.get("devices", []) and not bench_config.get("measured"):
        body.append(
            "No GPU benchmark is configured in this build, so the GPU claims on"
            " FlashAttention's speed and memory stay pending. "
        )
    body += [paper.verdict_sentence(c) for c in ("D6", "D7", "D8")]
    body.append(
        paper.figure(
            "generation_steps",
            "Time (ms) of the last generation step against"
            " the prefix length (tokens), with the KV cache and recomputing.",
            r"0.55\linewidth",
        )
    )
    body.append(
        paper.figure(
            "kernel_cost",
            "Forward and backward time (ms, left) and memory"
            " (MiB, right) of one attention against the sequence length N, per"
            " backend (and device, where several: the median over the head dims and masks"
            " timed); only rows that ran are drawn.",
        )
    )
    return section("Cost of attention", "cost", body)


ATTENTION_STATS = ["entropy_mean", "max_weight_mean", "argmax_on_top_key_share", "chance_share"]


def attention_section(paper: Paper) -> str:
    study = paper.study
    body = []
    nan = float("nan")
    per_run = []  # one row per run: its variant and the cross-attention statistics (or NaN)
    for run, table in sorted(study.attention.items()):
        found = attention_summary(table)
        cross = found.get("Cross") or found.get("LastCross") or {}
        stats = {k: cross.get(k, nan) for k in ATTENTION_STATS}
        per_run.append({"variant": variant_of(run), **stats})
    per_variant = (
        pd.DataFrame(per_run, columns=["variant", *ATTENTION_STATS])
        .groupby("variant")
        .agg(seeds=("entropy_mean", "count"), **{k: (k, "mean") for k in ATTENTION_STATS})
    )
    rows = [
        [latex.name(variant), str(int(row.seeds)) if row.seeds else "--"]
        + ["--" if math.isnan(row[k]) else number(row[k], 3) for k in ATTENTION_STATS]
        for variant, row in per_variant.iterrows()
    ]
    measured = per_variant[per_variant.seeds > 0]
    above = [
        latex.name(variant)
        for variant, row in measured.iterrows()
        if row.argmax_on_top_key_share > 2 * row.chance_share
    ]
    if len(measured):
        body.append(
            "Table~\\ref{tab:attention} summarises the cross-attention rows of each analysed"
            " model over the first test sentences, averaged over its seeds: the row entropy"
            " divided by the log of the number of readable keys (one for a uniform row, zero for"
            " a one-hot row), the mean largest weight, and how often the largest weight lands on"
            " the key that gathers the most weight in the sentence, against the share expected by"
            " chance. "
            + (
                f"In {runs_named(above, len(measured), 'model')} that share is more than twice"
                " chance: one key takes the"
                " largest weight whatever the target piece, which describes how the model routes"
                " information, not which source word explains a translation. "
                if above
                else "No model puts its largest weight on one key much more often than chance. "
            )
        )
        body.append(
            "\\begin{table}[htbp]\\centering\\small\n"
            + latex.tabular(
                ["model", "seeds", "row entropy", "max weight", "top-key share", "chance"],
                rows,
                "lrrrrr",
            )
            + "\\caption{Cross attention of the trained models, mean over seeds (teacher-forced on"
            " the first sentences of the analysis test set). Rule \\texttt{attention\\_maps},"
            " \\texttt{results/analysis/attention\\_<run>.csv}.}\\label{tab:attention}\n"
            "\\end{table}"
        )
    else:
        body.append(
            "The attention analysis of trained models is pending: no"
            " \\texttt{results/analysis/attention\\_*.csv} with attention maps in this"
            " build. "
        )
    body.append(paper.verdict_sentence("B5"))
    base_runs = (
        set(paper.facts.loc[paper.facts["sweep_key"] == "", "run"])
        if not paper.facts.empty
        else set()
    )
    drawn = [
        stem
        for stem in paper.figures
        if stem.startswith("alignment_")
        and stem.removeprefix("alignment_") in study.alignment
        and stem.removeprefix("alignment_") in base_runs
    ]
    if not drawn:
        body.append(
            "Alignment heatmaps are pending: the analysis wrote no alignment of an"
            " example sentence for a base model with attention. "
        )
    for stem in sorted(drawn):
        run = stem.removeprefix("alignment_")
        table = study.alignment[run]
        heads = table["head"].nunique() if "head" in table else 1
        body.append(
            paper.figure(
                stem,
                f"Cross-attention weights of \\texttt{{{escape(run)}}} for"
                " one test sentence, teacher-forced: rows are target pieces,"
                " columns source pieces; grey scale from white (0) to black (the largest weight)."
                + (
                    " The last decoder layer, averaged over heads, then head by head."
                    if heads > 1
                    else ""
                ),
                r"\linewidth" if heads > 1 else r"0.5\linewidth",
            )
        )
    return section("What the trained models attend to", "attention", body)


def probes_section(paper: Paper) -> str:
    claims = paper.study.claims
    body = []
    if claims.empty or "id" not in claims:
        claims = pd.DataFrame({"id": pd.Series(dtype=str), "verdict": pd.Series(dtype=str)})
        body.append("The probe verdicts are pending: the claims ledger was not written. ")
    for group, name, label in (
        ("A", "worked examples", "worked"),
        ("B", "statistical claims", "statistical"),
        ("C", "counting claims", "counting"),
    ):
        rows = claims[claims["id"].astype(str).str.startswith(group)]
        text = f"\\paragraph{{{name.capitalize()}.}}\\label{{sec:probes-{label}}} "
        if rows.empty:
            body.append(text + f"The ledger of this build has no {name}. ")
            continue
        counts = rows["verdict"].value_counts()
        text += (
            f"Of the {len(rows)} {name} ({escape(rows['id'].iloc[0])}--"
            f"{escape(rows['id'].iloc[-1])}), "
            + words_list([f"{n} {escape(v)}" for v, n in counts.items()])
            + ". "
        )
        shown = rows if group == "B" else rows[rows["verdict"] != "reproduced"]
        for _, row in shown.iterrows():
            text += paper.verdict_sentence(str(row["id"]))
        body.append(text)
    body.append(
        paper.figure(
            "spread",
            "Standard deviation of the score $q\\cdot k$ of random"
            " unit-variance vectors against their length $d$, unscaled and"
            " divided by $\\sqrt d$; dashed: $\\sqrt d$.",
            r"0.55\linewidth",
        )
    )
    body.append(
        paper.figure(
            "saturation",
            "Softmax saturation against $d$: the share of rows"
            " whose largest weight exceeds the threshold (left) and the norm of"
            " the softmax Jacobian (right), unscaled and scaled.",
        )
    )
    body.append(
        paper.figure(
            "collapse",
            "Distance of the token vectors from their mean,"
            " relative to their size, after each layer of four random stacks.",
            r"0.6\linewidth",
        )
    )
    return section("Worked, statistical and counting claims", "probes", body)


def comparisons_paragraph(paper: Paper) -> str:
    """Every paired comparison of the config on the whole test set, its direction chosen by
    whether the interval of the difference excludes zero."""
    table = paper.study.comparisons
    needed = {"comparison", "system_a", "system_b", "delta", "ci_low", "ci_high"}
    if table.empty or not needed <= set(table):
        return (
            "Paired comparisons between systems are pending: "
            + (
                "the comparisons table is empty (no configured pair was trained, or too few seeds)"
                if needed <= set(table)
                else "no comparisons table was written"
            )
            + ". "
        )
    rows = table[table.get("bucket", pd.Series("all", index=table.index)).astype(str) == "all"]
    if "metric" in rows:
        rows = rows[rows["metric"] == "bleu"]
    sentences = []
    for _, row in rows.iterrows():
        if row["ci_low"] > 0:
            word = "better than"
        elif row["ci_high"] < 0:
            word = "worse than"
        else:
            word = "not distinguishable from"
        sentences.append(  # delta = system_b - system_a (evaluate/compare.py)
            f"{latex.name(row['system_b'])} is {word} {latex.name(row['system_a'])}"
            rf" (\texttt{{{escape(row['comparison'])}}}"
            + (rf" on \texttt{{{escape(row['test_set'])}}}" if "test_set" in row else "")
            + ", BLEU difference"
            f" {interval(row['delta'], row['ci_low'], row['ci_high'], 2)}"
            + (
                f", {int(row['seeds'])} seeds"
                if "seeds" in row and not pd.isna(row["seeds"])
                else ""
            )
            + ")"
        )
    if not sentences:
        return "No paired comparison covers a whole test set in this build. "
    return (
        r"From \texttt{results/tables/comparisons.csv}, paired comparisons on whole test sets"
        r" (differences with 95\% intervals): " + "; ".join(sentences) + ". "
    )


def results(paper: Paper) -> str:
    parts = [
        comparisons_paragraph(paper) + "\n",
        length_section(paper),
        score_function_section(paper),
    ]
    for name, title, claims, keys in GROUPS[2:]:
        parts.append(sweep_section(paper, name, title, claims, keys))
    parts += [
        other_sweeps_section(paper),
        training_section(paper),
        cost_section(paper),
        attention_section(paper),
        probes_section(paper),
    ]
    overview = results_table(paper.study, paper.test_set)
    if overview:
        parts.insert(
            0,
            "Table~\\ref{tab:results} lists every variant of this configuration."
            "\n\\begin{table}[htbp]\\centering\\small\n"
            + overview
            + f"\\caption{{Every variant on \\texttt{{{escape(paper.test_set)}}}: BLEU"
            " with its 95\\% bootstrap interval (seeds pooled: mean and union of"
            " intervals) and chrF. Rule \\texttt{paper\\_sections}, from"
            " \\texttt{results/tables/scores.csv}.}\\label{tab:results}\n\\end{table}"
            "\n\\FloatBarrier\n",
        )
    else:
        parts.insert(0, "No run was scored in this build: the scores table is missing or empty. \n")
    return "\n".join(p for p in parts if p)
