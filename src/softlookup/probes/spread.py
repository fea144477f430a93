"""Probe B1: the spread of the score q.k of two random unit-variance vectors grows like sqrt(d).

For every width d, n_pairs independent pairs (q, k) with N(0,1) entries; the score is computed as
the reference kernel computes it (q k^T times the scale), unscaled (scale 1) and scaled (scale
1/sqrt(d)). Rows: quantity std_score, d, scaling, value; plus the parameters as param_* rows.
"""

from __future__ import annotations

import argparse

import torch

from .common import TidyRows, generator, int_list

SCALINGS = ("unscaled", "scaled")


def scale_for(scaling: str, d: int) -> float:
    """The multiplier of q.k: 1 unscaled, 1/sqrt(d) scaled (the Transformer's choice)."""
    return 1.0 if scaling == "unscaled" else d**-0.5


def measure_spread(dims: list[int], n_pairs: int, seed: int) -> TidyRows:
    rows = TidyRows("spread")
    rows.add_params(n_pairs=n_pairs, seed=seed)
    for d in dims:
        gen = generator(seed, d)
        q = torch.randn(n_pairs, 1, d, generator=gen, dtype=torch.float64)
        k = torch.randn(n_pairs, 1, d, generator=gen, dtype=torch.float64)
        dots = torch.matmul(q, k.transpose(-2, -1)).flatten()  # (n_pairs,) one score per pair
        for scaling in SCALINGS:
            rows.add("std_score", (dots * scale_for(scaling, d)).std(), d=d, scaling=scaling)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dims", type=int_list, required=True, help="widths d, e.g. 4,16,64")
    parser.add_argument("--n-pairs", type=int, required=True, help="random (q, k) pairs per d")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_spread(args.dims, args.n_pairs, args.seed)
