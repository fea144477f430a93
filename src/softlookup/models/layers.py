"""Building blocks both architectures share: token embeddings and the one attention call."""

from __future__ import annotations

import torch
from torch import nn

from softlookup.kernels import attention, reference_attention


class ScaledEmbedding(nn.Embedding):
    """Token embedding initialised N(0, 1/dim) and read out times sqrt(dim).

    Entries of the looked-up vectors then have unit variance, while a tied output projection
    (logits = h @ E^T) starts with logits of unit scale.
    """

    def __init__(self, vocab_size: int, dim: int):
        super().__init__(vocab_size, dim)
        nn.init.normal_(self.weight, std=dim**-0.5)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        return super().forward(tokens) * self.embedding_dim**0.5  # (..., dim)


def attend(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    scale: float | None,
    key_padding_mask: torch.Tensor | None,
    backend: str,
    causal: bool = False,
    need_weights: bool = False,
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """`softlookup.kernels.attention` on q (B,H,Nq,d), k (B,H,Nk,d), v (B,H,Nk,dv) -> (B,H,Nq,dv).

    Returns (out, None) from the configured (fast) backend, or, when `need_weights`, (out, weights
    (B,H,Nq,Nk)) from the reference backend: only a pass that asks for weights pays for them.
    """
    options = {"causal": causal, "scale": scale, "key_padding_mask": key_padding_mask}
    if need_weights:
        return reference_attention(q, k, v, return_weights=True, **options)
    return attention(q, k, v, backend=backend, **options), None
