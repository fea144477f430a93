"""Model-level generation benchmark (D7): cache vs recompute on a tiny random Transformer."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from softlookup.bench.generation import (
    COLUMNS,
    build_random_transformer,
    compare_ways,
    main,
    next_tokens,
    random_source,
)
from softlookup.models import BOS, EOS, PAD

TINY = {"d_model": 16, "heads": 2, "ffn_dim": 32, "layers": 2, "vocab": 50}


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("bench") / "generation_cpu.csv"
    options = [f"--{key.replace('_', '-')}={value}" for key, value in TINY.items()]
    main(
        ["--device", "cpu", "--out", str(out), *options, "--src-len", "5",
         "--new-tokens", "3", "6", "12", "--batch", "1", "3", "--repeats", "1"]
    )  # fmt: skip
    return pd.read_csv(out)


def test_one_row_per_setting_with_every_column(table):
    assert list(table.columns) == COLUMNS
    assert sorted(zip(table.batch, table.new_tokens, strict=True)) == [
        (b, n) for b in (1, 3) for n in (3, 6, 12)
    ]
    assert (table.d_k == 8).all() and (table.device == "cpu").all()
    assert table.torch.eq(torch.__version__).all()


def test_cache_and_recomputation_generate_identical_tokens(table):
    assert table.identical.all()
    assert (table.max_abs_logprob_diff < 1e-4).all()


def test_timings_are_positive_and_consistent(table):
    steps = ["first_step_cache_s", "last_step_cache_s", "first_step_recompute_s",
             "last_step_recompute_s"]  # fmt: skip
    assert (table[["time_cache_s", "time_recompute_s", *steps]] > 0).all().all()
    ratio = table.time_recompute_s / table.time_cache_s
    assert table.speedup.tolist() == pytest.approx(ratio.tolist())


def test_cache_memory_is_keys_and_values_per_token_layer_and_head(table):
    # 2 (keys, values) x layers x batch x heads x d_k x tokens float32 numbers: linear in tokens
    expected = 2 * TINY["layers"] * table.batch * TINY["heads"] * 8 * table.new_tokens * 4
    assert table.cache_bytes.equals(expected)
    # the cross-attention keys and values depend on the source only
    assert table.groupby("batch").cross_kv_bytes.nunique().eq(1).all()


def test_a_cache_that_changes_the_output_is_caught():
    model = build_random_transformer(**TINY, max_len=16, seed=0)
    src = random_source(2, 5, TINY["vocab"], seed=0)
    honest_step = model.decode_step

    def biased_step(tokens, state):  # the cached path prefers token 10 by a wide margin
        log_probs, state = honest_step(tokens, state)
        if "self_kv" in state:
            log_probs = log_probs.clone()
            log_probs[:, 10] += 100.0
        return log_probs, state

    model.decode_step = biased_step
    comparison = compare_ways(model, src, new_tokens=4)
    assert not comparison.identical
    assert comparison.max_abs_logprob_diff > 99.0


def test_greedy_choice_skips_the_special_tokens():
    log_probs = torch.full((2, 8), -5.0)
    log_probs[0, [PAD, BOS, EOS]] = 0.0
    log_probs[0, 6] = -1.0
    log_probs[1, 4] = -0.5
    assert next_tokens(log_probs).tolist() == [6, 4]


def test_heads_must_divide_the_width(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["--device", "cpu", "--out", str(tmp_path / "x.csv"), "--d-model", "10",
              "--heads", "4"])  # fmt: skip
    assert "--d-model 10 is not a multiple of --heads 4" in capsys.readouterr().err
