"""Probe B2: softmax saturation and the gradient through it, as d grows, scaled and unscaled.

For every width d, n_rows random queries each score n_keys random keys (N(0,1) entries) through
the reference attention, which returns the weights. Per (d, scaling): the fraction of rows whose
largest weight exceeds the threshold, the mean largest weight, the mean row entropy, and the mean
Frobenius norm of the softmax Jacobian d(weights)/d(scores) = diag(p) - p p^T, which is what
scales every gradient that flows back through the softmax (also its median, its mean over the
saturated rows only, and the norm of an actual autograd gradient with respect to the scores for a
random upstream gradient). Also, per scaling, the range of mean
entropy across d (small when sharpness does not depend on d).

The essay's gradient sentence speaks of the rows "when one weight is almost exactly 1", so per d
`saturated_score_gradient_ratio` compares those rows alone: the mean autograd gradient norm of
the unscaled rows whose largest weight exceeds the threshold, over the mean of every scaled row
at the same d (what training receives once the scores are scaled). A mean over all rows would
mix in the unsaturated ones, and so measure the share of saturated rows, which depends on the
number of keys, as much as the gradient of a saturated row.
"""

from __future__ import annotations

import argparse

import torch

from softlookup.kernels import reference_attention

from .common import TidyRows, generator, int_list, row_entropy
from .spread import SCALINGS, scale_for


def softmax_jacobian_norm(weights: torch.Tensor) -> torch.Tensor:
    """||diag(p) - p p^T||_F for each row p of (..., N) weights -> (...).

    Expanding the square: sum p_i^2 - 2 sum p_i^3 + (sum p_i^2)^2.
    """
    p2 = (weights**2).sum(-1)
    p3 = (weights**3).sum(-1)
    return (p2 - 2 * p3 + p2**2).clamp_min(0).sqrt()


def score_gradient_norm(weights: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """||dL/dscores|| per row for L = <softmax(scores), g>, g a random N(0,1) upstream gradient,
    by autograd through the softmax -> (n_rows,)."""
    scores = torch.log(weights.double().clamp_min(1e-300)).requires_grad_(True)  # same softmax
    g = torch.randn(weights.shape, generator=gen, dtype=torch.float64)
    (grad,) = torch.autograd.grad((torch.softmax(scores, dim=-1) * g).sum(), scores)
    return grad.norm(dim=-1)


def measure_saturation(
    dims: list[int], n_rows: int, n_keys: int, threshold: float, seed: int
) -> TidyRows:
    rows = TidyRows("saturation")
    rows.add_params(n_rows=n_rows, n_keys=n_keys, threshold=threshold, seed=seed)
    mean_entropy: dict[str, list[float]] = {scaling: [] for scaling in SCALINGS}
    for d in dims:
        gen = generator(seed, d)
        q = torch.randn(n_rows, 1, 1, d, generator=gen)  # (B=n_rows, H=1, Nq=1, d)
        k = torch.randn(n_rows, 1, n_keys, d, generator=gen)  # (B, 1, Nk, d)
        v = torch.zeros(n_rows, 1, n_keys, 1)
        gradients, saturated_rows = {}, {}
        for scaling in SCALINGS:
            _, weights = reference_attention(
                q, k, v, scale=scale_for(scaling, d), return_weights=True
            )
            weights = weights[:, 0, 0, :]  # (n_rows, n_keys)
            largest = weights.max(dim=-1).values
            entropy = row_entropy(weights).mean()
            mean_entropy[scaling].append(float(entropy))
            settings = {"d": d, "scaling": scaling}
            rows.add("frac_rows_saturated", (largest > threshold).double().mean(), **settings)
            rows.add("mean_max_weight", largest.mean(), **settings)
            rows.add("mean_entropy_nats", entropy, **settings)
            jacobian = softmax_jacobian_norm(weights)  # (n_rows,)
            rows.add("mean_softmax_jacobian_norm", jacobian.mean(), **settings)
            rows.add("median_softmax_jacobian_norm", jacobian.median(), **settings)
            saturated = largest > threshold
            if saturated.any():
                rows.add(
                    "mean_softmax_jacobian_norm_saturated_rows",
                    jacobian[saturated].mean(),
                    **settings,
                )
            gradients[scaling] = score_gradient_norm(weights, gen)  # (n_rows,)
            saturated_rows[scaling] = saturated
            rows.add("mean_score_gradient_norm", gradients[scaling].mean(), **settings)
        if saturated_rows["unscaled"].any():
            saturated_gradient = gradients["unscaled"][saturated_rows["unscaled"]].mean()
            rows.add(
                "saturated_score_gradient_ratio",
                saturated_gradient / gradients["scaled"].mean(),
                d=d,
            )
    for scaling, entropies in mean_entropy.items():
        rows.add("entropy_range_across_d", max(entropies) - min(entropies), scaling=scaling)
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dims", type=int_list, required=True, help="widths d, e.g. 4,16,64")
    parser.add_argument("--n-rows", type=int, required=True, help="random queries per d")
    parser.add_argument("--n-keys", type=int, required=True, help="keys each query scores")
    parser.add_argument("--threshold", type=float, required=True, help="saturated: max weight >")


def measure(args: argparse.Namespace) -> TidyRows:
    return measure_saturation(args.dims, args.n_rows, args.n_keys, args.threshold, args.seed)
