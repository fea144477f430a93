"""Probe C1-C3: parameters of an attention layer and its feed-forward neighbour, score-table size,
and the same width split into many heads or kept in one.

C1: parameters of torch.nn.MultiheadAttention and of the project's MultiHeadAttention for every
width and head count, with and without biases; the feed-forward block of width 4 d next to it
(torch.nn.TransformerEncoderLayer's linear1 + linear2, and the project's FeedForward) and the
ratio of the two.
C2: cells and bytes of one head's score table for every length n, read off the weights the
reference attention materialises in bfloat16 (2 bytes a cell) up to n = materialise_max, and
counted as n * n beyond (a 100,000-token table is 20 GB).
C3: one width as `split_heads` heads of width/split_heads, or one head of the whole width, with the
same projection weights: parameters, multiply-adds of the two matmuls, score cells, and how much
the outputs and the heads' weight rows differ.
"""

from __future__ import annotations

import argparse
import itertools

import torch
from torch import nn

from softlookup.kernels import reference_attention
from softlookup.models import MultiHeadAttention, count_parameters
from softlookup.models.transformer import FeedForward

from .common import TidyRows, generator, int_list

SCORE_DTYPE = torch.bfloat16  # 2 bytes a cell, the essays' assumption


def count_attention(rows: TidyRows, widths: list[int], heads_list: list[int]) -> None:
    for width, heads, bias in itertools.product(widths, heads_list, (True, False)):
        layers = {
            "torch_mha": nn.MultiheadAttention(width, heads, bias=bias),
            "softlookup_mha": MultiHeadAttention(width, heads, bias=bias),
        }
        for implementation, layer in layers.items():
            rows.add(
                "attention_params",
                count_parameters(layer),
                implementation=implementation,
                width=width,
                heads=heads,
                bias=bias,
            )


def count_feed_forward(rows: TidyRows, widths: list[int], heads: int) -> None:
    for width in widths:
        block = nn.TransformerEncoderLayer(width, heads, dim_feedforward=4 * width)
        pairs = {
            "torch_encoder_layer": (
                count_parameters(block.linear1) + count_parameters(block.linear2),
                count_parameters(block.self_attn),
            ),
            "softlookup": (
                count_parameters(FeedForward(width, 4 * width)),
                count_parameters(MultiHeadAttention(width, heads)),
            ),
        }
        for implementation, (ffn, attn) in pairs.items():
            settings = {"implementation": implementation, "width": width}
            rows.add("ffn_params", ffn, **settings)
            rows.add("ffn_to_attention_ratio", ffn / attn, **settings)


def score_table(rows: TidyRows, lengths: list[int], materialise_max: int) -> None:
    for n in lengths:
        if n <= materialise_max:
            q = torch.zeros(1, 1, n, 1, dtype=SCORE_DTYPE)  # (B,H,N,d=1): only the table matters
            _, weights = reference_attention(q, q, q, return_weights=True)  # (1,1,N,N)
            cells, cell_bytes, method = weights.numel(), weights.element_size(), "materialised"
        else:
            cells = n * n
            cell_bytes, method = torch.finfo(SCORE_DTYPE).bits // 8, "counted"
        rows.add("score_cells", cells, n=n, method=method)
        rows.add("score_table_bytes", cells * cell_bytes, n=n, method=method)


def head_split(rows: TidyRows, gen: torch.Generator, width: int, heads: int, n: int) -> None:
    """The same weights read as `heads` heads or as one head of the whole width."""
    split, whole = MultiHeadAttention(width, heads), MultiHeadAttention(width, 1)
    whole.load_state_dict(split.state_dict())  # identical shapes: heads * d_k = width
    x = torch.randn(1, n, width, generator=gen)  # (B=1, N, width)
    with torch.no_grad():
        out_split, weights_split = split(x, x, need_weights=True)  # (1,N,width), (1,heads,N,N)
        out_whole, weights_whole = whole(x, x, need_weights=True)  # (1,N,width), (1,1,N,N)
    layouts = (("split", heads, split, weights_split), ("whole", 1, whole, weights_whole))
    for layout, count, layer, weights in layouts:
        settings = {"layout": layout, "width": width, "heads": count, "d_k": width // count, "n": n}
        rows.add("attention_params", count_parameters(layer), **settings)
        # QK^T and weights @ V: count heads x (N x N x d_k) multiply-adds each, 2 flops apiece
        rows.add("score_matmul_flops", 2 * 2 * count * n * n * (width // count), **settings)
        rows.add("score_cells", weights.numel(), **settings)
    difference = (out_split - out_whole).norm() / out_whole.norm()
    rows.add("rel_output_difference", difference, layout="split_vs_whole", width=width, n=n)
    pairs = itertools.combinations(range(heads), 2)
    variation = torch.stack(
        [0.5 * (weights_split[0, a] - weights_split[0, b]).abs().sum(-1).mean() for a, b in pairs]
    )
    rows.add("mean_head_pair_total_variation", variation.mean(), layout="split", width=width, n=n)


def measure_counting(
    widths: list[int],
    heads_list: list[int],
    lengths: list[int],
    materialise_max: int,
    split_width: int,
    split_heads: int,
    split_tokens: int,
    seed: int,
) -> TidyRows:
    rows = TidyRows("counting")
    rows.add_params(materialise_max=materialise_max, split_tokens=split_tokens, seed=seed)
    torch.manual_seed(seed)  # the layers' own initialisation
    count_attention(rows, widths, heads_list)
    count_feed_forward(rows, widths, max(heads_list))
    score_table(rows, lengths, materialise_max)
    head_split(rows, generator(seed), split_width, split_heads, split_tokens)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--widths", type=int_list, required=True, help="d_model values")
    parser.add_argument("--heads", type=int_list, required=True, help="head counts")
    parser.add_argument("--lengths", type=int_list, required=True, help="sequence lengths n")
    parser.add_argument(
        "--materialise-max",
        type=int,
        required=True,
        help="largest n whose score table is actually built",
    )
    parser.add_argument("--split-width", type=int, required=True, help="C3 width")
    parser.add_argument("--split-heads", type=int, required=True, help="C3 head count")
    parser.add_argument("--split-tokens", type=int, required=True, help="C3 sequence length")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_counting(
        args.widths,
        args.heads,
        args.lengths,
        args.materialise_max,
        args.split_width,
        args.split_heads,
        args.split_tokens,
        args.seed,
    )
