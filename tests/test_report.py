"""The report on small synthetic result tables: facts from the tables, sentences chosen by the
templates from the facts, pending sentences for missing evidence, figures that draw what they
are given, LaTeX that compiles for any set of runs and seeds."""

from __future__ import annotations

import dataclasses
import json
import math
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from softlookup import intervals
from softlookup.claims.checks import REASONS, STATUSES
from softlookup.claims.verdicts import VERDICTS
from softlookup.report import build, families, labels, latex, render, wording
from softlookup.report.facts import claims as claim_facts
from softlookup.report.facts import front, pooling, sweeps, tables
from softlookup.report.facts import training as training_facts
from softlookup.report.figures import alignment, cost, probes, scores, style, training
from softlookup.report.study import Reference, load
from softlookup.tables import COMPARISON_COLUMNS, SEED_VARIANCE_COLUMNS

from .test_paper import overfull_boxes

ROOT = Path(__file__).resolve().parents[1]
BUCKETS = ["1-10", "11-15", "16-20", "21-30", "31-45", "46-60", ">60"]
WHERE = {"D1": "sec:length", "D2": "sec:scores", "D4": "sec:masking", "D5": "sec:heads"}


def variant_settings(variant: str) -> tuple[str, dict, dict]:
    """(base model, model settings, sweep) of a synthetic variant name."""
    base, *points = variant.split(".")
    model = {
        "gru_none": {"arch": "gru", "attention": "none"},
        "gru_additive": {"arch": "gru", "attention": "additive"},
        "gru_dot": {"arch": "gru", "attention": "dot"},
        "transformer": {"arch": "transformer", "attention": "dot", "heads": 4, "causal_mask": True},
    }[base]
    sweep = {}
    for point in points:
        key, value = point.split("-")
        sweep[key] = {"false": False, "true": True}.get(value, value)
    model = {**model, **sweep}
    return base, model, sweep


def make_results(
    root: Path,
    bleu: dict[str, float],
    *,
    seeds=(1,),
    drop: dict[str, float] | None = None,
    train_loss: dict[str, float] | None = None,
    verdicts: dict[str, str] | None = None,
) -> Path:
    """results/ with a scores table, runs, a ledger and a generation benchmark.

    bleu: variant -> overall BLEU; drop: variant -> BLEU lost from the first to the last bucket.
    """
    drop, train_loss = drop or {}, train_loss or {}
    results = root / "results"
    rows = []
    for variant, value in bleu.items():
        base, model, sweep = variant_settings(variant)
        for seed in seeds:
            run = f"{variant}-s{seed}"
            folder = results / "runs" / run
            folder.mkdir(parents=True)
            (folder / "config.json").write_text(
                json.dumps(
                    {
                        "run": run,
                        "variant": variant,
                        "base_model": base,
                        "sweep": sweep,
                        "seed": seed,
                        "model": model,
                        "train": {"epochs": 2},
                    }
                )
            )
            loss = train_loss.get(variant, 3.0)
            (folder / "meta.json").write_text(
                json.dumps(
                    {
                        "status": "ok",
                        "epochs": 2,
                        "parameters": 1000,
                        "train_wall_s": 5.0,
                        "train_tokens_per_s": 2000.0 if model["attention"] == "dot" else 1500.0,
                        "final_train_loss": loss,
                        "best_val_loss": loss + 0.5,
                        "environment": {
                            "python": "3.11",
                            "torch": "2",
                            "device": "cpu",
                            "device_name": "test cpu",
                            "threads": 1,
                        },
                    }
                )
            )
            pd.DataFrame(
                {
                    "epoch": [1, 2],
                    "steps": [10, 20],
                    "train_loss": [loss + 1, loss],
                    "val_loss": [loss + 1.2, loss + 0.5],
                    "target_tokens": [500, 500],
                    "wall_s": [2.5, 2.5],
                }
            ).to_csv(folder / "log.csv", index=False)
            common = {
                "run": run,
                "variant": variant,
                "base_model": base,
                "seed": seed,
                "status": "ok",
                "metric": "bleu",
                "signature": "nrefs:1|bs:100",
            }
            for test_set in ("test", "test.concat3"):
                rows.append(
                    {
                        **common,
                        "test_set": test_set,
                        "bucket": "all",
                        "value": value,
                        "ci_low": value - 1,
                        "ci_high": value + 1,
                    }
                )
                rows.append(
                    {
                        **common,
                        "test_set": test_set,
                        "bucket": "all",
                        "metric": "chrf",
                        "value": value + 20,
                        "ci_low": value + 19,
                        "ci_high": value + 21,
                    }
                )
                for i, bucket in enumerate(BUCKETS):
                    v = value - drop.get(base, 2.0) * i / (len(BUCKETS) - 1)
                    rows.append(
                        {
                            **common,
                            "test_set": test_set,
                            "bucket": bucket,
                            "value": v,
                            "ci_low": v - 1,
                            "ci_high": v + 1,
                        }
                    )
    (results / "tables").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(results / "tables" / "scores.csv", index=False)
    # compare writes it beside comparisons.csv (no family of two seeds here: no rows)
    pd.DataFrame(columns=SEED_VARIANCE_COLUMNS).to_csv(
        results / "tables" / "seed_variance.csv", index=False
    )
    # the coverage rule's table (evaluate.coverage), two estimates at two seeds
    pd.DataFrame(
        {"scenario": "means", "seeds": 2, "estimate": ["a-b", "a"], "studies": 100,
         "covered": [0.94, 0.96]}
    ).to_csv(results / "tables" / "coverage.csv", index=False)  # fmt: skip
    # D1's measure as the ledger reads it: the share of the first bucket's BLEU kept on the last
    share = {v: 1 - drop.get(variant_settings(v)[0], 2.0) / value for v, value in bleu.items()}
    write_comparisons(
        results,
        [
            comparison(
                "gru_none",
                v,
                share[v] - share["gru_none"],
                share[v] - share["gru_none"] - 0.03,
                share[v] - share["gru_none"] + 0.03,
                bucket=BUCKETS[-1],
                metric="bleu_share",
                mean_a=share["gru_none"],
                mean_b=share[v],
                se=0.015,
                se_a=0.01,
                se_b=0.01,
            )
            for v in ("gru_additive", "gru_dot")
            if "gru_none" in bleu and v in bleu
        ],
    )
    verdicts = verdicts or {}
    claims = [
        {
            "id": cid,
            "group": cid[0],
            "short": f"claim {cid} in a few words",
            "source": "E1",
            "expected": "more than 0.5",
            "measured": "0.75",
            "ci_low": 0.7,
            "ci_high": 0.8,
            "verdict": verdicts.get(cid, "reproduced"),
            "reason": "1 of 1 checks pass",
            "where": WHERE.get(cid, "sec:probes"),
            "rule": "probe",
            "outputs": "results/probes/x.csv",
            "config_hash": "abc",
            "python": "3.11",
        }
        for cid in ("A1", "B1", "C1", "D1", "D2", "D4", "D5")
    ]
    (results / "claims").mkdir(parents=True)
    pd.DataFrame(claims).to_csv(results / "claims" / "claims.csv", index=False)
    checks = [
        {
            "claim_id": c["id"],
            "check": 1,
            "label": "the value",
            "op": "above",
            "expected": 0.5,
            "fmt": ".2f",
            "status": "pass",
            "reason": "beyond_threshold",
            "value": 0.75,
            "value_text": "0.75",
            "ci_low": 0.7,
            "ci_high": 0.8,
            "output": "results/probes/x.csv",
            "headline": True,
            "p_adjusted": float("nan"),
            "facts": "{}",
        }
        for c in claims
    ]
    pd.DataFrame(checks).to_csv(results / "claims" / "checks.csv", index=False)
    (results / "bench").mkdir(parents=True)
    pd.DataFrame(
        {
            "device": "cpu",
            "new_tokens": [25, 50, 100, 200],
            "speedup": [1.5, 2, 3, 5],
            "identical": True,
            "last_step_cache_s": [1e-3, 1.1e-3, 1.2e-3, 1.3e-3],
            "last_step_recompute_s": [1e-3, 2e-3, 4e-3, 8e-3],
        }
    ).to_csv(results / "bench" / "generation_cpu.csv", index=False)
    return results


TRAIN = {
    "epochs": 2,
    "patience": 5,
    "lr": 0.002,
    "warmup_steps": 5,
    "max_tokens": 900,
    "label_smoothing": 0.1,
}
CONFIG = {
    "data": {"corpus": "multi30k", "bpe_vocab_size": 500},
    "train": TRAIN,
    "evaluate": {"test_sets": ["test", "test.concat3"]},
    "bench": {"devices": ["cpu"]},
}


def generate(results: Path, figures: list[str] = (), config: dict = CONFIG) -> dict[str, str]:
    """Every part of the paper rendered from `results`, as LaTeX reads it: whitespace flattened
    (a sentence may wrap anywhere in a template), a line ending in % joined to the next."""
    config_file = results / "config.json"
    config_file.write_text(json.dumps(config))
    study = load(results, config_file)
    parts = render.write(study, list(figures), results / "generated", ["config/test.yaml"])
    return {
        name: " ".join(re.sub(r"(?<!\\)%\n\s*", "", text).split()) for name, text in parts.items()
    }


def text_of(files: dict[str, str]) -> str:
    return "\n".join(files.values())


def assert_no_placeholders(text: str) -> None:
    for bad in ("not measured", "??", "nan", "None", "n/a"):
        assert bad not in text, bad


IDENTIFIER = re.compile(r"\\?_|-s\d\b|Rule ")  # run ids, comparison names, labels, captions


def assert_no_identifiers(text: str) -> None:
    found = IDENTIFIER.search(text)
    assert found is None, f"identifier {found and found[0]!r} in {text!r}"


BASE = {"gru_none": 10.0, "gru_additive": 20.0, "gru_dot": 21.0, "transformer": 25.0}


def comparison(a: str, b: str, delta: float, low: float, high: float, **extra) -> dict:
    """One comparisons.csv row with every column of tables.COMPARISON_COLUMNS: one seed, so no
    seed variance (se_seed empty, seed_df 0) and the sentence bootstrap's normal interval
    (df inf); se from the interval, each system's se_a = se_b = se / sqrt(2) unless given."""
    se = (high - low) / (2 * intervals.critical(math.inf))
    row = {
        "comparison": f"{b}_vs_{a}",
        "system_a": a,
        "system_b": b,
        "test_set": "test",
        "epoch": "final",
        "bucket": "all",
        "metric": "bleu",
        "mean_a": 20.0,
        "mean_b": 20.0 + delta,
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "p_value": 0.001,
        "se": se,
        "se_seed": math.nan,
        "se_sentence": se,
        "df": math.inf,
        "seed_df": 0,
        "se_a": se / math.sqrt(2),
        "df_a": math.inf,
        "se_b": se / math.sqrt(2),
        "df_b": math.inf,
        "seed_deltas": "{}",
        "seeds": 1,
        "n_sentences": 100,
        "family": "gru",
        "method": "paired bootstrap",
        **extra,
    }
    for side in ("a", "b"):  # each system's own interval, as compare.in_range writes it
        half = intervals.critical(math.inf) * row[f"se_{side}"]
        row.setdefault(f"ci_low_{side}", max(0.0, row[f"mean_{side}"] - half))
        row.setdefault(f"ci_high_{side}", row[f"mean_{side}"] + half)
    assert set(row) == set(COMPARISON_COLUMNS), set(row) ^ set(COMPARISON_COLUMNS)
    return row


def write_comparisons(results: Path, rows: list[dict]) -> None:
    pd.DataFrame(rows, columns=COMPARISON_COLUMNS).to_csv(
        results / "tables" / "comparisons.csv", index=False
    )


# ---- sentences chosen by the templates from the facts -------------------------------------------


def test_prose_states_a_p_value_with_its_relation_and_a_table_gives_the_number():
    assert render.p_stated(0.00312) == "p = 0.003" and render.p_stated(1e-9) == "p $<$ 0.001"
    assert render.p_value(0.00312) == "0.003" and render.p_value(1e-9) == "$<$ 0.001"


def test_length_sentence_follows_the_measurement(tmp_path):
    shown = generate(
        make_results(tmp_path / "a", BASE, drop={"gru_none": 8, "gru_additive": 1, "gru_dot": 1})
    )
    hidden = generate(
        make_results(tmp_path / "b", BASE, drop={"gru_none": 1, "gru_additive": 4, "gru_dot": 4})
    )
    # the shares are the ledger's rows (comparisons.csv, bleu_share, the longest bucket), with
    # their intervals; the direction is the ledger's verdict sentence
    text = " ".join(shown["length"].split())
    assert "the fixed-vector model keeps 0.20 [0.18, 0.22]," in text
    assert (
        "the models with attention between 0.95 [0.93, 0.97] (GRU, additive) and 0.95 [0.93, 0.97]"
        " (GRU, dot; Table~\\ref{tab:length-shares}). Compared with the fixed vector on the same"
        " sentences, their differences run from +0.75 [+0.72, +0.78] to +0.75"
        " [+0.72, +0.78] (largest p = 0.001)."
    ) in text
    assert "the fixed-vector model keeps 0.90 [0.88, 0.92]," in hidden["length"]
    for files in (shown, hidden):
        assert_no_placeholders(text_of(files))


def test_threats_name_the_head_count_stood_in_for_and_the_missing_converged_study(tmp_path):
    bleu = {**BASE, "transformer.heads-8.d_k-16": 24.0}
    config = {**CONFIG, "convergence": {"references": [], "effects": {}}}
    files = generate(make_results(tmp_path, bleu), config=config)
    # 8 heads 16 wide: the width of Vaswani's h = 32, not its count
    assert (
        "the most heads trained here are 8, of width $d_k = 16$, so claim D5 tests heads as"
        " narrow as that setting's but not its head count"
    ) in files["threats"]
    assert "This study reads no reference of longer training" in files["threats"]
    assert "is yet checked against longer training" in files["abstract"]
    assert "Narrow margins" not in files["threats"]  # one seed: how a rerun moves is unknown


@pytest.mark.parametrize(
    "p_value, said",
    [
        (0.0025, "D5's ``the value'' (82\\%)"),  # D5's 8 heads vs 1 at twelve seeds
        (1e-6, "would give all 2 checks a test decides their status again at least"),
    ],
)
def test_threats_name_the_checks_a_rerun_could_turn(tmp_path, p_value, said):
    """A check that passes by a narrow margin is named with the chance a rerun passes it again
    (claims.checks.comparison.repeat_chance); with none narrow, the item says so."""
    results = make_results(tmp_path, BASE, seeds=(1, 2))
    numbers = {"df": "43.6", "se": "0.15"}  # checks.csv's cells, as set_claim writes them
    set_claim(results, "D1", "reproduced", "pass", "beyond_threshold", p_value="1e-9",
              p_adjusted="1e-9", **numbers)  # fmt: skip
    set_claim(results, "D5", "reproduced", "pass", "beyond_threshold", p_value=str(p_value),
              p_adjusted=str(2 * p_value), **numbers)  # fmt: skip
    threats = generate(results)["threats"]
    assert "Each variant ran with 2 seeds; each interval has the seed variance" in threats
    assert said in threats
    assert ("D1's" in threats) is False  # far from its threshold: not named


def test_masking_sentence_follows_the_measurement(tmp_path):
    bleu = {**BASE, "transformer.causal_mask-false": 2.0}
    copying = generate(
        make_results(tmp_path / "a", bleu, train_loss={"transformer.causal_mask-false": 0.5})
    )
    no_copying = generate(
        make_results(
            tmp_path / "b",
            {**bleu, "transformer.causal_mask-false": 25.0},
            train_loss={"transformer.causal_mask-false": 3.5},
        )
    )
    assert "With no causal mask, BLEU is 2.0 [1.0, 3.0]" in copying["masking"]
    # separate intervals (2.0 [1, 3] against 20) never decide that generation is worse
    assert "whether it is worse is not decided here" in copying["masking"]
    results = tmp_path / "a" / "results"
    write_comparisons(
        results, [comparison("transformer", "transformer.causal_mask-false", -18.0, -19.0, -17.0)]
    )
    paired = generate(results)["masking"]
    assert "worse on the same sentences: the pattern expected of a" in paired
    assert "measures directly" in paired
    assert (
        "not lower in training, so these runs do not show the copying pattern"
        in (no_copying["masking"])
    )
    # the padding mask hides filler keys: its switch is judged on generation, never as copying
    padding = generate(
        make_results(
            tmp_path / "c",
            {**BASE, "transformer.padding_mask-false": 24.0},
            train_loss={"transformer.padding_mask-false": 0.5},
        )
    )
    assert "With no padding mask, BLEU is 24.0" in padding["masking"]
    assert "its generation is not compared with the base model's" in padding["masking"]
    assert "copying" not in padding["masking"] and "copies" not in padding["masking"]


def test_score_function_sentence_is_decided_by_the_paired_test_only(tmp_path):
    """Separate intervals never decide a difference (issue 21): without a paired comparison the
    sentence says so; with one it prints the paired difference."""
    ahead = generate(make_results(tmp_path / "b", {**BASE, "gru_dot": 30.0}))
    assert "reaches 30.0 [29.0, 31.0] BLEU against the additive score's" in ahead["scores"]
    assert "whether they differ is not decided here" in ahead["scores"]
    assert "higher than" not in ahead["scores"] and "intervals from" not in ahead["scores"]
    assert "it trains at 2,000 target tokens per second against 1,500" in ahead["scores"]
    results = tmp_path / "b" / "results"
    write_comparisons(results, [comparison("gru_additive", "gru_dot", 10.0, 9.2, 10.8)])
    paired = generate(results)["scores"]
    assert "the dot-product score differs from the additive one by +10.00 [+9.20, +10.80]" in paired


def test_a_sweep_on_two_models_compares_each_with_its_own_base(tmp_path):
    capped = {**BASE, "gru_none.max_source_words-20": 9.5, "gru_additive.max_source_words-20": 19.0}
    results = make_results(tmp_path, capped)
    text = generate(results)["sweeps"]
    rows = r"GRU, no attention & base model & 10.0 [9.0, 11.0] & 1,000 & 3.00 \tabularnewline"
    assert rows.replace(" \\tab", "\\tab") in text
    assert r"GRU, no attention & trained on $\leq 20$ words & 9.5 [8.5, 10.5]" in text
    assert r"GRU, additive & trained on $\leq 20$ words & 19.0 [18.0, 20.0]" in text
    members = sweeps.members(load(results), ["max_source_words"])
    assert set(members["series"]) == {"GRU, no attention", "GRU, additive"}  # a line per model
    # the configured paired comparisons of the family, each described by what it changes
    write_comparisons(
        results,
        [
            comparison("gru_additive.max_source_words-20", "gru_additive", 1.0, 0.6, 1.4),
            comparison("gru_none", "gru_additive", 10.0, 9.0, 11.0),
        ],
    )
    text = generate(results)["sweeps"]
    assert (
        r"GRU, additive: base model $-$ trained on $\leq 20$ words & +1.00 [+0.60, +1.40]" in text
    )
    assert r"GRU, additive $-$ GRU, no attention & +10.00 [+9.00, +11.00]" in text


def test_padding_weight_names_only_the_runs_where_it_is_not_zero(tmp_path):
    results = make_results(tmp_path, BASE)
    (results / "analysis").mkdir()
    for run, mass in [("gru_additive-s1", 0.0), ("gru_dot-s1", 0.0), ("transformer-s1", 0.06)]:
        pd.DataFrame([{"map": "cross", "quantity": "padding_mass_mean", "value": mass}]).to_csv(
            results / "analysis" / f"attention_{run}.csv", index=False
        )
    text = generate(results)["masking"]
    assert "In 2 of the 3 analysed runs padding keys receive exactly zero weight" in text
    assert "mean weight per row of 0.060 (Transformer, seed 1)" in text
    assert "GRU, dot" not in text  # the masked runs are counted, not listed


# a check's outcome for each verdict of a one-check claim (status, reason)
OUTCOME_OF = {
    "reproduced": ("pass", "beyond_threshold"),
    "partly": ("fail", "wrong_side"),
    "not reproduced": ("fail", "wrong_side"),
    "inconclusive": ("inconclusive", "interval_straddles"),
    "pending": ("pending", "not_run"),
}


def set_claim(results: Path, claim: str, verdict: str, status: str, reason: str, **check):
    """Give a claim of make_results' ledger a verdict and its one check a status and reason."""
    checks = pd.read_csv(results / "claims" / "checks.csv", dtype=str)
    at = checks["claim_id"] == claim
    checks.loc[at, "status"], checks.loc[at, "reason"] = status, reason
    for column, value in check.items():
        checks.loc[at, column] = value
    checks.to_csv(results / "claims" / "checks.csv", index=False)
    claims = pd.read_csv(results / "claims" / "claims.csv")
    claims.loc[claims["id"] == claim, ["verdict", "reason"]] = [verdict, reason]
    claims.to_csv(results / "claims" / "claims.csv", index=False)


def test_each_verdict_has_its_own_sentence_without_identifiers(tmp_path):
    """Whatever the wording, each verdict gets a sentence of its own naming the claim."""
    said = {}
    for verdict, (status, reason) in OUTCOME_OF.items():
        results = make_results(tmp_path / verdict.replace(" ", "_"), BASE)
        set_claim(results, "D5", verdict, status, reason)
        heads = generate(results)["heads"]
        sentence = next(line for line in heads.split(". ") if "Claim D5 (" in line)
        assert_no_identifiers(sentence)
        said[verdict] = sentence
    assert len(set(said.values())) == len(OUTCOME_OF)


def test_missing_evidence_reads_as_pending(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    files = generate(results)
    text = text_of(files)
    assert "pending" in text and "Claim D1 has no row in the study's claims ledger" in text
    assert_no_placeholders(text)
    assert "no Snakemake benchmark files" in files["reproducibility"]
    assert "The discussion of the verdicts is pending" in files["discussion"]


def seed_variance_row(variant: str, sd: float, seeds: int = 2) -> dict:
    """A whole-set BLEU row of seed_variance.csv (final models) of the family 'gru, 2 epochs'."""
    return {
        "family": "gru, 2 epochs",
        "variant": variant,
        "test_set": "test",
        "epoch": "final",
        "bucket": "all",
        "metric": "bleu",
        "seeds": seeds,
        "seed_sd": sd,
    }


SEED_SD_CASES = {  # seed_variance.csv's rows -> what the appendix says
    "drawn": (
        [seed_variance_row("gru_additive", 0.2), seed_variance_row("gru_dot", 1.4)],
        "They range from 0.20 to 1.40 BLEU",
    ),
    "one seed": (
        [seed_variance_row(v, float("nan"), seeds=1) for v in ("gru_additive", "gru_dot")],
        "every variant was trained with one seed, so there is no seed variance",
    ),
    "one variant of two seeds": (
        [seed_variance_row("gru_additive", 0.3), seed_variance_row("gru_dot", float("nan"), 1)],
        "no family has two variants trained with two seeds or more",
    ),
    "empty": ([], "no comparison was made in this study"),
}


def seed_sd_text(results: Path) -> str:
    """The seed-variance appendix alone, rendered from `results` with its figure drawn
    (flattened as `generate` flattens)."""
    env = render.environment(TEMPLATES)
    env.globals["figures"] = {"seed_variance": "figure_seed_variance"}
    text = env.get_template("pooling.tex").render(pooling.section(load(results)))
    return " ".join(re.sub(r"(?<!\\)%\n\s*", "", text).split())


@pytest.mark.parametrize("case", sorted(SEED_SD_CASES))
def test_the_seed_variance_appendix_says_no_variance_is_pooled_and_why(tmp_path, case):
    rows, said = SEED_SD_CASES[case]
    results = make_results(tmp_path, BASE, seeds=(1, 2))
    pd.DataFrame(rows, columns=SEED_VARIANCE_COLUMNS).to_csv(
        results / "tables" / "seed_variance.csv", index=False
    )
    text = seed_sd_text(results)
    assert said in text and "never pooled over other variants" in text
    drawn = case == "drawn"
    assert ("Figure~\\ref{fig:seed_variance}" in text) == drawn
    assert ("\\label{fig:seed_variance}" in text) == drawn
    assert not re.search(r"gru\\?_", text)  # variants by their labels
    assert_no_placeholders(text)


def test_a_diverged_run_is_said_in_words(tmp_path):
    results = make_results(tmp_path, BASE)
    meta = results / "runs" / "gru_dot-s1" / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "status": "diverged"}))
    (results / "runs" / "gru_none-s1" / "meta.json").unlink()  # a run that never finished
    files = generate(results)
    said = r"GRU, dot (diverged)"
    assert said in files["training"]
    assert r"GRU, no attention (missing)" in (files["training"])
    assert r"GRU, dot & \emph{diverged}" in files["results"]
    assert said in files["threats"]


@pytest.mark.parametrize(("delta", "said"), [(-4.3, "on average it trailed"), (1.2, "it led")])
def test_the_discussion_says_which_way_the_dot_score_went(tmp_path, delta, said):
    from softlookup.report.facts import back, common

    study = load(make_results(tmp_path, BASE))
    facts = back.discussion(study)
    row = {"delta": delta, "ci_low": delta - 1.0, "ci_high": delta + 1.0, "p_value": 0.04}
    facts["surprises"] |= {"dot_vs_additive": row, "scaled_vs_dot": row}
    text = " ".join(
        render.environment(ROOT / "paper" / "sections")
        .get_template("discussion.tex")
        .render(**common(study, [], []), **facts)
        .split()
    )
    assert said in text
    assert ("Luong et al. found the opposite order" in text) is (delta < 0)
    assert not re.search(r"dot score changed BLEU by [^:;]*\] BLEU", text)  # the unit once


def test_a_pending_claim_says_why_once(tmp_path):
    results = make_results(tmp_path, BASE)
    set_claim(results, "D1", "pending", "pending", "not_run", value="", ci_low="", ci_high="")
    files = generate(results)
    length = files["length"]
    sentence = next(line for line in length.split(". ") if "Claim D1 (" in line)
    assert "no verdict yet" in sentence and "the value" in sentence  # the verdict and the check
    assert_no_placeholders(length)
    assert_no_identifiers(sentence)
    # said once more in the discussion, not as the same sentence
    assert "The claim that claim D1 in a few words has no verdict yet" in files["discussion"]
    assert "Claim D1 (claim D1 in a few words)" not in files["discussion"]
    assert "For the length drop" not in files["discussion"]  # not run here: nothing to settle
    assert "pending" not in files["threats"].lower()  # and not again among the threats


def test_the_headline_table_and_the_discussion_read_the_verdicts(tmp_path):
    results = make_results(tmp_path, BASE)
    set_claim(
        results,
        "D2",
        "partly",
        "fail",
        "equivalence_failed",
        op="equivalent",
        allowed="1.0",
        p_adjusted="0.003",
        value="-4.34",
        ci_low="-5.14",
        ci_high="-3.60",
    )
    files = generate(results)
    table = files["results"][: files["results"].index(r"\label{tab:headline}")]
    # one row per claim on trained translators: measured, what its check asks, interval, the p
    # of the headline check as judged, verdict, trained longer, section
    # (the measurement tagged with its check: one quantity, one number)
    row = r"\Quantity{D2.1}{-4.34 [-5.14, -3.60]} & within \ensuremath{\pm} 1 & "
    assert row + r"0.003 & \textit{partly} & -- & \ref{sec:scores}" in table
    assert r"D2 & claim D2 in a few words & " in table
    assert r"\Quantity{D4.1}{0.75 [0.70, 0.80]} & \textgreater{} 0.50 & -- & " in table
    assert "D4 &" in table and "D5 &" in table and "A1 &" not in table and "C1 &" not in table
    discussion = files["discussion"]
    assert "6 of the 7 claims reproduced; on the trained translators and kernels" in discussion
    # the claims that fell short are listed once, without their ids; their checks are named in
    # the results
    assert "could not be decided: ``claim D2 in a few words''; Section" in discussion
    assert "What the failures say" not in discussion  # no heading over nothing
    assert_no_identifiers(discussion)


def test_a_claim_judged_in_another_section_is_not_repeated_in_the_probes(tmp_path):
    """A claim's verdict sentence stands in the section the ledger places it in: B5 placed in
    the attention section is said there, and the probes' paragraph counts it and points there;
    placed among the probes, it is said there and not beside the attention analysis."""
    results = make_results(tmp_path, BASE, verdicts={"B1": "partly"})
    set_claim(results, "B1", "partly", "fail", "wrong_side")
    for name, key in (("claims", "id"), ("checks", "claim_id")):
        table = pd.read_csv(results / "claims" / f"{name}.csv", dtype=str)
        b5 = table[table[key] == "B1"].assign(**{key: "B5"})
        if "short" in b5:
            b5["short"] = "claim B5 in a few words"
        if "where" in b5:
            b5["where"] = "sec:attention"
        pd.concat([table, b5]).to_csv(results / "claims" / f"{name}.csv", index=False)
    files = generate(results)
    assert "Of the 2 statistical claims (B1--B5), 2 partly." in files["probes"]
    assert "Claim B1 (claim B1 in a few words)" in files["probes"]
    assert "Claim B5 is judged in Section~\\ref{sec:attention}." in files["probes"]
    assert "Claim B5 (claim B5" not in files["probes"]
    assert "Claim B5 (claim B5 in a few words)" in files["attention"]
    for name in ("claims", "checks"):  # the ledger places B5 among the probes instead
        path = results / "claims" / f"{name}.csv"
        table = pd.read_csv(path, dtype=str)
        if "where" in table:
            table.loc[table["id"] == "B5", "where"] = "sec:probes"
        table.to_csv(path, index=False)
    files = generate(results)
    assert "Claim B5 (claim B5" in files["probes"] and "Claim B5 (" not in files["attention"]


def test_claims_ledger_macros_and_checks(tmp_path):
    results = make_results(tmp_path, BASE)
    set_claim(results, "D4", "not reproduced", "fail", "wrong_side")
    set_claim(
        results,
        "D5",
        "inconclusive",
        "inconclusive",
        "floor",
        facts=json.dumps(
            {
                "floor": {"metric": "bleu", "bucket": "shortest", "below": 5},
                "below_floor": {"gru_none": 2.7},
            }
        ),
    )
    set_claim(results, "A1", "reproduced", "pass", "within_tolerance", op="approx", allowed=0.3)
    files = generate(results)
    # the appendix's "why" is kept for a failure and left out where it would restate the ask
    rows = files["checks"][files["checks"].index("endhead") :]
    assert "where the claim expects" in rows and "of the expected" not in rows
    headline = files["results"]
    assert r"\Quantity{D4.1}{0.75 [0.70, 0.80]} & " in headline
    assert r"\textbf{not reproduced}" in headline and r"\textit{inconclusive}" in headline
    assert r"\ref{sec:masking}" in headline and r"\ref{tab:headline}" in files["claims"]
    counted = re.search(
        r"Across the study, (\d+) of the (\d+) claims are reproduced, (\d+) partly,"
        r"\s+(\d+) not reproduced,\s+(\d+) inconclusive and (\d+) pending",
        files["claims"],
    )
    assert counted and list(map(int, counted.groups())) == [5, 7, 0, 1, 1, 0]
    assert_no_identifiers(files["checks"][files["checks"].index("endhead") :])
    assert r"\newcommand{\ClaimVerdictDFour}{not reproduced}" in files["macros"]
    assert r"\newcommand{\ClaimsNotReproduced}{1}" in files["macros"]
    assert r"\newcommand{\ClaimsInconclusive}{1}" in files["macros"]
    assert "tab:checks" in files["checks"]
    (tmp_path / "none" / "results").mkdir(parents=True)
    missing = generate(tmp_path / "none" / "results")  # no ledger at all
    assert "was not written in this study" in missing["claims"]


def test_latex_helpers():
    assert latex.macro_name("bleu", "gru_additive-s1") == "BleuGruAdditiveSOne"
    assert latex.macro_name("A1") == "AOne"
    assert latex.escape("a_b & 50%") == r"a\_b \& 50\%"
    assert latex.escape("1.5e-07") == r"\ensuremath{1.5\times10^{-7}}"
    # an option keeps both hyphens (LaTeX sets -- as an en dash); an en dash stays one
    assert latex.escape("N > --naive-max-len 4096") == r"N \textgreater{} -{}-naive-max-len 4096"
    assert latex.escape("1–10") == "1--10" and latex.escape("Bahdanau–Luong") == "Bahdanau--Luong"
    assert latex.interval(21.04, 20, 22.5) == "21.0 [20.0, 22.5]"
    assert latex.interval(1.5, 0.6, 2.4, 2, sign=True) == "+1.50 [+0.60, +2.40]"
    assert latex.number(float("nan")) == "--"
    # a bound that rounds to zero has no sign: [-0.00, 0.01] read as if below zero
    assert latex.interval(0.005, -0.004, 0.012, 2) == "0.01 [0.00, 0.01]"
    assert latex.number(-0.004, 2, sign=True) == "0.00" and latex.number(-1234.5) == "-1,234.5"
    assert render.figure(-0.0004, ".2f") == "0.00" and render.figure(-1.5e-7) != "0"
    assert "not measured" not in latex.escape("x: not measured in this configuration")
    assert latex.small(0) == "0" and latex.small(1.2e-6) == r"\ensuremath{1.2\times10^{-6}}"


def test_variants_are_labelled_for_a_reader():
    models = {
        "gru_none": {"arch": "gru", "attention": "none"},
        "gru_scaled_dot": {"arch": "gru", "attention": "scaled_dot"},
        "transformer": {"arch": "transformer", "enc_layers": 2, "dec_layers": 2},
        "sweep_transformer": {"arch": "transformer", "enc_layers": 1, "dec_layers": 1},
    }
    base = labels.base_labels(models)
    assert base["gru_none"] == "GRU, no attention" and base["gru_scaled_dot"] == "GRU, scaled dot"
    assert labels.variant_label(base["sweep_transformer"], {"d_k": 128, "scale": False}) == (
        "Transformer, 1+1 layers, $d_k = 128$, unscaled"
    )
    assert (
        labels.variant_label(base["transformer"], {"heads": 1}) == "Transformer, 2+2 layers, 1 head"
    )
    same_size = {**models, "sweep_transformer": models["transformer"]}
    assert labels.base_labels(same_size)["sweep_transformer"] == "Transformer, sweep model"
    assert labels.base_labels(same_size)["transformer"] == "Transformer"
    assert labels.setting_label("causal_mask", False) == "no causal mask"
    assert labels.setting_label("some_key", "a_b") == "some key = a b"


def test_the_setup_names_the_variants_trained_on_more_seeds():
    runs = pd.DataFrame(
        [
            (v, label, s)
            for v, label, n in [("a", "A", 2), ("b", "B", 2), ("c", "C", 4)]
            for s in range(1, n + 1)
        ],
        columns=["variant", "label", "seed"],
    )
    assert front.seed_sets(runs) == ([1, 2], [{"labels": ["C"], "seeds": [3, 4]}])
    assert front.seed_sets(runs[runs.variant != "c"]) == ([1, 2], [])


@pytest.mark.parametrize(
    "numbers, text",
    [
        ([1], "seed 1"),
        ([2, 1], "seeds 1 and 2"),
        ([1, 2, 3], "seeds 1--3"),
        ([3, 4, 5, 6, 7, 8, 9, 10, 11, 12], "seeds 3--12"),
        ([1, 2, 5, 6, 7, 9], "seeds 1, 2, 5--7 and 9"),
    ],
)
def test_seeds_in_a_row_read_as_a_range(numbers, text):
    assert render.seed_list(numbers) == text
    # a committed reference's label (the convergence tables) says its seeds the same way
    empty = pd.DataFrame()
    reference = Reference(
        "converged_heads", empty, empty, empty, {"config": {"seeds": numbers}}, empty
    )
    assert reference.label_parts()[1:] == ("heads", text)


def test_a_base_run_compared_with_its_sweep_point_names_the_swept_value():
    models = {"sweep_transformer": {"arch": "transformer", "heads": 4, "d_model": 128}}
    own = {"sweep_transformer": "Transformer", "sweep_transformer.heads-8": "Transformer, 8 heads"}
    assert labels.pair_labels(own, models, "sweep_transformer", "sweep_transformer.heads-8") == (
        "Transformer, 4 heads",
        "Transformer, 8 heads",
    )
    # a key the base model leaves to its default, or another base model: the labels as they are
    scale = {**own, "sweep_transformer.scale-false": "Transformer, unscaled"}
    unscaled = labels.pair_labels(
        scale, models, "sweep_transformer.scale-false", "sweep_transformer"
    )
    assert unscaled == ("Transformer, unscaled", "Transformer")
    other_model = labels.pair_labels(own, models, "sweep_transformer.heads-8", "gru")
    assert other_model[0] == "Transformer, 8 heads"


# ---- the templates --------------------------------------------------------------------------


TEMPLATES = ROOT / "paper" / "sections"
CODE = re.compile(r"\\(?:VAR|BLOCK)\{[^}]*\}")


def hand_typed_numbers(tex: str) -> list[str]:
    """Numbers typed into the prose of a .tex or a template: what is left of its lines once
    comments, template code (\\VAR{...}, \\BLOCK{...}), options, dimensions, references and the
    arguments of \\input/\\label/\\ref/\\cite, and the column count of a \\multicolumn, are removed. A
    digit inside a name (SHA-256, fp32, claim D1) is not a number."""
    body = tex.split(r"\begin{document}")[-1]
    body = re.sub(r"(?<!\\)%.*", "", body)
    body = CODE.sub("", body)
    body = re.sub(
        r"\\(input|label|ref|cite[pt]?|includegraphics|bibliography\w*|"
        r"begin|end|section|appendix)\*?(\[[^\]]*\])?\{[^}]*\}",
        "",
        body,
    )
    body = re.sub(r"\[[^\]]*\]", "", body)
    body = re.sub(r"\\multicolumn\{\d+\}", "", body)
    body = re.sub(r"\d*\.?\d+\\(linewidth|textwidth)|\d+(pt|em|ex|cm)\b", "", body)
    return re.findall(r"[^\n]*(?<![\w.\-])\d[^\n]*", body)


def test_no_number_is_typed_by_hand_in_the_paper():
    sources = [ROOT / "paper" / "paper.tex", *sorted(TEMPLATES.glob("*.tex"))]
    assert len(sources) > 15
    for path in sources:
        assert hand_typed_numbers(path.read_text()) == [], path
    # the guard sees a typed number in prose, and not one in template code or a name
    assert hand_typed_numbers(r"BLEU rose by 2.5 points") == ["BLEU rose by 2.5 points"]
    assert hand_typed_numbers(r"\VAR{x|number(2)} with SHA-256 (claim D1)") == []


def test_no_template_line_ends_in_a_block_tag_after_text():
    """A block tag eats the newline after it: 'faster\\BLOCK{endif}' at the end of a line would
    run into the next line's first word."""
    for path in TEMPLATES.glob("*.tex"):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            ends = re.search(r"\\BLOCK\{[^}]*\}$", line)
            assert not (ends and line[: ends.start()].strip()), f"{path.name}:{number}: {line}"


def test_an_author_changes_a_sentence_by_editing_its_template(tmp_path):
    templates = tmp_path / "sections"
    shutil.copytree(TEMPLATES, templates)
    length = templates / "length.tex"
    length.write_text(
        length.read_text().replace(
            "the fixed-vector model keeps", "a model without attention holds on to"
        )
    )
    results = make_results(tmp_path, BASE, drop={"gru_none": 8})
    (results / "config.json").write_text(json.dumps(CONFIG))
    study = load(results, results / "config.json")
    text = render.write(study, [], tmp_path / "out", [], templates)["length"]
    assert "a model without attention holds on to 0.20 [0.18, 0.22]" in " ".join(text.split())


def test_a_printed_fraction_or_missing_value_is_an_error():
    env = render.environment(TEMPLATES)
    assert env.from_string(r"\VAR{n} \VAR{x|number(2)} \VAR{s}").render(n=1000, x=0.5, s="a_b") == (
        r"1,000 0.50 a\_b"
    )
    with pytest.raises(TypeError, match="format it with a filter"):
        env.from_string(r"\VAR{x}").render(x=0.5)
    with pytest.raises(TypeError, match="do not print it"):
        env.from_string(r"\VAR{x}").render(x=None)


# ---- figures ---------------------------------------------------------------------------------


def drawn(fig) -> int:
    """How many data series (lines with points, error bars, images) the figure's axes hold."""
    return sum(
        len([line for line in ax.get_lines() if len(line.get_xdata())])
        + len(ax.get_images())
        + len(ax.collections)
        for ax in fig.axes
    )


def noted(fig) -> list[str]:
    """The 'no data' notes written inside the figure's panels."""
    return [t.get_text() for ax in fig.axes for t in ax.texts if t.get_text().startswith("no ")]


def write_alignment(results: Path, run: str, heads: int = 1) -> None:
    rows = [
        {
            "layer": 0,
            "head": head,
            "query_pos": q,
            "key_pos": k,
            "query_token": f"▁q{q}",
            "key_token": f"k{k}",
            "weight": 0.25 + 0.5 * (q == k),
        }
        for head in range(heads)
        for q in (0, 1)
        for k in (0, 1)
    ]
    (results / "analysis").mkdir(exist_ok=True)
    pd.DataFrame(rows).to_csv(results / "analysis" / f"alignment_{run}.csv", index=False)


def write_probes(results: Path) -> None:
    """The three probe CSVs the probes figure reads, two points a series."""
    (results / "probes").mkdir()
    rows = {
        "spread": [
            ("std_score", {"d": d, "scaling": s}) for d in (4, 64) for s in ("scaled", "unscaled")
        ],
        "saturation": [
            (q, {"d": d, "scaling": s})
            for q in ("frac_rows_saturated", "mean_softmax_jacobian_norm")
            for d in (4, 64)
            for s in ("scaled", "unscaled")
        ],
        "averaging": [
            ("token_uniformity_residual", {"depth": d, "stack": "attention"}) for d in (1, 8)
        ],
    }
    for probe, quantities in rows.items():
        pd.DataFrame(
            [
                {"probe": probe, "quantity": q, **settings, "value": 0.5}
                for q, settings in quantities
            ]
        ).to_csv(results / "probes" / f"{probe}.csv")


def test_every_figure_draws_its_data_and_says_when_it_has_none(tmp_path):
    style.setup()
    full = make_results(
        tmp_path / "full", {**BASE, "transformer.heads-1": 24.0, "transformer.heads-8": 24.5}
    )
    write_alignment(full, "gru_additive-s1")
    write_probes(full)
    empty = tmp_path / "empty" / "results"
    empty.mkdir(parents=True)
    for results, has_data in ((full, True), (empty, False)):
        study = load(results)
        figures = {
            "bleu_by_length": scores.draw(study, "bleu_by_length"),
            "sweep_heads": scores.draw(study, "sweep_heads"),
            "training": training.training_figure(study),
            "cost": cost.cost_figure(study),  # generation only: no attention benchmark
            "alignment": alignment.alignment_figure(study),
            "probes": probes.probes_figure(study),
        }
        for name, fig in figures.items():
            if has_data:
                assert drawn(fig) > 0, name
            else:
                assert drawn(fig) == 0 and noted(fig), name
            assert style.save(fig, results / f"{name}.pdf").stat().st_size > 1000
    assert noted(cost.cost_figure(load(full))) == ["no attention benchmark in results/bench"]


def test_the_sweep_figure_draws_a_line_per_series_at_each_value(tmp_path):
    bleu = {**BASE, "transformer.heads-1": 24.0, "transformer.heads-8": 24.5}
    study = load(make_results(tmp_path, bleu))
    fig = scores.draw(study, "sweep_heads")
    (ax,) = [ax for ax in fig.axes if ax.get_ylabel() == "BLEU (%)"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["1", "4", "8"]
    (bars,) = ax.containers  # one series: the data line of its error bars
    assert list(bars.lines[0].get_ydata()) == [24.0, 25.0, 24.5]  # heads 1, the base's 4, 8


def test_a_study_works_out_a_table_once_and_hands_each_caller_its_own_copy(tmp_path):
    study = load(make_results(tmp_path, BASE))
    first = tables.runs(study)
    first["label"] = "changed by its caller"
    again = tables.runs(study)
    assert "changed by its caller" not in set(again["label"])
    assert len([key for key in study.memo if key[1] == "runs"]) == 1
    replaced = dataclasses.replace(study, scores=study.scores.iloc[0:0])
    assert not replaced.memo  # a study with other tables works everything out again


def test_the_training_figure_has_a_panel_per_family(tmp_path):
    bleu = {**BASE, "transformer.heads-1": 24.0, "transformer.causal_mask-false": 2.0}
    style.setup()
    fig = training.training_figure(load(make_results(tmp_path, bleu)))
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    assert set(panels) == {"base models", "heads: Transformer", "masks: Transformer"}

    def rows(ax):  # a few epochs: one row per variant, named on the y axis
        return [t.get_text() for t in ax.get_yticklabels()]

    assert rows(panels["heads: Transformer"]) == ["base model", "1 head"]  # base in the title
    assert {"GRU, additive", "Transformer"} <= set(rows(panels["base models"]))  # full labels
    legend = panels["base models"].figure.legends[0]  # under the panel, in its own subfigure
    assert [t.get_text() for t in legend.get_texts()] == ["epoch 1", "epoch 2"]


def test_a_longer_training_is_drawn_as_curves_named_by_what_they_change(tmp_path):
    results = make_results(tmp_path, {**BASE, "transformer.heads-1": 24.0})
    epochs = training_facts.FEW_EPOCHS + 2
    for log in (results / "runs").glob("*/log.csv"):
        loss = pd.read_csv(log)["train_loss"].iloc[-1]
        pd.DataFrame(
            {"epoch": range(1, epochs + 1), "train_loss": loss, "val_loss": loss + 0.5}
        ).to_csv(log, index=False)
    style.setup()
    fig = training.training_figure(load(results))
    panels = {ax.get_title(): ax for ax in fig.axes if ax.get_visible()}
    heads = panels["heads: Transformer"]
    assert [len(line.get_xdata()) for line in heads.get_lines()] == [epochs, epochs]
    assert [t.get_text() for t in heads.figure.legends[0].get_texts()] == ["base model", "1 head"]
    assert heads.get_xlabel() == "epoch"


def test_the_alignment_panels_share_the_first_panels_piece_labels(tmp_path):
    results = make_results(tmp_path, BASE)
    write_alignment(results, "gru_additive-s1")
    write_alignment(results, "transformer-s1", heads=2)
    config = {**CONFIG, "analysis": {"runs": ["gru_additive-s1", "transformer-s1"]}}
    (results / "config.json").write_text(json.dumps(config))
    style.setup()
    fig = alignment.alignment_figure(load(results, results / "config.json"))
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["GRU, additive", "Transformer"]
    assert [t.get_text() for t in panels[0].get_yticklabels()] == ["q0", "q1"]
    assert not any(t.get_text() for t in panels[1].get_yticklabels())
    assert [t.get_text() for t in panels[1].get_xticklabels()] == ["k0", "k1"]


def test_a_tiny_difference_does_not_fill_the_panel():
    style.setup()
    _, (ax,) = style.subplots(1)
    ax.plot([0, 1], [3.704, 3.711])
    style.min_span(ax, [3.704, 3.711])
    low, high = ax.get_ylim()
    assert high - low == pytest.approx(0.05 * 3.7075) and low < 3.704 and high > 3.711
    _, (ax,) = style.subplots(1)
    ax.plot([0, 1], [2.0, 4.0])
    style.min_span(ax, [2.0, 4.0])  # a large difference keeps matplotlib's own limits
    assert ax.get_ylim()[0] < 2.0 and ax.get_ylim()[1] > 4.0 and ax.get_ylim()[1] < 4.5


def test_sequence_lengths_are_labelled_short():
    labels_ = [style.tick_label(v) for v in (64, 1000, 1024, 16384, 25.0)]
    assert labels_ == ["64", "1000", "1k", "16k", "25"]


# ---- the whole paper --------------------------------------------------------------------------


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
@pytest.mark.parametrize("case", ["two seeds, no fixed-vector model", "nothing measured"])
def test_the_paper_compiles_for_any_set_of_runs(tmp_path, case):
    if case == "nothing measured":
        results = tmp_path / "results"
        results.mkdir()
    else:
        bleu = {k: v for k, v in BASE.items() if k != "gru_none"}
        bleu["transformer.heads-1"] = 24.0
        results = make_results(tmp_path, bleu, seeds=(1, 2))
    style.setup()
    study = load(results)
    drawn_figures = [
        style.save(fig, tmp_path / "figures" / f"{name}.pdf")
        for name, fig in (
            ("bleu_by_length", scores.draw(study, "bleu_by_length")),
            ("sweep_heads", scores.draw(study, "sweep_heads")),
            ("training", training.training_figure(study)),
            ("cost", cost.cost_figure(study)),
        )
    ]
    generated = tmp_path / "generated"
    parts = render.write(study, [p.stem for p in drawn_figures], generated, ["config/test.yaml"])
    pdf = tmp_path / "paper.pdf"
    sources = [ROOT / "paper" / part for part in ("paper.tex", "refs.bib")]
    code = build.build(
        sources, sorted(generated.glob("*.tex")), drawn_figures, tmp_path / "build", pdf
    )
    log = (tmp_path / "build" / "paper.log").read_text()
    assert code == 0, log[-3000:]
    assert not overfull_boxes(log), "a line or table past the margin"
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "Claims ledger" in text and "Discussion" in text
    if case != "nothing measured":
        budget = " ".join(parts["budget"].split())
        assert "GRU, dot & 1 &" in budget and "GRU, dot & 2 &" in budget  # each seed's run
        assert "GRU, dot" in text and "Figure 1" in text
    assert_no_placeholders(text.replace("None", ""))


@pytest.mark.parametrize("measured", [True, False])
def test_every_section_a_ledger_row_can_name_exists(tmp_path, measured):
    results = make_results(tmp_path, BASE) if measured else tmp_path / "results"
    results.mkdir(exist_ok=True)
    text = text_of(generate(results))
    for name in claim_facts.SECTIONS:
        assert f"\\label{{sec:{name}}}" in text, name


def test_the_latex_hint_names_a_make_target_that_exists():
    rules = build.HINT
    makefile = (ROOT / "Makefile").read_text()
    targets = re.findall(r"make ([\w-]+)", rules)
    assert targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target


def test_a_grid_sweep_is_one_family_with_its_paired_contrasts(tmp_path):
    bleu = {
        **BASE,
        "transformer.d_k-8.scale-true": 24.0,
        "transformer.d_k-8.scale-false": 20.0,
        "transformer.d_k-64.scale-true": 25.0,
        "transformer.d_k-64.scale-false": 10.0,
        "transformer.scale-false": 15.0,
    }
    results = make_results(tmp_path, bleu)
    (results / "analysis").mkdir()
    for variant, weight in (
        ("transformer.d_k-64.scale-false", 0.97),
        ("transformer.d_k-64.scale-true", 0.4),
    ):
        pd.DataFrame(
            {
                "run": f"{variant}-s1",
                "map": "cross",
                "quantity": ["max_weight_mean"],
                "value": [weight],
            }
        ).to_csv(results / "analysis" / f"attention_{variant}-s1.csv", index=False)
    write_comparisons(
        results,
        [
            comparison(
                f"transformer.d_k-{d}.scale-false",
                f"transformer.d_k-{d}.scale-true",
                gap,
                gap - 1,
                gap + 1,
            )
            for d, gap in (("8", 4.0), ("64", 15.0))
        ],
    )
    study = load(results)
    members = sweeps.members(study, ["d_k", "scale"])
    # the scale-only point joins the d_k grid: no second figure repeats it
    assert "transformer.scale-false" in set(members["variant"])
    assert set(members["series"]) == {"scaled", "unscaled", "Transformer"}
    assert set(members["x"]) == {"8", "64", "default"}
    points = [
        {"d_k": 8, "scale": True},
        {"d_k": 64, "scale": False},
        {"scale": False},
        {"heads": 1},
    ]
    assert families.figure_families(points) == ["scaling"]  # heads: one value, a table is enough
    text = generate(results)["scaling"]
    assert r"scaled $-$ unscaled gives +4.00 [+3.00, +5.00] BLEU at $d_k = 8$ and +15.00" in text
    assert r"$d_k = 64$, unscaled & 10.0 [9.0, 11.0] & 1,000 & 3.00 & 0.970" in text
    assert (
        "the mean largest weight of a row, unscaled against scaled, is 0.970 against 0.400 at"
        in text
    )
    style.setup()
    assert drawn(scores.draw(study, "sweep_scaling")) > 0


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_a_latex_failure_prints_the_first_tex_errors(tmp_path, capsys):
    paper = tmp_path / "paper.tex"
    paper.write_text("\\documentclass{article}\\begin{document}\\AttnMissingMacro\\end{document}\n")
    code = build.build([paper], [], [], tmp_path / "build", tmp_path / "out.pdf")
    assert code != 0 and not (tmp_path / "out.pdf").exists()
    err = capsys.readouterr().err
    assert "! Undefined control sequence." in err and "AttnMissingMacro" in err


def test_gpu_rows_measured_elsewhere_name_their_source(tmp_path):
    """bench.measured: the committed H200 rows, named with device, versions, commit and folder."""
    results = make_results(tmp_path, BASE)
    measured = ROOT / "benchmarks" / "gpu" / "NVIDIA_H200" / "attention_cuda.csv"
    shutil.copy(measured, results / "bench" / "attention_cuda.csv")
    # a CPU bench this build wrote, its name several words before the device: not from elsewhere
    pd.DataFrame(
        {
            "device": "cpu",
            "device_name": "test cpu",
            "commit": "abc1234",
            "torch": "2",
            "triton": "3",
            "variant": ["gru_additive", "transformer"],
            "sentence_tokens": 64,
            "batch_tokens": 1250,
            "time_ms": [20.0, 10.0],
            "status": "ok",
        }
    ).to_csv(results / "bench" / "train_step_lengths_cpu.csv", index=False)
    config = {**CONFIG, "bench": {"devices": ["cpu"], "measured": ["benchmarks/gpu/NVIDIA_H200"]}}
    files = generate(results, config=config)
    assert "the GPU kernel rows from one run outside the main study" in files["threats"]
    commit = pd.read_csv(measured).commit.iloc[0][:7]  # the committed rows' own commit
    assert (
        "The GPU measurements come from outside the main study: the project's GPU check measured"
        f" them on NVIDIA H200 (torch 2.11.0, Triton 3.6.0) at commit \\texttt{{{commit}}}"
    ) in files["cost"]
    assert "No GPU benchmark is configured" not in files["cost"]
    # torch's device types as prose names them, wherever a device is printed
    assert "Runs were made on CPU, test cpu, with" in files["setup"]
    assert "GPU benchmark is configured" in generate(make_results(tmp_path / "b", BASE))["cost"]


def test_the_attention_table_has_one_row_per_model_averaged_over_seeds(tmp_path):
    results = make_results(tmp_path, BASE)
    (results / "analysis").mkdir()
    stats = {"entropy_mean": 0.5, "argmax_on_top_key_share": 0.3, "chance_share": 0.1}
    for run, weight in [("gru_additive-s1", 0.4), ("gru_additive-s2", 0.6), ("gru_dot-s1", 0.9)]:
        quantities = {**stats, "max_weight_mean": weight}
        pd.DataFrame(
            {
                "run": run,
                "map": "cross",
                "quantity": list(quantities),
                "value": list(quantities.values()),
            }
        ).to_csv(results / "analysis" / f"attention_{run}.csv", index=False)
    files = generate(results)
    text, appendix = files["attention"], files["crossattention"]
    table = appendix[appendix.index("\\endhead") : appendix.index("\\end{longtable}")]
    assert "GRU, additive & 2 & 0.500 & 0.500 & 0.300 & 0.100" in table
    assert "GRU, dot & 1 & 0.500 & 0.900" in table
    assert "s1" not in table and "s2" not in table
    assert "In every model (2) that share is more than twice chance" in text
    assert r"Table~\ref{tab:attention} (Appendix~\ref{app:attention})" in text


def test_the_setup_names_the_models_with_their_own_training_settings(tmp_path):
    models = {
        "gru_none": {"arch": "gru", "attention": "none", "train": {"lr": 0.003}},
        "gru_dot": {"arch": "gru", "attention": "dot", "train": {"lr": 0.003}},
        "transformer": {"arch": "transformer", "train": {"epochs": 3, "lr": 0.003}},
        "untrained": {"arch": "gru", "train": {"lr": 0.1}},
        "gru_additive": {"arch": "gru", "attention": "additive"},
    }
    text = generate(make_results(tmp_path, BASE), config={**CONFIG, "models": models})["setup"]
    assert "GRU, no attention and GRU, dot: lr 0.003; Transformer: epochs 3, lr 0.003." in text
    assert "untrained" not in text and "lr 0.1" not in text


def test_the_setup_reads_the_corpus_manifest_the_rule_declares(tmp_path):
    """config/paper.yaml prepares Europarl (data.extra) beside Multi30k, and europarl_it_en sorts
    before multi30k-de-en in results/data/: the render step reads the manifest it is given, as
    rule paper_sections passes it, never the first one on disk (issue 49, part 4)."""
    results = make_results(tmp_path, BASE)
    corpora = {"europarl_it_en": ("it", 5_000), "multi30k-de-en": ("de", 29_000)}
    for corpus, (source, pairs) in corpora.items():
        folder = results / "data" / corpus
        folder.mkdir(parents=True)
        manifest = {"source": source, "target": "en", "splits": {"train": {"pairs": pairs}}}
        (folder / "manifest.json").write_text(json.dumps(manifest))
    config = results / "config.json"
    config.write_text(json.dumps(CONFIG))
    out = tmp_path / "generated"
    render.main(
        [
            *("--results", str(results), "--config", str(config)),
            *("--manifest", str(results / "data" / "multi30k-de-en" / "manifest.json")),
            *("--templates", str(ROOT / "paper" / "sections"), "--out-dir", str(out)),
        ]
    )
    setup = " ".join((out / "setup.tex").read_text().split())
    assert "holds 29,000 pairs" in setup and "5,000" not in setup


@pytest.mark.parametrize("patience, said", [(3, False), (1, True)])
def test_early_stopping_is_named_where_the_longest_run_could_stop(tmp_path, patience, said):
    results = make_results(tmp_path, BASE)  # every run trains 2 epochs; one of them 4
    meta = next((results / "runs").glob("*")) / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "epochs": 4}))
    config = {**CONFIG, "train": {**TRAIN, "epochs": 1, "patience": patience}}
    setup_text = generate(results, config=config)["setup"]
    assert "for 1 epoch," in setup_text or "for 1 epoch." in setup_text
    assert ("stopping early after 1 epoch without" in setup_text) is said
    assert "after 2 epochs" not in setup_text


def test_only_the_final_budget_reaches_the_paper(tmp_path):
    """Scores and comparisons at training-budget points (an `epoch` column): the paper reads
    the rows of epoch "final" only."""
    results = make_results(tmp_path, BASE)
    scores = pd.read_csv(results / "tables" / "scores.csv")
    early = scores.assign(epoch="1", value=scores["value"] - 5)
    pd.concat([early, scores.assign(epoch="final")]).to_csv(
        results / "tables" / "scores.csv", index=False
    )
    write_comparisons(
        results,
        [
            comparison("gru_additive", "gru_dot", 10.0, 9.2, 10.8, epoch="1"),
            comparison("gru_additive", "gru_dot", 1.0, 0.5, 1.5, epoch="final"),
        ],
    )
    files = generate(results)
    assert "GRU, dot & 21.0 [20.0, 22.0]" in files["results"]
    assert "16.0 [15.0, 17.0]" not in files["results"]
    assert "by +1.00 [+0.50, +1.50] BLEU" in files["scores"]


def test_cost_says_d6s_ratio_at_the_longest_length_and_the_crossing(tmp_path):
    """D6's sentence from train_step_lengths rows: a GPU's when there are any, else the CPU's
    with the GPU measurement said pending; none at all: the benchmark is pending."""
    results = make_results(tmp_path, BASE)
    assert (
        "The training-step benchmark against sentence length is pending"
        in (generate(results)["cost"])
    )

    def rows(device, name, ratios):
        return pd.DataFrame(
            {
                "device": device,
                "device_name": name,
                "batch_tokens": 8192,
                "status": "ok",
                "variant": variant,
                "sentence_tokens": length,
                "time_ms": 10.0 * (ratio if variant == "transformer" else 1.0),
            }
            for length, ratio in ratios.items()
            for variant in ("gru_additive", "transformer")
        )

    rows("cpu", "Xeon", {16: 3.0, 64: 1.5}).to_csv(
        results / "bench" / "train_step_lengths_cpu.csv", index=False
    )
    cpu_only = generate(results)["cost"]
    assert "there is no length among those timed (16 and 64 tokens)" in cpu_only
    assert "These are CPU measurements, shown but not judged" in cpu_only
    gpu = rows("cuda", "NVIDIA H200", {16: 2.0, 64: 0.9, 128: 1.1, 256: 0.7, 512: 0.5})
    gpu.to_csv(results / "bench" / "train_step_lengths_cuda.csv", index=False)
    text = generate(results)["cost"]
    assert (
        "With 8,192 tokens a batch, one training step of the Transformer takes 0.50 times as long"
        " as one of the GRU with additive attention at 512-token sentences on NVIDIA H200 (the"
        " median step time of each, the Transformer's over the GRU's);"
        " the Transformer's step is the faster one at every length timed from 256 to 512 tokens"
    ) in text
    assert "CPU measurements" not in text
    for ratios, said in [
        ({16: 0.8, 64: 0.5}, "the faster one at every length timed (16 and 64 tokens)"),
        ({16: 2.0, 64: 0.5}, "the faster one only at the longest length timed"),
    ]:
        rows("cuda", "NVIDIA H200", ratios).to_csv(
            results / "bench" / "train_step_lengths_cuda.csv", index=False
        )
        text = " ".join(generate(results)["cost"].split())
        assert said in text and "from 64 to 64" not in text


def wording_check(status: str, reason: str, op: str = "above") -> claim_facts.Check:
    """A check whose label, facts and systems are all identifiers the wording must not print."""
    facts = {
        "comparison": "d1_additive_vs_none",
        "system_a": "gru_none-s1",
        "system_b": "gru_additive-s1",
        "test_set": "test_long",
        "needed": 3,
        "floor": {"metric": "bleu", "bucket": "shortest", "below": 5},
        "below_floor": {"gru_none-s1": 2.7},
    }
    return claim_facts.Check(
        check=2,
        label="d_k_sweep[dims=4]",
        status=status,
        reason=reason,
        op=op,
        fmt=".2f",
        expected=0.5,
        allowed=1.0,
        value=0.4,
        ci_low=0.3,
        ci_high=0.6,
        df=4.0,
        p_value=0.01,
        p_adjusted=0.2,
        family_size=3,
        deviation=0.1,
        facts=facts,
    )


def latex_of(macro: str, **values) -> str:
    env = render.environment(render.TEMPLATES)
    names = ", ".join(values)
    source = f'\\BLOCK{{from "_wording.tex" import {macro}}}\\VAR{{{macro}({names})}}'
    return env.from_string(source).render(**values)


@pytest.mark.parametrize("reason", sorted(REASONS))
def test_every_reason_code_is_worded_without_identifiers(reason):
    check = wording_check(REASONS[reason], reason)
    plain, tex = wording.check_text(check), latex_of("check_sentence", check=check)
    for text in (plain, tex):
        assert text.strip()
        assert_no_identifiers(text)
    assert "\\" not in plain and "{" not in plain  # the plain rendering holds no LaTeX


def test_reason_codes_and_statuses_have_wordings_of_their_own():
    reasons = {latex_of("reason", check=wording_check(REASONS[r], r)) for r in REASONS}
    statuses = {latex_of("status_word", status=status) for status in STATUSES}
    asked = {
        latex_of("asked", check=wording_check("pass", "beyond_threshold", op))
        for op in ("approx", "above", "below", "equivalent", "non_inferior", "report")
    }
    assert len(reasons) == len(REASONS) and "" not in reasons
    assert len(statuses) == len(STATUSES) and "" not in statuses
    assert len(asked) == 6


def test_every_verdict_is_worded_in_both_renderings_without_identifiers():
    sentences = set()
    for verdict in (*VERDICTS, "missing"):
        status, reason = OUTCOME_OF.get(verdict, ("pending", "not_run"))
        claim = claim_facts.Claim(
            id="D1",
            verdict=verdict,
            short="attention keeps length",
            checks=[wording_check(status, reason), wording_check("pass", "beyond_threshold")],
        )
        plain, tex = wording.verdict_text(claim), latex_of("verdict_sentence", claim=claim)
        assert "D1" in plain and "D1" in tex
        assert_no_identifiers(plain)
        assert_no_identifiers(tex)
        sentences.add(plain)
    assert len(sentences) == len(VERDICTS) + 1
