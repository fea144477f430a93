"""Which keys each query may read: causal (aligned to the end) and key padding, as one bool mask."""

from __future__ import annotations

import torch


def allowed_keys(
    n_queries: int,
    n_keys: int,
    *,
    causal: bool,
    key_padding_mask: torch.Tensor | None,
    device: torch.device,
) -> torch.Tensor | None:
    """Bool mask, True where a query may attend a key; None when every key is allowed.

    Shape (B or 1, 1, Nq, Nk). Causal masking is aligned to the end of the keys, so query i (of Nq)
    sits at key position Nk - Nq + i: with a KV cache, the new queries see the whole cache.
    `key_padding_mask` is (B, Nk), True where the key is padding (torch.nn.MultiheadAttention's
    convention).
    """
    mask = None
    if causal:
        query_pos = torch.arange(n_queries, device=device)[:, None] + (n_keys - n_queries)
        key_pos = torch.arange(n_keys, device=device)[None, :]
        mask = (key_pos <= query_pos)[None, None]  # (1, 1, Nq, Nk)
    if key_padding_mask is not None:
        keep = ~key_padding_mask.to(device=device, dtype=torch.bool)[:, None, None, :]  # (B,1,1,Nk)
        mask = keep if mask is None else mask & keep
    return mask
