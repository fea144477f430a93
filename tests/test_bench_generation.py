"""Model-level generation benchmark (D7): cache vs recompute on a tiny random Transformer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats

from softlookup.bench import generation
from softlookup.bench.generation import (
    COLUMNS,
    MEMORY_COLUMNS,
    SLOPE_COLUMNS,
    build_random_transformer,
    cache_allocated_bytes,
    compare_ways,
    main,
    next_tokens,
    random_source,
    slope_rows,
)
from softlookup.models import BOS, EOS, PAD

from .claims_file import check, checks

TINY = {"d_model": 16, "heads": 2, "ffn_dim": 32, "layers": 2, "vocab": 50}


@pytest.fixture(scope="module")
def tables(tmp_path_factory) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """(generation_cpu.csv, cache_memory_cpu.csv, kv_step_slopes_cpu.csv) of the tiny model."""
    out = tmp_path_factory.mktemp("bench")
    options = [f"--{key.replace('_', '-')}={value}" for key, value in TINY.items()]
    main(
        [
            "--device",
            "cpu",
            "--out",
            str(out / "generation_cpu.csv"),
            *options,
            "--src-len",
            "5",
            "--new-tokens",
            "3",
            "6",
            "12",
            "--batch",
            "1",
            "3",
            "--repeats",
            "3",
            "--slopes-out",
            str(out / "kv_step_slopes_cpu.csv"),
            "--memory-out",
            str(out / "cache_memory_cpu.csv"),
            "--memory-layers",
            "1",
            "2",
            "4",
            "--memory-heads",
            "1",
            "2",
            "4",
            "--memory-tokens",
            "6",
        ]
    )
    return tuple(
        pd.read_csv(out / f"{name}_cpu.csv")
        for name in ("generation", "cache_memory", "kv_step_slopes")
    )


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
    steps = [
        "first_step_cache_s",
        "last_step_cache_s",
        "first_step_recompute_s",
        "last_step_recompute_s",
    ]
    assert (table[["time_cache_s", "time_recompute_s", *steps]] > 0).all().all()
    ratio = table.time_recompute_s / table.time_cache_s
    assert table.speedup.tolist() == pytest.approx(ratio.tolist())


def test_rounds_time_every_setting_forwards_then_backwards(monkeypatch):
    """A drift in load over the benchmark must reach every prefix length alike: each round times
    every setting, both ways back to back, in alternating order."""
    order = []

    def timed(model, src, new_tokens, use_cache):
        order.append((src.shape[0], new_tokens, "cache" if use_cache else "recompute"))
        return generation.Timing(1.0, [1.0] * new_tokens)

    monkeypatch.setattr(generation, "timed_generation", timed)
    sources = {
        (batch, n): torch.zeros(batch, 2, dtype=torch.long) for batch in (1, 3) for n in (2, 4)
    }
    runs = generation.timed_rounds(None, sources, repeats=3)
    forwards = [(b, n, way) for b, n in sources for way in generation.WAYS]
    backwards = [(b, n, way) for b, n in reversed(sources) for way in generation.WAYS]
    assert order == forwards + backwards + forwards
    assert all(len(runs[setting][way]) == 3 for setting in sources for way in generation.WAYS)


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
        main(
            ["--device", "cpu", "--out", str(tmp_path / "x.csv"), "--d-model", "10", "--heads", "4"]
        )
    assert "--d-model 10 is not a multiple of --heads 4" in capsys.readouterr().err


# ---- linear vs quadratic: counted from the shapes, timed with an interval (issue 33) -----------


def test_score_cells_of_the_last_token_are_t_with_the_cache_and_t_squared_without(table):
    """Per sentence, summed over layers and heads: one query against t keys, or t against t."""
    per_token = TINY["layers"] * TINY["heads"]
    assert table.score_cells_cache.tolist() == (per_token * table.new_tokens).tolist()
    assert table.score_cells_recompute.tolist() == (per_token * table.new_tokens**2).tolist()


def test_a_cache_that_recomputes_is_counted_as_recomputing():
    """The count reads the shapes the attention receives, not the model's intent: a 'cache'
    that reruns the prefix computes t^2 cells, and the counted slope's check (1 exactly) fails."""
    model = build_random_transformer(**TINY, max_len=16, seed=0)
    src = random_source(1, 5, TINY["vocab"], seed=0)
    honest_start = model.start_decoding

    def rerunning_start(src, use_cache=True):  # a cache's state whose every step reruns the prefix
        state = honest_start(src, use_cache=False)
        return {**state, "self_kv": [], "cross_kv": []} if use_cache else state

    model.start_decoding = rerunning_start
    cells = [compare_ways(model, src, n).score_cells_cache for n in (4, 8)]
    assert cells == [TINY["layers"] * TINY["heads"] * n**2 for n in (4, 8)]
    slope = math.log(cells[1] / cells[0]) / math.log(2)
    counted = check("D7", bench="generation", column="score_cells_cache")
    assert abs(slope - counted["expected"]) > counted["tolerance"]


def test_slopes_come_from_repeated_timings_with_an_interval(tables):
    slopes = tables[2]
    assert list(slopes.columns) == SLOPE_COLUMNS
    assert sorted(slopes.quantity.unique()) == [
        "last_step_cache_slope",
        "last_step_recompute_slope",
        "last_step_time_ratio_slope",
    ]
    assert (slopes.repeats == 3).all() and (slopes.points == 3).all()
    assert (slopes.ci_low <= slopes.value).all() and (slopes.value <= slopes.ci_high).all()
    assert (slopes.ci_high > slopes.ci_low).all()  # three timings never agree to the last bit
    assert slopes.groupby("batch").largest_batch.first().to_dict() == {1: False, 3: True}


def timings(slopes_by_repetition: list[float], tokens=(25, 50, 100, 200)) -> dict:
    """last_steps for slope_rows: a flat cache and a recompute whose time grows as n^slope, one
    slope per repetition."""
    return {
        n: {
            "cache": [1e-3] * len(slopes_by_repetition),
            "recompute": [1e-3 * n**slope for slope in slopes_by_repetition],
        }
        for n in tokens
    }


def test_slope_interval_is_the_t_interval_of_the_repetitions_slopes():
    per_repetition = [0.9, 1.1, 1.3]
    rows = {row["quantity"]: row for row in slope_rows(timings(per_repetition))}
    ratio = rows["last_step_time_ratio_slope"]
    half = stats.t.ppf(0.975, 2) * np.std(per_repetition, ddof=1) / math.sqrt(3)
    assert ratio["value"] == pytest.approx(1.1)
    assert (ratio["ci_low"], ratio["ci_high"]) == pytest.approx((1.1 - half, 1.1 + half))
    assert rows["last_step_cache_slope"]["value"] == pytest.approx(0.0, abs=1e-12)
    assert (ratio["repeats"], ratio["points"]) == (3, 4)
    single = slope_rows(timings([1.0]))[0]
    assert single["value"] == pytest.approx(1.0) and math.isnan(single["ci_low"])


def test_a_slope_of_0_52_whose_interval_straddles_0_5_decides_nothing():
    """Issue 33: the old check passed on the point 0.52 > 0.5; then its interval over
    repetitions straddled the bar. Issue 47: such timings move with the host's load, so D7 shows
    the timed slope with its interval and decides on the counted score cells."""
    timed = check("D7", macro="StepTimeRatioSlope")
    assert (timed["bench"], timed["by"], timed["op"]) == ("kv_step_slopes", "interval", "report")
    assert timed["where"] == {"quantity": "last_step_time_ratio_slope", "largest_batch": True}
    assert check("D7", headline=True)["macro"] == "ScoreCellsRatioSlope"
    (ratio,) = [
        row
        for row in slope_rows(timings([0.30, 0.52, 0.74]))
        if row["quantity"] == timed["where"]["quantity"]
    ]
    assert ratio["ci_low"] < timed["expected"] < ratio["ci_high"]  # shown with its interval


def test_every_timed_step_cost_check_of_d7_reads_an_interval():
    timed = [
        raw
        for raw in checks("D7")
        if raw.get("bench") == "kv_step_slopes" and raw["column"] == "value"
    ]
    assert len(timed) == 3 and all(raw["by"] == "interval" for raw in timed)
    point_slopes = [raw for raw in checks("D7") if str(raw.get("column")).startswith("last_step_")]
    assert not point_slopes  # no slope of one timing per setting is left
