"""Scoring (sacrebleu, buckets, intervals) and collecting runs into the tidy table."""

import json

import pytest
import sacrebleu

from softlookup.evaluate.collect import COLUMNS, collect
from softlookup.evaluate.score import bucket_label, score_test_set

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


def write_run(run_dir, status):
    run_dir.mkdir()
    meta = {
        "status": status,
        "train_tokens_per_s": 100.0,
        "train_wall_s": 5.0,
        "final_train_loss": 2.0,
        "best_val_loss": 2.5,
        "epochs": 1,
        "parameters": 10,
        "environment": {"device": "cpu"},
    }
    (run_dir / "meta.json").write_text(json.dumps(meta))
    score_test_set(
        "t",
        SOURCES,
        HYPOTHESES,
        REFERENCES,
        edges=[0, 10, 20],
        min_bucket_sentences=20,
        n_bootstrap=1,
    ).to_csv(run_dir / "scores.t.csv")


def test_collect_keeps_a_diverged_run_as_a_result_without_scores(tmp_path):
    write_run(tmp_path / "a-s1", "ok")
    write_run(tmp_path / "b-s1", "diverged")
    settings = {
        "model": "m",
        "arch": "gru",
        "attention": "dot",
        "sweep": "",
        "sweep_value": "",
        "seed": 1,
    }
    table = collect({"a-s1": settings, "b-s1": settings}, tmp_path, ["t"])
    assert list(table.columns) == COLUMNS and set(table.device) == {"cpu"}
    scored = table[table.test_set == "t"]
    assert scored[scored.run_id == "a-s1"].value.notna().all()
    assert scored[scored.run_id == "b-s1"].value.isna().all()
    assert set(table[table.run_id == "b-s1"].status) == {"diverged"}
    trained = table[(table.test_set == "train") & (table.metric == "train_tokens_per_s")]
    assert trained.value.tolist() == [100.0, 100.0]
