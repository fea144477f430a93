"""attention(): argument checks and the choice of backend (the one entry every model uses).

`attention(q, k, v, *, causal=False, scale=None, key_padding_mask=None, backend="auto")`
with q (B,H,Nq,d) and k/v (B,H,Nk,d). `scale=None` means 1/sqrt(d); `scale=1.0` is unscaled.
Causal masking with Nq != Nk is aligned to the end (query i sits at key position Nk - Nq + i);
`key_padding_mask` is (B,Nk) bool, True = padding; a query that may read no key gets zeros.
Under `torch.autocast`, q, k and v are first cast to the autocast dtype, as torch's own matrix
products are (a GRU's fp32 or fp16 outputs meet a Linear's bf16 query).

Backends, all giving the same result:
- "reference": materialised scores, readable (`reference_attention` also returns the weights);
- "torch": F.scaled_dot_product_attention (flash/memory-efficient kernels where available);
- "triton": our fused kernels (`triton/flash.py`), on CUDA tensors, or on CPU tensors when
  TRITON_INTERPRET=1 is set before the first Triton call (the interpreter: exact but slow).
  fp16/bf16/fp32, head dims up to 256. With at most `DECODE_MAX_QUERIES` (16) queries and no
  gradient needed -- one decoding step against a KV cache, e.g.
  `attention(q_new, k_cache, v_cache, causal=True, backend="triton")` under torch.no_grad() --
  it runs the split-K decode kernel (`triton/decode.py`); otherwise the FlashAttention-2 style kernel
  with its own backward pass. The scale must be positive (the kernels fold it into the row
  maximum).
- "auto": "triton" for CUDA tensors the Triton kernels support, "torch" otherwise (CPU, float64,
  a scale <= 0).
"""

from __future__ import annotations

import torch

from .reference import reference_attention
from .torch_sdpa import torch_attention

BACKENDS = ("auto", "reference", "torch", "triton")
TRITON_DTYPES = (torch.float16, torch.bfloat16, torch.float32)
TRITON_MAX_HEAD_DIM = 256
AUTOCAST_FROM = (torch.float16, torch.bfloat16, torch.float32)  # what autocast recasts (not fp64)


def autocast_inputs(*tensors: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """The tensors in the autocast dtype of their device when autocast is on there, else as given."""
    device = tensors[0].device.type
    if not torch.is_autocast_enabled(device):
        return tensors
    dtype = torch.get_autocast_dtype(device)
    return tuple(t.to(dtype) if t.dtype in AUTOCAST_FROM else t for t in tensors)


def check_inputs(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, key_padding_mask: torch.Tensor | None
) -> None:
    """Raise ValueError naming the offending shape, dtype or device."""
    if q.dim() != 4 or k.dim() != 4 or v.dim() != 4:
        raise ValueError(
            f"attention wants q (B,H,Nq,d), k/v (B,H,Nk,d); got q {tuple(q.shape)}, "
            f"k {tuple(k.shape)}, v {tuple(v.shape)}"
        )
    if q.shape[:2] != k.shape[:2] or k.shape[:3] != v.shape[:3] or q.shape[3] != k.shape[3]:
        raise ValueError(
            f"attention shapes disagree: q {tuple(q.shape)}, k {tuple(k.shape)}, v {tuple(v.shape)}"
            " (q, k, v share B and H; k and v share Nk; q and k share d)"
        )
    if not q.dtype == k.dtype == v.dtype or not q.device == k.device == v.device:
        raise ValueError(
            f"q, k, v differ in dtype or device: {q.dtype}/{q.device}, {k.dtype}/{k.device}, "
            f"{v.dtype}/{v.device}"
        )
    if key_padding_mask is not None and (
        key_padding_mask.shape != (k.shape[0], k.shape[2]) or key_padding_mask.dtype != torch.bool
    ):
        raise ValueError(
            f"key_padding_mask must be bool (B, Nk) = {(k.shape[0], k.shape[2])}, got "
            f"{key_padding_mask.dtype} {tuple(key_padding_mask.shape)}"
        )


def triton_supports(q: torch.Tensor, v: torch.Tensor) -> bool:
    return q.dtype in TRITON_DTYPES and max(q.shape[-1], v.shape[-1]) <= TRITON_MAX_HEAD_DIM


def triton_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    """Route to the decode kernel (few queries, no gradient) or the fused kernel."""
    # imported here, not at the top: Triton picks the CPU interpreter or the GPU compiler when the
    # kernels are defined, so TRITON_INTERPRET must be set before this first import
    from .triton.decode import DECODE_MAX_QUERIES, decode_attention
    from .triton.flash import flash_attention
    from .triton.tiles import INTERPRETING

    if not (q.is_cuda or INTERPRETING):
        raise ValueError(
            f"backend 'triton' needs CUDA tensors, got {q.device}; on CPU set TRITON_INTERPRET=1 "
            "before the first Triton call (slow), or use backend 'torch' or 'auto'"
        )
    if not triton_supports(q, v):
        raise ValueError(
            f"backend 'triton' supports {TRITON_DTYPES} and head dims <= {TRITON_MAX_HEAD_DIM}, "
            f"got {q.dtype} with d={q.shape[-1]}, dv={v.shape[-1]}"
        )
    needs_grad = torch.is_grad_enabled() and any(t.requires_grad for t in (q, k, v))
    kernel = (
        decode_attention if q.shape[2] <= DECODE_MAX_QUERIES and not needs_grad else flash_attention
    )
    return kernel(q, k, v, causal=causal, scale=scale, key_padding_mask=key_padding_mask)


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
    """softmax(q k^T * scale) v, (B,H,Nq,d) x (B,H,Nk,d) -> (B,H,Nq,dv), by the chosen backend."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown attention backend {backend!r}; choose one of {BACKENDS}")
    q, k, v = autocast_inputs(q, k, v)
    check_inputs(q, k, v, key_padding_mask)
    if backend == "auto":
        positive = scale is None or scale > 0
        backend = "triton" if q.is_cuda and triton_supports(q, v) and positive else "torch"
    kernel = {
        "reference": reference_attention,
        "torch": torch_attention,
        "triton": triton_attention,
    }
    return kernel[backend](q, k, v, causal=causal, scale=scale, key_padding_mask=key_padding_mask)


__all__ = ["BACKENDS", "attention", "reference_attention", "torch_attention", "triton_attention"]
