"""The one attention entry every model and probe uses.

`attention(q, k, v, *, causal=False, scale=None, key_padding_mask=None, backend="auto")`
with q (B,H,Nq,d) and k/v (B,H,Nk,d). `scale=None` means 1/sqrt(d); `scale=1.0` is unscaled.
Backends: "reference" (materialised scores, readable), "torch" (F.scaled_dot_product_attention),
"triton" (our fused kernel; CUDA, or CPU under TRITON_INTERPRET=1). "auto" picks Triton on CUDA
and torch on CPU.
"""

from __future__ import annotations

import torch

from .reference import reference_attention
from .torch_sdpa import torch_attention

BACKENDS = ("auto", "reference", "torch", "triton")


def attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
    backend: str = "auto",
) -> torch.Tensor:
    if backend not in BACKENDS:
        raise ValueError(f"unknown attention backend {backend!r}; choose one of {BACKENDS}")
    if backend == "auto":
        backend = "torch"
    if backend == "reference":
        return reference_attention(
            q, k, v, causal=causal, scale=scale, key_padding_mask=key_padding_mask
        )
    if backend == "torch":
        return torch_attention(q, k, v, causal=causal, scale=scale, key_padding_mask=key_padding_mask)
    raise NotImplementedError("the Triton backend lands with the kernel issue")


__all__ = ["attention", "reference_attention", "torch_attention", "BACKENDS"]
