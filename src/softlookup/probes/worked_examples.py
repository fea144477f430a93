"""Probe A1-A9: every worked example of the two essays, recomputed through the attention entry.

The first essay's inline vectors were lost in extraction. Its inputs are rebuilt here so that they
reproduce the printed intermediate figures (A1: query (1,1), keys (2,0) (0,1) (1,1), values (10,5)
(0,10) (5,0), and the moved query (1,0), whose output the essay does not print; A2: a one-number
additive score v*tanh(W s + U h) with W = U = v = 1, decoder state 0.5, encoder states 1 and -1).
Every other example is given in full by the essays; A9 is one NumPy draw, default_rng(42).
Rows: quantity (score, scaled_score, weight, output, ...), example, row, col, value.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import torch

from softlookup.kernels import reference_attention

from .common import TidyRows, attend, weights_from_scores

WORDS = ("the", "river", "bank", "flooded")
DTYPE = torch.float64


def add_matrix(rows: TidyRows, quantity: str, example: str, matrix, row_labels, col_labels) -> None:
    """One row per cell of a (len(row_labels), len(col_labels)) matrix."""
    for i, row_label in enumerate(row_labels):
        for j, col_label in enumerate(col_labels):
            rows.add(quantity, matrix[i, j], example=example, row=row_label, col=col_label)


def inside_triangle(point: torch.Tensor, corners: torch.Tensor) -> bool:
    """Whether a 2-D point lies in the triangle of three corners (3,2), by barycentric solve."""
    edges = torch.stack([corners[1] - corners[0], corners[2] - corners[0]], dim=1)  # (2,2)
    b1, b2 = torch.linalg.solve(edges, point - corners[0])
    return bool(b1 >= 0 and b2 >= 0 and b1 + b2 <= 1)


SOFT_LOOKUP_KEYS = ((2.0, 0.0), (0.0, 1.0), (1.0, 1.0))  # A1, rebuilt (module docstring)
SOFT_LOOKUP_VALUES = ((10.0, 5.0), (0.0, 10.0), (5.0, 0.0))
SOFT_LOOKUP_QUERIES = {"soft_lookup": (1.0, 1.0), "soft_lookup_moved": (1.0, 0.0)}


def largest_item(weights: torch.Tensor) -> int:
    """The 1-based item whose weight in a (N,) row is strictly the largest; 0 for a tie."""
    top = weights.max()
    winners = torch.nonzero(weights >= top - 1e-12).flatten()
    return int(winners[0]) + 1 if len(winners) == 1 else 0


def soft_lookup(rows: TidyRows) -> None:
    """A1: one query, three key-value pairs, unscaled scores; then the query moves. Beside the
    printed figures, the essay's words: items 1 and 3 tie, after the move item 1 wins and the
    output moves toward item 1's value (its distance from that value, before and after)."""
    keys = torch.tensor(SOFT_LOOKUP_KEYS, dtype=DTYPE)  # (3,2)
    values = torch.tensor(SOFT_LOOKUP_VALUES, dtype=DTYPE)  # (3,2)
    items = ("1", "2", "3")
    outputs = {}
    for example, query in SOFT_LOOKUP_QUERIES.items():
        q = torch.tensor([query], dtype=DTYPE)  # (1,2)
        out, weights = attend(q, keys, values, scale=1.0)
        add_matrix(rows, "score", example, q @ keys.T, ("q",), items)
        add_matrix(rows, "weight", example, weights, ("q",), items)
        add_matrix(rows, "output", example, out, ("q",), ("1", "2"))
        rows.add("inside_value_triangle", inside_triangle(out[0], values), example=example)
        rows.add("largest_weight_item", largest_item(weights[0]), example=example, row="q")
        rows.add(
            "distance_to_value", (out[0] - values[0]).norm(), example=example, row="q", col="1"
        )
        outputs[example] = out[0]
    shift = outputs["soft_lookup_moved"] - outputs["soft_lookup"]
    rows.add("output_shift", shift.norm(), example="soft_lookup_moved", row="q")


def additive_score(rows: TidyRows) -> None:
    """A2: Bahdanau's score v*tanh(W s + U h) on one-number states, then softmax."""
    w_s = u_h = v_a = 1.0
    decoder_state = torch.tensor(0.5, dtype=DTYPE)
    encoder_states = torch.tensor([1.0, -1.0], dtype=DTYPE)
    scores = v_a * torch.tanh(w_s * decoder_state + u_h * encoder_states)  # (2,)
    weights = weights_from_scores(scores[None])
    add_matrix(rows, "score", "additive", scores[None], ("s",), ("1", "2"))
    add_matrix(rows, "weight", "additive", weights, ("s",), ("1", "2"))


def three_token_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """A3's queries, keys and values (3,2) each, from embeddings and W_Q, W_K = I, W_V = 2I."""
    x = torch.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]], dtype=DTYPE)
    w_q = torch.tensor([[1.0, 0.0], [2.0, 1.0]], dtype=DTYPE)
    return x @ w_q, x @ torch.eye(2, dtype=DTYPE), x @ (2 * torch.eye(2, dtype=DTYPE))


def three_tokens(rows: TidyRows) -> None:
    """A3 (full scaled dot-product) and A4 (the same with a causal mask)."""
    q, k, v = three_token_inputs()
    tokens, dims = ("1", "2", "3"), ("1", "2")
    add_matrix(rows, "scaled_score", "three_token", q @ k.T / math.sqrt(2), tokens, tokens)
    for example, causal in (("three_token", False), ("three_token_causal", True)):
        out, weights = attend(q, k, v, causal=causal)
        add_matrix(rows, "weight", example, weights, tokens, tokens)
        add_matrix(rows, "output", example, out, tokens, dims)
        rows.add("weight_ratio", weights[1, 0] / weights[1, 1], example=example, row="2")
    _, weights = attend(q, k, v)
    largest = weights.max(dim=-1, keepdim=True).values  # (3,1)
    on_third = weights[:, 2:3]
    rows.add(
        "rows_with_max_on_token",
        (on_third >= largest - 1e-12).sum(),
        example="three_token",
        col="3",
        ties="allowed",
    )
    rows.add(
        "rows_with_max_on_token",
        ((weights < on_third - 1e-12).sum(-1) == 2).sum(),
        example="three_token",
        col="3",
        ties="strict",
    )


def two_heads(rows: TidyRows) -> None:
    """A5: the query for "it" in two one-number heads, each peaking at scaled score 3 on one token;
    then one head asked to peak on both tokens."""
    tokens = ("the", "cat", "chased", "it")
    peak = torch.tensor([[[3.0]], [[3.0]]], dtype=DTYPE)  # (H=2, Nq=1, d=1): scale 1/sqrt(1)
    chased, cat = torch.tensor([0.0, 0.0, 1.0, 0.0]), torch.tensor([0.0, 1.0, 0.0, 0.0])
    marks = torch.stack([chased, cat]).to(DTYPE)[:, :, None]  # (H=2, Nk=4, 1): key = value = mark
    out, weights = attend_heads(peak, marks, marks)
    for head, name in enumerate(("previous_word", "find_noun")):
        example = f"two_heads_{name}"
        add_matrix(rows, "weight", example, weights[head], ("it",), tokens)
        rows.add("output", out[head, 0, 0], example=example, row="it")
    both = (chased + cat).to(DTYPE)[None, :, None]  # (1,4,1): one head, two peaks
    _, weights = attend_heads(peak[:1], both, both)
    add_matrix(rows, "weight", "one_head_two_peaks", weights[0], ("it",), tokens)


def attend_heads(q, k, v) -> tuple[torch.Tensor, torch.Tensor]:
    """q (H,Nq,d), k/v (H,Nk,d) -> out (H,Nq,dv), weights (H,Nq,Nk), all heads in one call."""
    out, weights = reference_attention(q[None], k[None], v[None], return_weights=True)
    return out[0], weights[0]


def river_bank_inputs() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The four-word example: q = (x1 + x2/2, x1/2 + x2), k = (2 x1, x2), v = x; each (4,2)."""
    x = torch.tensor([[0.1, 0.1], [1.0, 0.0], [0.5, 0.5], [0.8, 0.2]], dtype=DTYPE)
    w_q = torch.tensor([[1.0, 0.5], [0.5, 1.0]], dtype=DTYPE)
    w_k = torch.tensor([[2.0, 0.0], [0.0, 1.0]], dtype=DTYPE)
    return x @ w_q, x @ w_k, x


def river_bank(rows: TidyRows) -> None:
    """A6 (scaled), A7 (scores eight times larger, unscaled) and A8 (causal: bank cannot see
    flooded)."""
    q, k, v = river_bank_inputs()
    dims = ("1", "2")
    add_matrix(rows, "score", "river_bank", q @ k.T, WORDS, WORDS)
    add_matrix(rows, "scaled_score", "river_bank", q @ k.T / math.sqrt(2), WORDS, WORDS)
    out, weights = attend(q, k, v)
    add_matrix(rows, "weight", "river_bank", weights, WORDS, WORDS)
    add_matrix(rows, "output", "river_bank", out, WORDS, dims)
    largest_key = int(k.norm(dim=-1).argmax())
    rows.add(
        "rows_with_max_on_largest_key",
        (weights.argmax(dim=-1) == largest_key).sum(),
        example="river_bank",
        col=WORDS[largest_key],
    )

    _, weights_x8 = attend(8 * q, k, v, scale=1.0)
    add_matrix(rows, "score", "river_bank_x8", 8 * q @ k.T, WORDS, WORDS)
    add_matrix(rows, "weight", "river_bank_x8", weights_x8, WORDS, WORDS)

    out_causal, weights_causal = attend(q, k, v, causal=True)
    add_matrix(rows, "weight", "river_bank_causal", weights_causal, WORDS, WORDS)
    add_matrix(rows, "output", "river_bank_causal", out_causal, WORDS, dims)
    bank = WORDS.index("bank")
    rise = weights_causal[bank, : bank + 1] - weights[bank, : bank + 1]  # surviving keys only
    rows.add("min_surviving_weight_rise", rise.min(), example="river_bank_causal", row="bank")


def random_draw(rows: TidyRows) -> None:
    """A9: one NumPy draw, default_rng(42): a query of width d, then three keys; d = 4 first, then
    d = 64 from the same generator. The softmax of the raw and of the 1/sqrt(d)-scaled scores."""
    rng = np.random.default_rng(42)
    keys = ("1", "2", "3")
    for d in (4, 64):
        q = torch.from_numpy(rng.standard_normal(d))[None]  # (1,d) float64
        k = torch.from_numpy(rng.standard_normal((3, d)))  # (3,d)
        v = torch.zeros(3, 1, dtype=DTYPE)
        for scaling, scale in (("unscaled", 1.0), ("scaled", None)):
            _, weights = attend(q, k, v, scale=scale)
            for col, weight in zip(keys, weights[0], strict=True):
                rows.add(
                    "weight", weight, example="random_draw", row=f"d{d}", col=col, scaling=scaling
                )
            rows.add(
                "max_weight", weights.max(), example="random_draw", row=f"d{d}", scaling=scaling
            )


def measure(args: argparse.Namespace | None = None) -> TidyRows:
    rows = TidyRows("worked_examples")
    for example in (soft_lookup, additive_score, three_tokens, two_heads, river_bank, random_draw):
        example(rows)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The worked examples are exact: no options beyond --out (and --seed, unused)."""
