"""The library kernel: torch.nn.functional.scaled_dot_product_attention (flash where available)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from .masks import allowed_keys


def torch_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Same contract as `reference_attention`; fully padded rows give zeros, not NaN."""
    n_queries, n_keys = q.shape[-2], k.shape[-2]
    if key_padding_mask is None and (not causal or n_queries == n_keys):
        return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    mask = allowed_keys(
        n_queries, n_keys, causal=causal, key_padding_mask=key_padding_mask, device=q.device
    )
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, scale=scale)
    return out.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
