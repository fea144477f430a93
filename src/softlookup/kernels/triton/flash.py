"""Our fused attention: launches of the Triton kernels and the autograd Function around them.

`flash_attention(q, k, v, *, causal, scale, key_padding_mask)` has the contract of
`reference_attention`: q (B,H,Nq,d), k/v (B,H,Nk,d), fp32/fp16/bf16 (fp32 accumulation; fp32 inputs
use IEEE products, not TF32), any Nq and Nk, d up to 256 (other head dims are zero-padded to the
next supported tile width), causal masking aligned to the end, key padding (B,Nk) with True = pad.
The forward pass saves only the output and a per-query log-sum-exp, so memory is linear in N.

Two backward passes: the deterministic one (default) runs a dK/dV kernel and a dQ kernel, seven
matrix products per (query block, key block) pair; `deterministic=False` (or the environment
variable SOFTLOOKUP_DETERMINISTIC_BWD=0) runs one kernel with five products that adds dQ into an
fp32 buffer with atomics (faster when the products dominate; the summation order, and so the last
bits of dQ, vary from run to run).

Every launch sets `enable_fp_fusion=True` explicitly (multiply-adds fused to FMA, the Triton default
up to 3.9, announced to change), so the numerics do not change with the Triton version.
"""

from __future__ import annotations

import functools
import math
import os

import torch
import torch.nn.functional as F
import triton

from .kernels import attn_bwd_delta
from .tiles import attn_bwd_dkdv_tuned, attn_bwd_dq_tuned, attn_fwd_tuned, tuning_buckets

LOG2E = 1.4426950408889634
MAX_HEAD_DIM = 256
DELTA_BLOCK_M = 16
INT32_LIMIT = 2**31
FP_FUSION = {"enable_fp_fusion": True}


def softmax_scale(head_dim: int, scale: float | None) -> float:
    """The scale of q k^T: 1/sqrt(head_dim) by default. It must be positive and finite: the kernels
    fold it into the running row maximum (max(s) * scale = max(s * scale) only when scale > 0)."""
    scale = head_dim**-0.5 if scale is None else float(scale)
    if not (scale > 0 and math.isfinite(scale)):
        raise ValueError(f"the Triton kernels need a positive, finite scale, got {scale}")
    return scale


def tile_head_dim(head_dim: int) -> int:
    """The head dim the kernels run with: a power of two, at least 16 (tl.dot's minimum)."""
    if not 1 <= head_dim <= MAX_HEAD_DIM:
        raise ValueError(f"the Triton kernels support head dims 1..{MAX_HEAD_DIM}, got {head_dim}")
    return max(16, triton.next_power_of_2(head_dim))


def dot_precision(dtype: torch.dtype) -> str:
    """fp32 inputs get exact IEEE products; 16-bit inputs are exact in any tensor-core mode."""
    return "ieee" if dtype == torch.float32 else "tf32"


@functools.cache
def no_padding(device: torch.device) -> torch.Tensor:
    """The 1-element int8 placeholder passed as PAD when there is no padding (one per device)."""
    return torch.zeros(1, 1, dtype=torch.int8, device=device)


def padding_rows(key_padding_mask: torch.Tensor | None, like: torch.Tensor) -> torch.Tensor:
    """(B, Nk) int8, 1 = padding; the shared placeholder when there is no padding."""
    if key_padding_mask is None:
        return no_padding(like.device)
    return key_padding_mask.to(device=like.device, dtype=torch.int8)


def strides(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(t.stride())


def needs_wide_offsets(*tensors: torch.Tensor) -> bool:
    """True when an offset inside one head, row x row stride + column x column stride, may pass
    2^31: the kernels then compute in-head offsets in 64 bits (the WIDE launch flag)."""
    return any(
        (t.shape[-2] + 128) * abs(t.stride(-2)) + t.shape[-1] * abs(t.stride(-1)) >= INT32_LIMIT
        for t in tensors
    )


def launch_forward(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    pad: torch.Tensor,
    *,
    causal: bool,
    scale: float,
    has_pad: bool,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Run `attn_fwd` over all keys: out (B,H,Nq,d) in q's dtype, lse2 (B*H, Nq) fp32 (base 2)."""
    batch, heads, n_queries, head_dim = q.shape
    n_keys = k.shape[2]
    out = torch.empty_like(q)
    lse2 = torch.empty(batch * heads, n_queries, device=q.device, dtype=torch.float32)

    def grid(meta):
        return (triton.cdiv(n_queries, meta["BLOCK_M"]), batch * heads, 1)

    attn_fwd_tuned[grid](
        q,
        k,
        v,
        pad,
        out,
        lse2,
        scale * LOG2E,
        *strides(q),
        *strides(k),
        *strides(v),
        *strides(pad),
        0,
        *strides(out),
        heads,
        n_queries,
        n_keys,
        n_keys,
        *tuning_buckets(batch * heads, n_queries, n_keys),
        HEAD_DIM=head_dim,
        CAUSAL=causal,
        HAS_PAD=has_pad,
        PRECISION=dot_precision(q.dtype),
        WIDE=needs_wide_offsets(q, k, v, out),
        **FP_FUSION,
    )
    return out, lse2


def deterministic_backward(deterministic: bool | None) -> bool:
    """The backward pass to run: the argument, else SOFTLOOKUP_DETERMINISTIC_BWD (default 1)."""
    if deterministic is None:
        return os.environ.get("SOFTLOOKUP_DETERMINISTIC_BWD", "1") != "0"
    return deterministic


def launch_backward(
    grad_out: torch.Tensor,
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    out: torch.Tensor,
    lse2: torch.Tensor,
    pad: torch.Tensor,
    *,
    causal: bool,
    scale: float,
    has_pad: bool,
    deterministic: bool = True,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """dQ, dK, dV (shapes and dtypes of q, k, v) from dO (B,H,Nq,d) and the saved out and lse2."""
    batch, heads, n_queries, head_dim = q.shape
    n_keys = k.shape[2]
    # dK and dV share one set of strides in the kernel: both contiguous (B,H,Nk,d)
    grad_q, grad_k, grad_v = (
        torch.empty(t.shape, dtype=t.dtype, device=t.device) for t in (q, k, v)
    )
    wide = needs_wide_offsets(q, k, v, grad_out, out)
    delta = torch.empty_like(lse2)  # (B*H, Nq): rowsum(dO * O)
    attn_bwd_delta[(triton.cdiv(n_queries, DELTA_BLOCK_M), batch * heads)](
        out,
        grad_out,
        delta,
        *strides(out),
        *strides(grad_out),
        heads,
        n_queries,
        HEAD_DIM=head_dim,
        WIDE=wide,
        BLOCK_M=DELTA_BLOCK_M,
        **FP_FUSION,
    )
    shared = {
        "HEAD_DIM": head_dim,
        "CAUSAL": causal,
        "HAS_PAD": has_pad,
        "PRECISION": dot_precision(q.dtype),
        "WIDE": wide,
        **FP_FUSION,
    }
    tune = tuning_buckets(batch * heads, n_queries, n_keys)
    operands = (q, k, v, pad, grad_out, lse2, delta)
    operand_strides = (*strides(q), *strides(k), *strides(v), *strides(pad), *strides(grad_out))
    # five-product backward: dQ accumulates in fp32 (atomics), scaled and cast afterwards
    dq_acc = grad_k if deterministic else torch.zeros(q.shape, dtype=torch.float32, device=q.device)

    def key_grid(meta):
        return (triton.cdiv(n_keys, meta["BLOCK_N"]), batch * heads)

    def query_grid(meta):
        return (triton.cdiv(n_queries, meta["BLOCK_M"]), batch * heads)

    attn_bwd_dkdv_tuned[key_grid](
        *operands,
        grad_k,
        grad_v,
        dq_acc,
        scale,
        scale * LOG2E,
        *operand_strides,
        *strides(grad_k),
        *strides(dq_acc),
        heads,
        n_queries,
        n_keys,
        *tune,
        ATOMIC_DQ=not deterministic,
        **shared,
    )
    if not deterministic:
        return dq_acc.mul_(scale).to(q.dtype), grad_k, grad_v
    attn_bwd_dq_tuned[query_grid](
        *operands,
        grad_q,
        scale,
        scale * LOG2E,
        *operand_strides,
        *strides(grad_q),
        heads,
        n_queries,
        n_keys,
        *tune,
        **shared,
    )
    return grad_q, grad_k, grad_v


class FlashAttentionFunction(torch.autograd.Function):
    """Exact attention, tiled: saves out and lse2, recomputes the probabilities in backward."""

    @staticmethod
    def forward(ctx, q, k, v, key_padding_mask, causal: bool, scale: float, deterministic: bool):
        pad = padding_rows(key_padding_mask, q)
        has_pad = key_padding_mask is not None
        out, lse2 = launch_forward(q, k, v, pad, causal=causal, scale=scale, has_pad=has_pad)
        ctx.save_for_backward(q, k, v, out, lse2, pad)
        ctx.causal, ctx.scale, ctx.has_pad = causal, scale, has_pad
        ctx.deterministic = deterministic
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable  # no second derivative: say so, not zeros
    def backward(ctx, grad_out):
        q, k, v, out, lse2, pad = ctx.saved_tensors
        grads = launch_backward(
            grad_out.contiguous(),
            q,
            k,
            v,
            out,
            lse2,
            pad,
            causal=ctx.causal,
            scale=ctx.scale,
            has_pad=ctx.has_pad,
            deterministic=ctx.deterministic,
        )
        return (*grads, None, None, None, None)


def pad_head_dim(t: torch.Tensor, tile_dim: int) -> torch.Tensor:
    """(..., d) -> (..., tile_dim) with zeros: unchanged dot products, zero extra output columns."""
    return t if t.shape[-1] == tile_dim else F.pad(t, (0, tile_dim - t.shape[-1]))


def flash_attention(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    *,
    causal: bool = False,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
    deterministic: bool | None = None,
) -> torch.Tensor:
    """softmax(q k^T * scale) v without the score table; differentiable in q, k, v."""
    head_dim = q.shape[-1]
    scale = softmax_scale(head_dim, scale)
    tile_dim = tile_head_dim(max(head_dim, v.shape[-1]))
    q, k, v_tiled = (pad_head_dim(t, tile_dim) for t in (q, k, v))
    out = FlashAttentionFunction.apply(
        q, k, v_tiled, key_padding_mask, causal, scale, deterministic_backward(deterministic)
    )
    return out if v.shape[-1] == tile_dim else out[..., : v.shape[-1]]
