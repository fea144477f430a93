"""Probe B4: attention outputs are weighted averages, and what stacking them does.

Hull: random queries, keys and values through the reference attention; the smallest weight, the
largest |row sum - 1|, and the fraction of output coordinates inside the per-coordinate range of
the values (an independent, necessary condition for lying in their convex hull).

Depth: the same random tokens (n_tokens, width) through `depth` layers of four kinds, fresh random
projections per layer: attention only; attention followed by a ReLU layer (a non-linearity, no
skip); attention with a skip connection (x + attn(x)); a plain linear layer. After every layer, the
token-uniformity residual ||X - 1 mean(X)||_F / ||X||_F (0 when every token is the same vector) and
the effective rank exp(entropy of the normalised singular values).

Composition: a stack of linear layers equals one linear map, the product of their matrices (what
"stacked linear layers collapse" means). The attention-only stack's collapse is a different one:
rank collapse towards one token vector (Dong, Cordonnier and Loukas 2021).

Linearity: is one attention layer a linear function of its input? Relative errors of
superposition f(x + y) = f(x) + f(y) and homogeneity f(2x) = 2 f(x); and of superposition in the
values alone, with the weights held fixed.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import torch

from softlookup.kernels import attention, reference_attention

from .common import TidyRows, generator, row_entropy
from .order import random_projections, self_attention

STACKS = ("attention", "attention_relu", "attention_residual", "linear")


def token_uniformity_residual(x: torch.Tensor) -> float:
    """||x - mean over tokens||_F / ||x||_F for x (N, width)."""
    return float((x - x.mean(dim=0, keepdim=True)).norm() / x.norm())


def effective_rank(x: torch.Tensor) -> float:
    """exp of the entropy of the singular values of x (N, width), normalised to sum to 1."""
    singular = torch.linalg.svdvals(x)
    return float(torch.exp(row_entropy(singular / singular.sum())))


def make_layer(
    kind: str, gen: torch.Generator, width: int
) -> Callable[[torch.Tensor], torch.Tensor]:
    """One layer of a stack: (N, width) -> (N, width), with its own random weights."""
    if kind == "linear":
        (w,) = random_projections(gen, width, 1)
        return lambda x: x @ w
    w_q, w_k, w_v, w_mix = random_projections(gen, width, 4)
    if kind == "attention":
        return lambda x: self_attention(x, w_q, w_k, w_v)
    if kind == "attention_relu":
        # He-scaled so the ReLU keeps the activations' size on average
        return lambda x: torch.relu(self_attention(x, w_q, w_k, w_v) @ (w_mix * 2**0.5))
    if kind == "attention_residual":
        return lambda x: x + self_attention(x, w_q, w_k, w_v)
    raise ValueError(f"unknown stack kind {kind!r}; choose one of {STACKS}")


def measure_hull(rows: TidyRows, gen: torch.Generator, n_tokens: int, width: int) -> None:
    q = 3 * torch.randn(1, 1, n_tokens, width, generator=gen)  # wide scores: flat and spiked rows
    k = torch.randn(1, 1, n_tokens, width, generator=gen)
    v = torch.randn(1, 1, n_tokens, width, generator=gen)
    out, weights = reference_attention(q, k, v, return_weights=True)  # (1,1,N,width), (1,1,N,N)
    low, high = v.amin(dim=-2, keepdim=True), v.amax(dim=-2, keepdim=True)  # (1,1,1,width)
    tolerance = 1e-6
    inside = (out >= low - tolerance) & (out <= high + tolerance)
    rows.add("min_weight", weights.min(), check="hull")
    rows.add("max_row_sum_error", (weights.sum(-1) - 1).abs().max(), check="hull")
    rows.add("frac_outputs_inside_value_range", inside.double().mean(), check="hull")


def measure_depth(rows: TidyRows, seed: int, n_tokens: int, width: int, depth: int) -> None:
    x0 = torch.randn(n_tokens, width, generator=generator(seed, 1), dtype=torch.float64)
    for stack_index, kind in enumerate(STACKS):
        gen = generator(seed, 2, stack_index)
        x = x0
        for layer in range(depth + 1):
            if layer > 0:
                x = make_layer(kind, gen, width)(x)
            rows.add(
                "token_uniformity_residual", token_uniformity_residual(x), stack=kind, depth=layer
            )
            rows.add("effective_rank", effective_rank(x), stack=kind, depth=layer)


def measure_composition(rows: TidyRows, seed: int, n_tokens: int, width: int, depth: int) -> None:
    """Stacked linear layers are one linear map: x W1 W2 ... Wn against x (W1 W2 ... Wn), the
    product formed first. The relative difference is rounding only (float64)."""
    x = torch.randn(n_tokens, width, generator=generator(seed, 4), dtype=torch.float64)
    weights = random_projections(generator(seed, 5), width, depth)
    stacked, product = x, torch.eye(width, dtype=torch.float64)
    for w in weights:
        stacked, product = stacked @ w, product @ w
    rows.add("composition_error", relative_error(stacked, x @ product), stack="linear", depth=depth)


def relative_error(actual: torch.Tensor, expected: torch.Tensor) -> float:
    return float((actual - expected).norm() / expected.norm())


def measure_linearity(rows: TidyRows, gen: torch.Generator, n_tokens: int, width: int) -> None:
    x, y = (torch.randn(n_tokens, width, generator=gen, dtype=torch.float64) for _ in range(2))
    projections = random_projections(gen, width, 3)

    def layer(tokens: torch.Tensor) -> torch.Tensor:
        return self_attention(tokens, *projections)

    rows.add("superposition_error", relative_error(layer(x) + layer(y), layer(x + y)), path="layer")
    rows.add("homogeneity_error", relative_error(2 * layer(x), layer(2 * x)), path="layer")
    q, k = ((x @ w)[None, None] for w in projections[:2])
    v1, v2 = x[None, None], y[None, None]  # (1,1,N,width): the values alone change
    summed = attention(q, k, v1) + attention(q, k, v2)
    rows.add(
        "superposition_error",
        relative_error(summed, attention(q, k, v1 + v2)),
        path="values_with_fixed_weights",
    )


def measure_averaging(n_tokens: int, width: int, depth: int, seed: int) -> TidyRows:
    rows = TidyRows("averaging")
    rows.add_params(n_tokens=n_tokens, width=width, depth=depth, seed=seed)
    measure_hull(rows, generator(seed, 0), n_tokens, width)
    measure_depth(rows, seed, n_tokens, width, depth)
    measure_composition(rows, seed, n_tokens, width, depth)
    measure_linearity(rows, generator(seed, 3), n_tokens, width)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-tokens", type=int, required=True, help="sequence length")
    parser.add_argument("--width", type=int, required=True, help="token vector width")
    parser.add_argument("--depth", type=int, required=True, help="layers in each stack")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_averaging(args.n_tokens, args.width, args.depth, args.seed)
