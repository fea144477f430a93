"""The training-step benchmark against sentence length (claim D6): one row per model x length,
tokens per batch held fixed, the spread and provenance of every other benchmark."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from softlookup.bench.timing import PROVENANCE_COLUMNS
from softlookup.bench.train_lengths import LENGTH_COLUMNS, main

PLAN = Path(__file__).parents[1] / "benchmarks" / "paper_runs.json"


def test_two_lengths_of_the_paper_pair_on_cpu(tmp_path):
    out = tmp_path / "train_step_lengths_cpu.csv"
    main(
        [
            "--plan",
            str(PLAN),
            "--device",
            "cpu",
            "--out",
            str(out),
            "--dry",
            "--samples",
            "2",
            "--lengths",
            "4",
            "8",
            "--batch-tokens",
            "16",
            "--threads",
            "1",
        ]
    )
    rows = pd.read_csv(out)
    assert list(rows.columns) == LENGTH_COLUMNS and LENGTH_COLUMNS[: len(PROVENANCE_COLUMNS)] == (
        PROVENANCE_COLUMNS
    )
    assert (rows.status == "ok").all() and (rows.device == "cpu").all()
    assert list(rows.sentence_tokens) == [8, 8, 4, 4]  # longest first, both models together
    assert list(rows.variant) == ["gru_additive", "transformer"] * 2
    assert list(rows.batch_sentences) == [2, 2, 4, 4]  # 16 tokens a batch, whatever the length
    assert (rows.samples == 2).all() and (rows.time_p20_ms <= rows.time_p80_ms).all()
    assert (rows.time_ms > 0).all() and rows.parameters.gt(0).all()
    assert (rows.autocast == "bf16").all()  # --dry: the GPU's mixed-precision path
    assert rows.tokens_per_s.to_numpy() == pytest.approx(32 / rows.time_ms.to_numpy() * 1e3)


def test_a_variant_the_plan_lacks_is_refused(tmp_path):
    with pytest.raises(SystemExit, match="no variant"):
        main(
            [
                "--plan",
                str(PLAN),
                "--device",
                "cpu",
                "--out",
                str(tmp_path / "x.csv"),
                "--variants",
                "gru_additive",
                "lstm",
            ]
        )


def test_the_workflow_gives_runs_config_files_and_the_vocabulary(tmp_path):
    """bench_train_lengths: the pair's results/runs/<run>/config.json (as the workflow writes
    them: variant, model, train), their variants in the order given, the BPE size as --vocab."""
    runs = []
    for variant, model in [
        (
            "transformer",
            {
                "arch": "transformer",
                "d_model": 16,
                "heads": 2,
                "ffn_dim": 16,
                "enc_layers": 1,
                "dec_layers": 1,
            },
        ),
        ("gru_additive", {"arch": "gru", "attention": "additive", "emb_dim": 8, "hidden_dim": 8}),
    ]:
        path = tmp_path / f"{variant}.json"
        path.write_text(
            json.dumps(
                {
                    "run": f"{variant}-s1",
                    "variant": variant,
                    "model": model,
                    "train": {"max_tokens": 12},
                }
            )
        )
        runs.append(str(path))
    out = tmp_path / "rows.csv"
    main(
        [
            "--run-configs",
            *runs,
            "--vocab",
            "30",
            "--device",
            "cpu",
            "--out",
            str(out),
            "--samples",
            "1",
            "--lengths",
            "3",
            "6",
        ]
    )
    rows = pd.read_csv(out)
    assert list(rows.variant) == ["transformer", "gru_additive"] * 2
    assert (rows.batch_tokens == 12).all() and list(rows.batch_sentences) == [2, 2, 4, 4]
    assert (rows.autocast == "off").all() and (rows.status == "ok").all()  # fp32 on CPU
