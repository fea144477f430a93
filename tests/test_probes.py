"""Probes against independent arithmetic: numpy by hand, autograd, closed forms."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
import torch

from softlookup.probes import (
    averaging,
    counting,
    diagnostics,
    order,
    saturation,
    spread,
    worked_examples,
)
from softlookup.probes.common import weights_from_scores


def softmax(scores: np.ndarray) -> np.ndarray:
    exp = np.exp(scores - scores.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


def value(frame: pd.DataFrame, quantity: str, **settings: str) -> float:
    rows = frame[frame.quantity == quantity]
    for name, wanted in settings.items():
        rows = rows[rows[name] == wanted]
    assert len(rows) == 1, (quantity, settings, len(rows))
    return float(rows.value.iloc[0])


@pytest.fixture(scope="module")
def examples() -> pd.DataFrame:
    return worked_examples.measure().frame()


def test_three_token_example_matches_numpy(examples):
    x = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    q, k, v = x @ np.array([[1.0, 0.0], [2.0, 1.0]]), x, 2 * x
    weights = softmax(q @ k.T / math.sqrt(2))
    out = weights @ v
    for i in range(3):
        for j in range(3):
            got = value(examples, "weight", example="three_token", row=str(i + 1), col=str(j + 1))
            assert got == pytest.approx(weights[i, j], abs=1e-6)
        for j in range(2):
            got = value(examples, "output", example="three_token", row=str(i + 1), col=str(j + 1))
            assert got == pytest.approx(out[i, j], abs=1e-6)
    causal = softmax(q @ k.T / math.sqrt(2) + np.triu(np.full((3, 3), -np.inf), 1))
    got = value(examples, "weight", example="three_token_causal", row="2", col="1")
    assert got == pytest.approx(causal[1, 0], abs=1e-6)


def test_river_bank_example_matches_numpy(examples):
    x = np.array([[0.1, 0.1], [1.0, 0.0], [0.5, 0.5], [0.8, 0.2]])
    q = np.stack([x[:, 0] + 0.5 * x[:, 1], 0.5 * x[:, 0] + x[:, 1]], axis=1)
    k = np.stack([2 * x[:, 0], x[:, 1]], axis=1)
    bank = softmax(q[2] @ k.T / math.sqrt(2))
    words = worked_examples.WORDS
    for j, word in enumerate(words):
        got = value(examples, "weight", example="river_bank", row="bank", col=word)
        assert got == pytest.approx(bank[j], abs=1e-6)
    unscaled = softmax(8 * q[2] @ k.T)
    got = value(examples, "weight", example="river_bank_x8", row="bank", col="river")
    assert got == pytest.approx(unscaled[1], abs=1e-6)
    masked = softmax(q[2] @ k[:3].T / math.sqrt(2))
    got = value(examples, "weight", example="river_bank_causal", row="bank", col="bank")
    assert got == pytest.approx(masked[2], abs=1e-6)
    assert value(examples, "rows_with_max_on_largest_key", example="river_bank") == 4


def test_additive_and_soft_lookup_examples(examples):
    scores = np.tanh(0.5 + np.array([1.0, -1.0]))
    got = value(examples, "weight", example="additive", row="s", col="1")
    assert got == pytest.approx(softmax(scores)[0], abs=1e-6)
    lookup = softmax(np.array([2.0, 1.0, 2.0]))
    got = value(examples, "output", example="soft_lookup", row="q", col="1")
    assert got == pytest.approx(lookup @ np.array([10.0, 0.0, 5.0]), abs=1e-6)
    assert value(examples, "inside_value_triangle", example="soft_lookup") == 1


def test_weights_from_scores_is_softmax():
    scores = torch.tensor([[0.3, -1.2, 2.0], [5.0, 5.0, -5.0]], dtype=torch.float64)
    expected = softmax(scores.numpy())
    np.testing.assert_allclose(weights_from_scores(scores).numpy(), expected, atol=1e-6)


def test_spread_follows_sqrt_d():
    frame = spread.measure_spread([4, 64], n_pairs=4000, seed=3).frame()
    for d in (4, 64):
        unscaled = value(frame, "std_score", d=str(d), scaling="unscaled")
        scaled = value(frame, "std_score", d=str(d), scaling="scaled")
        assert unscaled == pytest.approx(math.sqrt(d), rel=0.06)
        assert scaled == pytest.approx(unscaled / math.sqrt(d), rel=1e-12)


def test_softmax_jacobian_norm_matches_autograd():
    scores = torch.tensor([0.1, 2.0, -1.0, 0.5], dtype=torch.float64)
    jacobian = torch.autograd.functional.jacobian(lambda s: torch.softmax(s, -1), scores)
    expected = float(torch.linalg.matrix_norm(jacobian))
    got = float(saturation.softmax_jacobian_norm(torch.softmax(scores, -1)))
    assert got == pytest.approx(expected, rel=1e-10)


def test_saturation_grows_unscaled_only():
    frame = saturation.measure_saturation([4, 256], 500, 3, 0.95, seed=1).frame()
    unscaled = [value(frame, "frac_rows_saturated", d=d, scaling="unscaled") for d in ("4", "256")]
    scaled = [value(frame, "frac_rows_saturated", d=d, scaling="scaled") for d in ("4", "256")]
    assert unscaled[1] > unscaled[0] + 0.3
    assert max(scaled) < 0.1


def test_order_equivariance_and_its_breaking():
    frame = order.measure_order(8, 16, 3, seed=0).frame()
    assert value(frame, "max_abs_equivariance_error", masking="none") < 1e-10
    assert value(frame, "rel_equivariance_error", masking="causal") > 1e-3
    assert value(frame, "max_abs_weight_difference", example="river_bank_reversed") < 1e-12


def test_uniformity_residual_and_effective_rank_by_hand():
    same = torch.ones(5, 3, dtype=torch.float64)
    assert averaging.token_uniformity_residual(same) == pytest.approx(0.0, abs=1e-15)
    x = torch.tensor([[1.0, 0.0], [-1.0, 0.0]], dtype=torch.float64)  # mean 0: all residual
    assert averaging.token_uniformity_residual(x) == pytest.approx(1.0)
    assert averaging.effective_rank(torch.eye(4, dtype=torch.float64)) == pytest.approx(4.0)


def test_attention_stack_collapses_and_is_not_linear():
    frame = averaging.measure_averaging(8, 16, 6, seed=0).frame()
    start = value(frame, "token_uniformity_residual", stack="attention", depth="0")
    end = value(frame, "token_uniformity_residual", stack="attention", depth="6")
    assert end < 1e-3 * start
    assert value(frame, "frac_outputs_inside_value_range", check="hull") == 1
    assert value(frame, "superposition_error", path="layer") > 1e-2
    assert value(frame, "superposition_error", path="values_with_fixed_weights") < 1e-12


def test_rank_correlation_by_hand():
    a = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert diagnostics.rank_correlation(a, a**3) == pytest.approx(1.0)
    assert diagnostics.rank_correlation(a, -a) == pytest.approx(-1.0)


def test_big_key_only_rises_where_the_query_agrees():
    frame = diagnostics.measure_diagnostics(200, 12, 8, [2.0], seed=0).frame()
    rises = value(frame, "frac_rows_big_key_weight_rises", example="random", factor="2.0")
    positive = value(frame, "frac_rows_positive_dot_with_big_key", example="random")
    assert rises == pytest.approx(positive)  # dw/dc = w(1-w) q.k: sign of q.k decides
    assert value(frame, "frac_rows_big_key_weight_rises", example="river_bank", factor="2.0") == 1


def test_counts_match_closed_forms():
    frame = counting.measure_counting([8], [1, 2], [3, 50], 10, 8, 2, 5, seed=0).frame()
    for heads in ("1", "2"):
        for bias, expected in (("True", 4 * 64 + 4 * 8), ("False", 4 * 64)):
            for implementation in ("torch_mha", "softlookup_mha"):
                got = value(frame, "attention_params", implementation=implementation, width="8",
                            heads=heads, bias=bias)  # fmt: skip
                assert got == expected
    assert value(frame, "score_table_bytes", n="3", method="materialised") == 2 * 9
    assert value(frame, "score_table_bytes", n="50", method="counted") == 2 * 2500
    ffn = value(frame, "ffn_params", implementation="softlookup", width="8")
    assert ffn == 8 * 32 + 32 + 32 * 8 + 8
    split = value(frame, "score_cells", layout="split")
    assert split == 2 * value(frame, "score_cells", layout="whole") == 2 * 25


def test_cli_writes_a_tidy_csv(tmp_path):
    out = tmp_path / "spread.csv"
    spread.main(["--out", str(out), "--dims", "4,8", "--n-pairs", "100", "--seed", "2"])
    frame = pd.read_csv(out)
    assert list(frame.columns) == ["probe", "quantity", "d", "scaling", "value"]
    assert (frame.probe == "spread").all() and len(frame) == 2 + 4
