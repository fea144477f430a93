"""Probe B3: attention is permutation-equivariant; a causal mask lets order leak in.

Random token vectors x (n_tokens, width) and random projections W_Q, W_K, W_V; self-attention
through the default attention entry. For n_permutations random shuffles P, the largest
|attn(P x) - P attn(x)|, without a mask and with a causal mask, absolute and relative to the
largest output. Also the four-word example read in reverse order ("flooded bank river the"): the
largest difference between bank's weights and the reversed reading of them.

The causal mask, directly: change one later token and measure how far every earlier output moves
through a small stack of attention layers (none under the mask, exactly: a masked key gets weight
0, not a small weight), and how far the outputs from that token on move.
"""

from __future__ import annotations

import argparse

import torch

from softlookup.kernels import attention

from .common import TidyRows, attend, generator
from .worked_examples import river_bank_inputs

MASKINGS = {"none": False, "causal": True}
FUTURE_LAYERS = 3  # depth of the stack in which a later token is changed


def random_projections(gen: torch.Generator, width: int, count: int) -> list[torch.Tensor]:
    """`count` (width, width) matrices with N(0, 1/width) entries (norm-preserving on average)."""
    return [
        torch.randn(width, width, generator=gen, dtype=torch.float64) * width**-0.5
        for _ in range(count)
    ]


def self_attention(x: torch.Tensor, w_q, w_k, w_v, *, causal: bool = False) -> torch.Tensor:
    """One attention-only layer on x (N, width) -> (N, width), one head, default backend."""
    q, k, v = (x @ w_q, x @ w_k, x @ w_v)  # each (N, width)
    return attention(q[None, None], k[None, None], v[None, None], causal=causal)[0, 0]


def measure_order(n_tokens: int, width: int, n_permutations: int, seed: int) -> TidyRows:
    rows = TidyRows("order")
    rows.add_params(n_tokens=n_tokens, width=width, n_permutations=n_permutations, seed=seed)
    gen = generator(seed)
    x = torch.randn(n_tokens, width, generator=gen, dtype=torch.float64)
    projections = random_projections(gen, width, 3)
    permutations = [torch.randperm(n_tokens, generator=gen) for _ in range(n_permutations)]
    for masking, causal in MASKINGS.items():
        out = self_attention(x, *projections, causal=causal)  # (N, width)
        error = max(
            float((self_attention(x[perm], *projections, causal=causal) - out[perm]).abs().max())
            for perm in permutations
        )
        rows.add("max_abs_equivariance_error", error, masking=masking)
        rows.add("rel_equivariance_error", error / float(out.abs().max()), masking=masking)

    measure_future_change(rows, x, gen)

    q, k, v = river_bank_inputs()
    reverse = torch.arange(q.shape[0] - 1, -1, -1)
    _, weights = attend(q, k, v)
    _, weights_reversed = attend(q[reverse], k[reverse], v[reverse])
    rows.add(
        "max_abs_weight_difference",
        (weights_reversed - weights[reverse][:, reverse]).abs().max(),
        example="river_bank_reversed",
    )
    return rows


def measure_future_change(rows: TidyRows, x: torch.Tensor, gen: torch.Generator) -> None:
    """Replace one later token (position n/2) by a fresh random vector and pass both sequences
    through a stack of FUTURE_LAYERS self-attention layers with skip connections: the largest
    change of the outputs before that position, and at or after it, with and without the causal
    mask."""
    n_tokens, width = x.shape
    changed = n_tokens // 2
    x_changed = x.clone()
    x_changed[changed] = torch.randn(width, generator=gen, dtype=x.dtype)
    layers = [random_projections(gen, width, 3) for _ in range(FUTURE_LAYERS)]
    for masking, causal in MASKINGS.items():
        outputs = []
        for tokens in (x, x_changed):
            for projections in layers:
                tokens = tokens + self_attention(tokens, *projections, causal=causal)
            outputs.append(tokens)
        change = (outputs[1] - outputs[0]).abs().amax(dim=-1)  # (N,)
        rows.add(
            "max_abs_output_change",
            change[:changed].max(),
            masking=masking,
            positions="before_changed_token",
        )
        rows.add(
            "max_abs_output_change",
            change[changed:].max(),
            masking=masking,
            positions="changed_and_after",
        )
    rows.add("param_changed_position", changed + 1)
    rows.add("param_future_layers", FUTURE_LAYERS)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-tokens", type=int, required=True, help="sequence length")
    parser.add_argument("--width", type=int, required=True, help="token vector width")
    parser.add_argument("--n-permutations", type=int, required=True, help="shuffles tried")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_order(args.n_tokens, args.width, args.n_permutations, args.seed)
