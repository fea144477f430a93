"""Model-level generation benchmark (D7): cache vs recompute on a tiny random Transformer."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from softlookup.bench.generation import (
    COLUMNS,
    MEMORY_COLUMNS,
    build_random_transformer,
    cache_allocated_bytes,
    compare_ways,
    main,
    next_tokens,
    random_source,
)
from softlookup.models import BOS, EOS, PAD

TINY = {"d_model": 16, "heads": 2, "ffn_dim": 32, "layers": 2, "vocab": 50}


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(generation_cpu.csv, cache_memory_cpu.csv) of the tiny model."""
    out = tmp_path_factory.mktemp("bench")
    options = [f"--{key.replace('_', '-')}={value}" for key, value in TINY.items()]
    main(
        ["--device", "cpu", "--out", str(out / "generation_cpu.csv"), *options, "--src-len", "5",
         "--new-tokens", "3", "6", "12", "--batch", "1", "3", "--repeats", "1",
         "--memory-out", str(out / "cache_memory_cpu.csv"), "--memory-layers", "1", "2", "4",
         "--memory-heads", "1", "2", "4", "--memory-tokens", "6"]
    )  # fmt: skip
    return pd.read_csv(out / "generation_cpu.csv"), pd.read_csv(out / "cache_memory_cpu.csv")


@pytest.fixture(scope="module")
def table(tables) -> pd.DataFrame:
    return tables[0]


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


def test_the_allocator_holds_the_cache_and_nothing_else(table, tables):
    """Measured by the allocator's events, not the tensors' shapes: the bytes still held after
    the cached steps are the cache's own, linear in tokens, layers and heads (at one d_k)."""
    assert (table.cache_allocated_bytes == table.cache_bytes).all()
    memory = tables[1].set_index("swept")
    assert list(tables[1].columns) == MEMORY_COLUMNS
    for swept in ("layers", "heads"):
        rows = memory.loc[swept]
        per_unit = rows.cache_allocated_bytes / rows[swept]
        assert per_unit.nunique() == 1 and (per_unit > 0).all(), swept
    assert (memory.loc["heads"].d_k == 8).all()


def test_a_cache_that_keeps_old_copies_is_measured_as_such():
    """The nbytes of the final cache would not see a decoder that keeps every step's copy: the
    allocator does (memory quadratic in the tokens)."""
    model = build_random_transformer(**TINY, max_len=16, seed=0)
    src = random_source(1, 5, TINY["vocab"], seed=0)
    honest_step, kept = model.decode_step, []

    def hoarding_step(tokens, state):
        kept.append(state)
        return honest_step(tokens, state)

    model.decode_step = hoarding_step
    held = [cache_allocated_bytes(model, src, n) for n in (4, 8)]
    honest = 2 * TINY["layers"] * TINY["heads"] * 8 * 4  # bytes per token
    assert held[1] - held[0] > 4 * honest  # each step holds its own copy of the growing cache


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
