"""Scoring (sacrebleu, buckets, intervals), collecting runs into the tidy table, and paired
comparisons of variants."""

import json
from dataclasses import asdict

import pandas as pd
import pytest
import sacrebleu

from softlookup.data.buckets import bucket_label, bucket_labels, bucket_order
from softlookup.evaluate import compare as comparing
from softlookup.evaluate.collect import collect, training_log
from softlookup.evaluate.score import score_test_set
from softlookup.models.config import parse_model_config
from softlookup.tables import COMPARISON_COLUMNS, SEED_VARIANCE_COLUMNS, final_point
from softlookup.tables import SCORES_COLUMNS as COLUMNS

SOURCES = ["ein kurzer satz"] * 30 + [" ".join(["wort"] * 25)] * 25
REFERENCES = ["a man rides a red bike down the hill"] * 55
HYPOTHESES = ["a man rides a red bike down a hill"] * 30 + ["a dog"] * 25


def test_bucket_labels_cover_every_length():
    edges = [0, 10, 20]
    assert [bucket_label(n, edges) for n in (1, 10, 11, 20, 21, 300)] == [
        "1-10",
        "1-10",
        "11-20",
        "11-20",
        ">20",
        ">20",
    ]
    assert bucket_labels(edges) == ["1-10", "11-20", ">20"]
    assert bucket_order(["all", ">20", "11-20", "1-10", "11-20"]) == ["1-10", "11-20", ">20", "all"]


def test_scores_match_sacrebleu_with_intervals_and_signature():
    table = score_test_set(
        "t",
        SOURCES,
        HYPOTHESES,
        REFERENCES,
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        n_bootstrap=200,
    )
    overall = table[table.bucket == "all"].set_index("metric")
    assert overall.loc["bleu", "value"] == pytest.approx(
        sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score
    )
    assert overall.loc["chrf", "value"] == pytest.approx(
        sacrebleu.corpus_chrf(HYPOTHESES, [REFERENCES]).score
    )
    assert (overall.ci_low <= overall.value).all() and (overall.value <= overall.ci_high).all()
    assert overall.loc["bleu", "signature"].startswith("nrefs:1|bs:200|")
    buckets = table[table.bucket != "all"].set_index("bucket")
    assert set(buckets.index) == {"1-10", ">20"} and set(buckets.metric) == {"bleu"}
    assert buckets.loc["1-10", "value"] > 60 > buckets.loc[">20", "value"]


def test_a_bleu_near_zero_keeps_its_interval_at_or_above_zero():
    """sacrebleu's bootstrap mean - half-width is -1.0 here (BLEU 2.8 from one matching sentence
    of 40): the interval is cut to the range a BLEU can take."""
    references = [f"the cat number {i} sat on the mat today" for i in range(40)]
    hypotheses = ["zz yy xx"] * 39 + [references[-1]]
    table = score_test_set(
        "t", references, hypotheses, references, edges=[0], min_bucket_sentences=20, n_bootstrap=200
    )
    bleu = table[(table.bucket == "all") & (table.metric == "bleu")].iloc[0]
    assert 0 < bleu.value < 5
    assert bleu.ci_low == 0.0 < bleu.value < bleu.ci_high


def test_small_buckets_are_left_out_and_misaligned_files_fail():
    table = score_test_set(
        "t",
        SOURCES,
        HYPOTHESES,
        REFERENCES,
        edges=[0, 10, 20],
        min_bucket_sentences=26,
        n_bootstrap=1,
    )
    assert set(table.bucket) == {"all", "1-10"}
    with pytest.raises(ValueError, match="55 sources, 54 hypotheses"):
        score_test_set(
            "t",
            SOURCES,
            HYPOTHESES[:-1],
            REFERENCES,
            edges=[0, 10],
            min_bucket_sentences=1,
            n_bootstrap=1,
        )


GRU = {"arch": "gru", "attention": "dot", "emb_dim": 8, "hidden_dim": 16}
TRANSFORMER = {"arch": "transformer", "d_model": 32, "heads": 4, "scale": False}


def write_point(run_dir, point, hypotheses):
    """A budget point's translations and scores, as train, translate_point and score_point
    leave them (the run's meta.json lists the point)."""
    (run_dir / "ladder").mkdir(exist_ok=True)
    (run_dir / "ladder" / f"hyp.e{point}.t.en").write_text("".join(h + "\n" for h in hypotheses))
    score_test_set(
        "t",
        SOURCES,
        hypotheses,
        REFERENCES,
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        n_bootstrap=1,
    ).to_csv(run_dir / "ladder" / f"scores.e{point}.t.csv", index=False)
    meta = json.loads((run_dir / "meta.json").read_text())
    meta.setdefault("ladder", {"final": {"weights_epoch": 3}})[str(point)] = {"weights_epoch": 1}
    (run_dir / "meta.json").write_text(json.dumps(meta))


def write_run(run_dir, status, model=GRU, variant="a", seed=1, hypotheses=HYPOTHESES):
    run_dir.mkdir(parents=True)
    config = {
        "run": run_dir.name,
        "variant": variant,
        "base_model": variant.split(".")[0],
        "sweep": {},
        "seed": seed,
        "src": "de",
        "tgt": "en",
        "model": model,
        "train": {"epochs": 3, "max_source_words": 20},
    }
    (run_dir / "config.json").write_text(json.dumps(config))
    meta = {
        "status": status,
        "model_config": asdict(parse_model_config(model)),
        "train_tokens_per_s": 100.0,
        "train_wall_s": 5.0,
        "final_train_loss": 2.0,
        "best_val_loss": 2.5,
        "epochs": 1,
        "parameters": 10,
        "environment": {"device": "cpu", "threads": 1},
    }
    (run_dir / "meta.json").write_text(json.dumps(meta))
    pd.DataFrame(
        {
            "epoch": [1],
            "steps": [3],
            "train_loss": [3.0],
            "val_loss": [2.5],
            "lr": [0.001],
            "target_tokens": [300],
            "wall_s": [3.0],
            "tokens_per_s": [100.0],
        }
    ).to_csv(run_dir / "log.csv", index=False)
    (run_dir / "hyp.t.en").write_text("".join(h + "\n" for h in hypotheses))
    score_test_set(
        "t",
        SOURCES,
        hypotheses,
        REFERENCES,
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        n_bootstrap=1,
    ).to_csv(run_dir / "scores.t.csv", index=False)


def test_collect_keeps_a_diverged_run_as_a_result_without_scores(tmp_path):
    write_run(tmp_path / "a-s1", "ok")
    write_run(tmp_path / "b-s1", "diverged", model=TRANSFORMER, variant="b.scale-false")
    table = collect(["a-s1", "b-s1"], tmp_path, ["t"])
    assert list(table.columns) == COLUMNS and set(table.device) == {"cpu"}
    scored = table[table.test_set == "t"]
    assert scored[scored.run == "a-s1"].value.notna().all()
    assert scored[scored.run == "b-s1"].value.isna().all()
    assert set(table[table.run == "b-s1"].status) == {"diverged"}
    trained = table[(table.test_set == "train") & (table.metric == "train_tokens_per_s")]
    assert trained.value.tolist() == [100.0, 100.0]


def test_every_setting_is_a_column(tmp_path):
    write_run(tmp_path / "a-s1", "ok")
    write_run(
        tmp_path / "b.scale-false-s2", "ok", model=TRANSFORMER, variant="b.scale-false", seed=2
    )
    table = collect(["a-s1", "b.scale-false-s2"], tmp_path, ["t"])
    settings = table.drop_duplicates("run").set_index("run")
    gru, transformer = settings.loc["a-s1"], settings.loc["b.scale-false-s2"]
    assert (gru.arch, gru.attention, gru.d_model, gru.heads, gru.d_k) == ("gru", "dot", 16, 1, 16)
    assert (transformer.base_model, transformer.variant) == ("b", "b.scale-false")
    assert (transformer.heads, transformer.d_k, transformer.scale) == (4, 8, False)
    assert transformer.causal_mask and transformer.padding_mask and transformer.seed == 2
    assert (gru.max_train_words, gru.epochs, gru.parameters) == (20, 3, 10)
    assert (gru.train_seconds, gru.tokens_per_s) == (5.0, 100.0)
    assert set(table[table.test_set == "t"].n_sentences.dropna()) >= {55, 30, 25}
    log = training_log(["a-s1", "b.scale-false-s2"], tmp_path)
    assert len(log) == 2 and set(log.device) == {"cpu"} and set(log.threads) == {1}
    assert {"val_loss", "train_loss", "wall_s", "tokens_per_s", "variant"} <= set(log)


def test_a_paired_comparison_finds_the_better_system(tmp_path, capsys):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.de").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "data" / "t.en").write_text("".join(r + "\n" for r in REFERENCES))
    worse = ["a man on a bike"] * 30 + ["a dog"] * 25
    for seed in (1, 2):
        write_run(tmp_path / "runs" / f"a-s{seed}", "ok", variant="a", seed=seed, hypotheses=worse)
        write_run(tmp_path / "runs" / f"b-s{seed}", "ok", variant="b", seed=seed)
    table, _ = comparing.compare(
        [("b_vs_a", "a", "b", "t"), ("a_vs_a", "a", "a", "t"), ("gone", "a", "c", "t")],
        tmp_path / "runs",
        ["a-s1", "a-s2", "b-s1", "b-s2"],
        tmp_path / "data",
        "de",
        "en",
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        resamples=200,
        seed=0,
    )
    assert list(table.columns) == COMPARISON_COLUMNS
    assert "gone: skipped, no trained runs of c" in capsys.readouterr().out
    rows = table.set_index(["comparison", "bucket", "metric"])
    better = rows.loc[("b_vs_a", "all", "bleu")]
    assert better.mean_b == pytest.approx(sacrebleu.corpus_bleu(HYPOTHESES, [REFERENCES]).score)
    assert better.mean_a == pytest.approx(sacrebleu.corpus_bleu(worse, [REFERENCES]).score)
    assert better.delta > 0 and better.ci_low > 0 and better.p_value < 0.05
    assert better.seeds == 2 and better.n_sentences == 55
    same = rows.loc[("a_vs_a", "all", "bleu")]
    assert same.delta == 0 and same.ci_low == 0 == same.ci_high and same.p_value == 1
    assert set(table[table.comparison == "b_vs_a"].bucket) == {"all", "1-10", ">20"}
    share = rows.loc[("b_vs_a", ">20", "bleu_share")]  # BLEU on >20 words / BLEU on 1-10 words
    short, long = rows.loc[("b_vs_a", "1-10", "bleu")], rows.loc[("b_vs_a", ">20", "bleu")]
    assert share.mean_b == pytest.approx(long.mean_b / short.mean_b)
    assert share.mean_a == pytest.approx(long.mean_a / short.mean_a)
    assert rows.loc[("b_vs_a", ">20", "bleu")].delta == pytest.approx(0)


WORSE = ["a man on a bike"] * 30 + ["a dog"] * 25


def test_budget_points_are_scored_and_compared_beside_the_final_models(tmp_path):
    """Point 1: b no better than a; final: b better. Both are rows, told apart by `epoch`."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.de").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "data" / "t.en").write_text("".join(r + "\n" for r in REFERENCES))
    runs = tmp_path / "runs"
    write_run(runs / "a-s1", "ok", variant="a", hypotheses=WORSE)
    write_run(runs / "b-s1", "ok", variant="b")
    write_run(runs / "c-s1", "ok", variant="c")  # trained without a ladder
    for run in ("a-s1", "b-s1"):
        write_point(runs / run, 1, WORSE)
    points = sorted(runs.glob("*/ladder/scores.e*.csv"))
    scores = collect(["a-s1", "b-s1", "c-s1"], runs, ["t"], points)
    bleu = scores[(scores.metric == "bleu") & (scores.bucket == "all")]
    assert sorted(map(tuple, bleu[["run", "epoch"]].values)) == [
        ("a-s1", "1"),
        ("a-s1", "final"),
        ("b-s1", "1"),
        ("b-s1", "final"),
        ("c-s1", "final"),
    ]
    assert set(scores[scores.test_set == "train"].epoch) == {"final"}
    assert len(final_point(scores)) == len(collect(["a-s1", "b-s1", "c-s1"], runs, ["t"]))

    table, _ = comparing.compare(
        [("b_vs_a", "a", "b", "t"), ("c_vs_a", "a", "c", "t")],
        runs,
        ["a-s1", "b-s1", "c-s1"],
        tmp_path / "data",
        "de",
        "en",
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        resamples=50,
        seed=0,
    )
    whole = (
        table[(table.metric == "bleu") & (table.bucket == "all")]
        .set_index(["comparison", "epoch"])
        .delta
    )
    assert whole.loc[("b_vs_a", "1")] == 0 and whole.loc[("b_vs_a", "final")] > 0
    assert set(table[table.comparison == "c_vs_a"].epoch) == {"final"}  # c has no point 1


def test_compare_command_line_writes_the_table(tmp_path):
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.de").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "data" / "t.en").write_text("".join(r + "\n" for r in REFERENCES))
    write_run(tmp_path / "runs" / "a-s1", "ok", variant="a")
    write_run(tmp_path / "runs" / "b-s1", "diverged", variant="b")
    out = tmp_path / "comparisons.csv"
    comparing.main(
        [
            "--runs-dir",
            str(tmp_path / "runs"),
            "--runs",
            "a-s1",
            "b-s1",
            "--pair",
            "x",
            "a",
            "b",
            "t",
            "--data-dir",
            str(tmp_path / "data"),
            "--src",
            "de",
            "--tgt",
            "en",
            "--bucket-edges",
            "0",
            "10",
            "--resamples",
            "10",
            "--out",
            str(out),
        ]
    )
    table = pd.read_csv(out)
    assert list(table.columns) == COMPARISON_COLUMNS and table.empty  # b diverged: skipped
    variances = pd.read_csv(tmp_path / "seed_variance.csv")
    assert list(variances.columns) == SEED_VARIANCE_COLUMNS


PERFECT = ["a man rides a red bike down the hill"] * 55
SHORTER = ["a man rides a red bike"] * 55
POOR = ["a man on a bike"] * 55


def test_seeds_that_disagree_in_sign_widen_the_interval_across_zero_and_leave_it_open(tmp_path):
    """Seed 1: b far better than a; seed 2: b worse. The sentences are all alike, so resampling
    them alone gives no spread: pooled over seeds (before), delta +x [+x, +x] passed an 'above 0'
    check. With the seed variance in the interval (t on its df), it crosses zero: the check is
    inconclusive."""
    from softlookup.claims.checks import Evidence, evaluate
    from softlookup.claims.spec import ComparisonCheck

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.de").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "data" / "t.en").write_text("".join(r + "\n" for r in PERFECT))
    runs = tmp_path / "runs"
    for (variant, seed), hypotheses in {
        ("a", 1): POOR,
        ("b", 1): PERFECT,
        ("a", 2): PERFECT,
        ("b", 2): SHORTER,
    }.items():
        write_run(
            runs / f"{variant}-s{seed}", "ok", variant=variant, seed=seed, hypotheses=hypotheses
        )
    table, _ = comparing.compare(
        [("b_vs_a", "a", "b", "t")],
        runs,
        ["a-s1", "a-s2", "b-s1", "b-s2"],
        tmp_path / "data",
        "de",
        "en",
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        resamples=400,
        seed=0,
    )
    row = table.set_index(["bucket", "metric"]).loc[("all", "bleu")]
    per_seed = json.loads(row.seed_deltas)
    assert per_seed["1"] > 0 > per_seed["2"]
    assert row.delta == pytest.approx((per_seed["1"] + per_seed["2"]) / 2) and row.delta > 0
    assert row.ci_low < 0 < row.ci_high and row.p_value > 0.05
    assert row.ci_high - row.ci_low > per_seed["1"] - per_seed["2"]  # both seeds inside
    # the pair's own per-seed differences, t on their 1 df (no sentence part is left)
    assert row.se_sentence == 0 and row.se == pytest.approx(row.se_seed) and row.seed_df == 1
    assert row.df == pytest.approx(1, rel=1e-3) and "2 per-seed differences" in row.method
    path = tmp_path / "comparisons.csv"
    table.to_csv(path, index=False)
    check = ComparisonCheck(label="b above a", op="above", expected=0.0, comparison="b_vs_a")
    outcome = evaluate(check, Evidence(comparisons=path))
    assert (outcome.status, outcome.reason) == ("inconclusive", "interval_straddles")


def test_what_a_system_generates_is_compared_too(tmp_path):
    """Length ratio (BLEU's tokens) and the share of empty outputs, each system's own with its
    standard error."""
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "t.de").write_text("".join(s + "\n" for s in SOURCES))
    (tmp_path / "data" / "t.en").write_text("".join(r + "\n" for r in PERFECT))
    runs = tmp_path / "runs"
    write_run(runs / "a-s1", "ok", variant="a", hypotheses=[""] * 30 + SHORTER[:25])
    write_run(runs / "b-s1", "ok", variant="b", hypotheses=PERFECT)
    table, _ = comparing.compare(
        [("b_vs_a", "a", "b", "t")],
        runs,
        ["a-s1", "b-s1"],
        tmp_path / "data",
        "de",
        "en",
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        resamples=100,
        seed=0,
    )
    rows = table[table.bucket == "all"].set_index("metric")
    assert rows.loc["empty_share", "mean_a"] == pytest.approx(30 / 55)
    assert rows.loc["empty_share", "mean_b"] == 0
    assert rows.loc["length_ratio", "mean_a"] == pytest.approx(25 * 6 / (55 * 9))
    assert rows.loc["length_ratio", "mean_b"] == pytest.approx(1)
    assert rows.loc["empty_share", "se_a"] > 0 and rows.loc["empty_share", "se_b"] == 0
    assert set(table[table.bucket != "all"].metric) == {"bleu", "bleu_share"}


def test_a_runs_settings_are_read_one_way_whatever_file_holds_them():
    from softlookup.rundir import run_settings

    asked = {
        "variant": "sweep_transformer.heads-8",
        "base_model": "sweep_transformer",
        "seed": 2,
        "model": {"arch": "transformer", "heads": 8},
        "train": {"epochs": 3},
    }
    trained = {"run": asked, "model_config": {"arch": "transformer", "heads": 8, "d_k": None}}
    pending = run_settings("sweep_transformer.heads-8-s2", asked, {})
    done = run_settings("sweep_transformer.heads-8-s2", asked, trained)
    config_gone = run_settings("sweep_transformer.heads-8-s2", {}, trained)
    assert pending.model == asked["model"]  # not trained yet: the model asked for
    assert done.model == trained["model_config"]  # trained: the settings it trained with
    assert done == config_gone
    assert (done.variant, done.base_model, done.seed, done.train) == (
        "sweep_transformer.heads-8",
        "sweep_transformer",
        2,
        {"epochs": 3},
    )
    bare = run_settings("gru_dot-s1", {}, {})  # only the name: variant and base from it
    assert (bare.variant, bare.base_model, bare.seed) == ("gru_dot", "gru_dot", None)


def test_a_run_name_is_split_one_way_into_its_variant_and_seed():
    """rundir.split_run: what evaluate.smk and reference/compare.py read from a run's name."""
    from softlookup.rundir import split_run, variant_of

    assert split_run("sweep_transformer.heads-1-s2") == ("sweep_transformer.heads-1", 2)
    assert split_run("transformer.scale-false-s10") == ("transformer.scale-false", 10)
    assert variant_of("gru_none-s10") == "gru_none"
    with pytest.raises(ValueError, match="not a run name"):
        split_run("gru_none")
