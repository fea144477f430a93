"""Probe B7: soft attention is differentiable in the query; a hard arg-max lookup is not.

n_queries random queries (width d) each read n_keys random key-value pairs, in float64. The soft
lookup is the reference attention (softmax of the scaled scores, weighted mean of the values); the
hard lookup returns the value of the best-scoring key. For a random upstream gradient g, the loss
L = <output, g>; per lookup:
  grad_norm_mean            mean over queries of ||dL/dq|| (autograd; a lookup with no path from
                            the query to the output gets 0)
  frac_queries_zero_grad    queries whose gradient is exactly zero
  frac_outputs_moved        queries whose output changes when q moves by `step` in a random
                            direction (a piecewise-constant lookup: almost none)
and, for the soft lookup, finite_difference_rel_error: the largest relative difference between
the autograd directional derivative and the central difference (L(q + h u) - L(q - h u)) / 2h.
"""

from __future__ import annotations

import argparse

import torch

from .common import TidyRows, attend, generator

DTYPE = torch.float64


def soft_lookup(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q (Nq,d), k (Nk,d), v (Nk,dv) -> (Nq,dv): scaled dot-product attention."""
    return attend(q, k, v)[0]


def hard_lookup(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """q (Nq,d), k (Nk,d), v (Nk,dv) -> (Nq,dv): the value of each query's best-scoring key."""
    return v[(q @ k.T).argmax(dim=-1)]


LOOKUPS = {"soft": soft_lookup, "hard": hard_lookup}


def query_gradient(lookup, q, k, v, g) -> torch.Tensor:
    """dL/dq for L = <lookup(q), g>, (Nq,d); zeros where the output does not depend on q."""
    q = q.detach().requires_grad_(True)
    loss = (lookup(q, k, v) * g).sum()
    if not loss.requires_grad:  # the graph holds no path from q to the output (arg-max)
        return torch.zeros_like(q)
    (grad,) = torch.autograd.grad(loss, q, allow_unused=True)
    return torch.zeros_like(q) if grad is None else grad


def measure_gradients(n_queries: int, n_keys: int, width: int, step: float, seed: int) -> TidyRows:
    rows = TidyRows("gradients")
    rows.add_params(n_queries=n_queries, n_keys=n_keys, width=width, step=step, seed=seed)
    gen = generator(seed)
    q = torch.randn(n_queries, width, generator=gen, dtype=DTYPE)
    k = torch.randn(n_keys, width, generator=gen, dtype=DTYPE)
    v = torch.randn(n_keys, width, generator=gen, dtype=DTYPE)
    g = torch.randn(n_queries, width, generator=gen, dtype=DTYPE)  # upstream gradient
    u = torch.randn(n_queries, width, generator=gen, dtype=DTYPE)
    u = u / u.norm(dim=-1, keepdim=True)  # one unit direction per query
    for name, lookup in LOOKUPS.items():
        grad = query_gradient(lookup, q, k, v, g)  # (Nq,d)
        norms = grad.norm(dim=-1)
        rows.add("grad_norm_mean", norms.mean(), lookup=name)
        rows.add("frac_queries_zero_grad", (norms == 0).double().mean(), lookup=name)
        with torch.no_grad():
            moved = (lookup(q + step * u, k, v) - lookup(q, k, v)).abs().amax(dim=-1) > 0
        rows.add("frac_outputs_moved", moved.double().mean(), lookup=name)
        if name == "soft":
            with torch.no_grad():
                plus = (lookup(q + step * u, k, v) * g).sum(-1)
                minus = (lookup(q - step * u, k, v) * g).sum(-1)
            numeric = (plus - minus) / (2 * step)  # (Nq,)
            analytic = (grad * u).sum(-1)
            error = (numeric - analytic).abs() / analytic.abs().clamp_min(1e-12)
            rows.add("finite_difference_rel_error", error.max(), lookup=name)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--n-queries", type=int, required=True, help="random queries")
    parser.add_argument("--n-keys", type=int, required=True, help="key-value pairs each reads")
    parser.add_argument("--width", type=int, required=True, help="query and key width d")
    parser.add_argument("--step", type=float, required=True, help="finite-difference step h")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_gradients(args.n_queries, args.n_keys, args.width, args.step, args.seed)
