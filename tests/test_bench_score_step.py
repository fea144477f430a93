"""One decoder step of each GRU score (D2's "cheaper"): timed with intervals, counted exactly."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch
from scipy import stats
from torch.utils.flop_counter import FlopCounterMode

from softlookup.bench.score_step import (
    COLUMNS,
    SCORES,
    main,
    per_sentence_flops,
    score_flops,
    timed_rows,
)
from softlookup.models.gru import CrossAttention

from .claims_file import check, decisive


@pytest.fixture(scope="module")
def table(tmp_path_factory) -> pd.DataFrame:
    out = tmp_path_factory.mktemp("bench") / "score_step_cpu.csv"
    main(
        [
            "--device",
            "cpu",
            "--out",
            str(out),
            "--dim",
            "8",
            "--src-len",
            "5",
            "--batch",
            "3",
            "--calls",
            "4",
            "--repeats",
            "3",
        ]
    )
    return pd.read_csv(out)


def row(table: pd.DataFrame, quantity: str, score: str) -> pd.Series:
    (index,) = table.index[(table.quantity == quantity) & (table.score == score)]
    return table.loc[index]


def test_every_score_is_timed_with_an_interval_and_counted(table):
    assert list(table.columns) == COLUMNS and (table.repeats == 3).all()
    for score in SCORES:
        timed = row(table, "step_time_s", score)
        assert timed.value > 0 and timed.ci_low <= timed.value <= timed.ci_high
        assert row(table, "score_flops", score).value == score_flops(score, 8, 5)
    for score in ("additive", "general"):
        ratio = row(table, "time_ratio", score)
        assert ratio.to == "dot" and 0 < ratio.ci_low <= ratio.value <= ratio.ci_high
        assert row(table, "flops_ratio", score).value == score_flops(score, 8, 5) / (2 * 8 * 5)
    assert table[table.quantity.str.contains("flops")].ci_low.isna().all()  # a count: exact


@pytest.mark.parametrize("score", SCORES)
def test_flops_are_the_matrix_products_torch_counts_plus_the_elementwise_work(score):
    """torch's FlopCounterMode counts the matrix products of one call (materialised attention);
    the closed form adds the elementwise work (additive: bias, sum, tanh) and leaves out what
    every score shares (the weighted mean of the values, 2 S D; for additive, the kernel's 1-wide
    'dot' of its energies, 2 S)."""
    batch, src_len, dim = 3, 7, 16
    attention = CrossAttention(score, dim, backend="reference")
    values = torch.randn(batch, src_len, dim)
    memory = {
        "values": values,
        "keys": attention.keys(values),
        "src_pad": torch.zeros(batch, src_len, dtype=torch.bool),
    }
    with FlopCounterMode(display=False) as counter, torch.no_grad():
        attention(torch.randn(batch, dim), memory)
    products = counter.get_total_flops() / batch - 2 * src_len * dim
    elementwise = 0
    if score == "additive":
        products -= 2 * src_len
        elementwise = dim + 2 * src_len * dim
    assert products + elementwise == score_flops(score, dim, src_len)
    projections = 2 * src_len * dim * dim if score != "dot" else 0  # U h or W h, per sentence
    assert per_sentence_flops(score, dim, src_len) == projections


def test_time_ratio_is_the_geometric_mean_of_the_repetitions_with_a_t_interval():
    times = {"additive": [3.0, 4.0, 6.0], "dot": [1.0, 1.0, 2.0], "general": [1.0, 1.0, 2.0]}
    rows = {(r["quantity"], r["score"]): r for r in timed_rows(times)}
    logs = np.log([3.0, 4.0, 3.0])
    half = stats.t.ppf(0.975, 2) * logs.std(ddof=1) / math.sqrt(3)
    ratio = rows["time_ratio", "additive"]
    assert ratio["value"] == pytest.approx(math.exp(logs.mean()))
    assert (ratio["ci_low"], ratio["ci_high"]) == pytest.approx(
        (math.exp(logs.mean() - half), math.exp(logs.mean() + half))
    )
    assert rows["time_ratio", "general"]["value"] == pytest.approx(1.0)


def test_a_ratio_above_1_whose_interval_straddles_1_is_not_a_pass():
    """Issue 33: 'cheaper' rested on one timing per run. Judged by its interval, a ratio of
    1.05 from timings that disagree cannot say which score is cheaper."""
    cheaper = check("D2", bench="score_step", where={"quantity": "time_ratio", "score": "additive"})
    assert (cheaper["op"], cheaper["expected"], cheaper["by"]) == ("above", 1, "interval")
    noisy = {"additive": [0.7, 1.05, 1.5], "dot": [1.0, 1.0, 1.0]}
    ratio = [r for r in timed_rows(noisy) if r["quantity"] == "time_ratio"][0]
    assert ratio["value"] > cheaper["expected"]  # a point rule would pass
    assert ratio["ci_low"] < cheaper["expected"] < ratio["ci_high"]  # by interval: inconclusive


def test_d2_cheaper_is_no_longer_decided_by_one_timing_per_run():
    assert check("D2", run_value="tokens_per_s")["op"] == "report"
    cheap = [raw for raw in decisive("D2") if raw.get("bench") == "score_step"]
    assert {raw["where"]["quantity"] for raw in cheap} == {"time_ratio", "flops_ratio"}
