"""Readable attention: materialise the score table, softmax it, average the values."""

from __future__ import annotations

import torch

from .masks import allowed_keys


def reference_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
    return_weights: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """softmax(q k^T * scale) v with q (B,H,Nq,d), k/v (B,H,Nk,d) -> (B,H,Nq,dv).

    A query that may read no key at all (a fully padded row) gets zero weights and a zero output
    instead of NaN. With `return_weights`, also returns the (B,H,Nq,Nk) weights.
    """
    scale = q.shape[-1] ** -0.5 if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale  # (B,H,Nq,Nk)
    mask = allowed_keys(
        q.shape[-2], k.shape[-2], causal=causal, key_padding_mask=key_padding_mask, device=q.device
    )
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    # softmax in at least fp32 (fp16/bf16 scores are widened, fp64 stays fp64)
    weights = torch.softmax(scores.to(torch.promote_types(scores.dtype, torch.float32)), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    weights = weights.to(v.dtype)
    out = torch.matmul(weights, v)  # (B,H,Nq,dv)
    return (out, weights) if return_weights else out
