"""Probe B5: row entropy as a diagnostic, and how a big key attracts weight.

Entropy: the normalised entropy (entropy / log N, 1 = flat) of every row of the four-word example;
and, over random rows with temperatures spread from flat to spiked, the rank correlation between a
row's entropy and how far its output moves from the plain mean of the values (a flat row returns
about the mean, "doing nothing").

"Flat rows do nothing", in numbers: a row's distance from the mean, relative (its output's
distance from the plain mean of the values, in units of the values' own mean distance from that
mean: 0 = the mean, about 1 = as far off as a typical value). Per row of the four-word example,
and over the random rows the mean for the flat ones (normalised entropy above FLAT) and for the
spiked ones (below SPIKED), with how many rows each class holds.

Big key: scale one key by a factor and watch every row. In the four-word example (all entries
positive) the key of "river" is scaled; on random tokens, the key of token 0. Per factor: the
fraction of rows whose weights move, the fraction whose weight on the big key rises, and the
fraction of rows whose query has a positive dot product with that key.
"""

from __future__ import annotations

import argparse
import math

import torch

from .common import TidyRows, attend, float_list, generator, row_entropy
from .worked_examples import WORDS, river_bank_inputs

MOVE_THRESHOLD = 1e-3  # L1 change of a weight row that counts as "moved"
FLAT, SPIKED = 0.99, 0.5  # normalised entropy above which a row is flat, below which spiked


def relative_distance_from_mean(out: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """out (R,dv), values (Nk,dv) -> (R,): |out - mean(values)| / mean_j |values_j - mean|."""
    mean = values.mean(dim=0)
    return (out - mean).norm(dim=-1) / (values - mean).norm(dim=-1).mean()


def rank_correlation(a: torch.Tensor, b: torch.Tensor) -> float:
    """Spearman's rank correlation of two (n,) samples (no ties expected from continuous draws)."""
    ranks = [values.argsort().argsort().double() for values in (a, b)]
    centred = [r - r.mean() for r in ranks]
    return float((centred[0] * centred[1]).sum() / (centred[0].norm() * centred[1].norm()))


def measure_entropy(rows: TidyRows, gen: torch.Generator, n_rows: int, n_keys: int, width: int):
    q, k, v = river_bank_inputs()
    out, weights = attend(q, k, v)
    entropies = row_entropy(weights) / math.log(len(WORDS))
    distances = relative_distance_from_mean(out, v)
    for word, entropy, distance in zip(WORDS, entropies, distances, strict=True):
        rows.add("normalised_entropy", entropy, example="river_bank", row=word)
        rows.add("relative_distance_from_mean", distance, example="river_bank", row=word)

    temperature = torch.exp(torch.empty(n_rows, 1).uniform_(-3, 2, generator=gen))  # (R,1)
    queries = torch.randn(n_rows, width, generator=gen) * temperature  # (R,width)
    keys = torch.randn(n_keys, width, generator=gen)
    values = torch.randn(n_keys, width, generator=gen)
    out, weights = attend(queries, keys, values)  # (R,width), (R,n_keys)
    distance_from_mean = relative_distance_from_mean(out, values)  # (R,)
    rows.add(
        "entropy_vs_output_shift_rank_correlation",
        rank_correlation(row_entropy(weights), distance_from_mean),
        example="random",
    )
    normalised = row_entropy(weights) / math.log(n_keys)  # (R,)
    for kind, rows_of_kind in (("flat", normalised > FLAT), ("spiked", normalised < SPIKED)):
        rows.add("rows_of_kind", rows_of_kind.sum(), example="random", row=kind)
        if rows_of_kind.any():
            rows.add(
                "mean_relative_distance_from_mean",
                distance_from_mean[rows_of_kind].mean(),
                example="random",
                row=kind,
            )


def big_key_rows(rows: TidyRows, example: str, q, k, v, big: int, factors: list[float]) -> None:
    """Scale key `big` of k (Nk,d) by each factor; q (Nq,d) rows' response."""
    _, base = attend(q, k, v)  # (Nq,Nk)
    positive = (q @ k[big] > 0).double().mean()
    for factor in factors:
        scaled = k.clone()
        scaled[big] = factor * k[big]
        _, weights = attend(q, scaled, v)
        moved = (weights - base).abs().sum(-1) > MOVE_THRESHOLD
        rises = weights[:, big] > base[:, big]
        settings = {"example": example, "factor": factor}
        rows.add("frac_rows_moved", moved.double().mean(), **settings)
        rows.add("frac_rows_big_key_weight_rises", rises.double().mean(), **settings)
        rows.add("mean_big_key_weight", weights[:, big].mean(), **settings)
    rows.add("frac_rows_positive_dot_with_big_key", positive, example=example)


def measure_diagnostics(
    n_rows: int, n_keys: int, width: int, factors: list[float], seed: int
) -> TidyRows:
    rows = TidyRows("diagnostics")
    rows.add_params(n_rows=n_rows, n_keys=n_keys, width=width, seed=seed)
    measure_entropy(rows, generator(seed, 0), n_rows, n_keys, width)
    q, k, v = river_bank_inputs()
    big_key_rows(rows, "river_bank", q, k, v, WORDS.index("river"), factors)
    gen = generator(seed, 1)
    x = torch.randn(n_keys, width, generator=gen, dtype=torch.float64)
    w_q, w_k = (torch.randn(width, width, generator=gen, dtype=torch.float64) for _ in range(2))
    big_key_rows(rows, "random", x @ w_q * width**-0.5, x @ w_k * width**-0.5, x, 0, factors)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--n-rows", type=int, required=True, help="random rows for the entropy test"
    )
    parser.add_argument("--n-keys", type=int, required=True, help="keys (tokens) per random row")
    parser.add_argument("--width", type=int, required=True, help="random vector width")
    parser.add_argument(
        "--factors", type=float_list, required=True, help="big-key factors, e.g. 2,4"
    )


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_diagnostics(args.n_rows, args.n_keys, args.width, args.factors, args.seed)
