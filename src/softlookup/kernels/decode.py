"""Decoding with a KV cache: a few new queries against L cached keys, split over the keys (split-K).

One query block cannot keep a GPU busy when Nq is 1, so the cache is cut into splits, each run by
its own program of the forward kernel, which returns a partial output normalised over its split
and that split's log-sum-exp; `combine_splits` then weighs the partial outputs by
exp2(lse2_split - lse2_all). Causal masking is aligned to the end as everywhere: the new queries see
the whole cache (and, among themselves, only the earlier new queries). Forward only.
"""

from __future__ import annotations

import torch
import triton

from .flash import LOG2E, dot_precision, pad_head_dim, padding_rows, strides, tile_head_dim
from .flash_configs import INTERPRETING, decode_tile
from .flash_kernels import attn_fwd

# `attention(backend="triton")` sends calls with at most this many queries (and no grad) here
DECODE_MAX_QUERIES = 16
MIN_KEYS_PER_SPLIT = 256  # below this a split costs more to launch and combine than it saves
WAVES = 2  # aim for this many programs per streaming multiprocessor


def choose_num_splits(batch_heads: int, n_keys: int, device: torch.device) -> int:
    """Enough splits to give every SM `WAVES` programs, none shorter than MIN_KEYS_PER_SPLIT."""
    if INTERPRETING or device.type != "cuda":
        return 1
    sms = torch.cuda.get_device_properties(device).multi_processor_count
    wanted = triton.cdiv(WAVES * sms, batch_heads)
    return max(1, min(wanted, triton.cdiv(n_keys, MIN_KEYS_PER_SPLIT)))


def combine_splits(parts: torch.Tensor, lse2: torch.Tensor) -> torch.Tensor:
    """Partial outputs (S,B,H,Nq,d) with base-2 lse (S,B,H,Nq) -> the output over all keys.

    A split with no allowed key has lse2 = -inf and weight 0. When some split has keys, the split
    holding the maximum has weight exactly 1, so the weight total is >= 1; when none has, the total
    is 0 and so are the parts: clamping the total at 1 turns that case into a zero output.
    """
    top = lse2.amax(dim=0)  # (B,H,Nq)
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    weights = torch.exp2(lse2 - top)  # (S,B,H,Nq)
    total = weights.sum(dim=0).clamp_min(1.0)
    return (weights[..., None] * parts).sum(dim=0) / total[..., None]  # (B,H,Nq,d)


def decode_attention(
    q: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    *,
    causal: bool = True,
    scale: float | None = None,
    key_padding_mask: torch.Tensor | None = None,
    num_splits: int | None = None,
) -> torch.Tensor:
    """q (B,H,Nq,d) new queries, k_cache/v_cache (B,H,L,d) -> (B,H,Nq,dv); no autograd."""
    batch, heads, n_queries, head_dim = q.shape
    n_keys, value_dim = k_cache.shape[2], v_cache.shape[-1]
    scale = head_dim**-0.5 if scale is None else float(scale)
    tile_dim = tile_head_dim(max(head_dim, value_dim))
    q, k_cache, v_cache = (pad_head_dim(t, tile_dim) for t in (q, k_cache, v_cache))
    block_m, block_n, num_warps, num_stages = decode_tile(q.element_size(), tile_dim)
    if num_splits is None:
        num_splits = choose_num_splits(batch * heads, n_keys, q.device)
    keys_per_split = triton.cdiv(triton.cdiv(n_keys, num_splits), block_n) * block_n
    num_splits = triton.cdiv(n_keys, keys_per_split)

    parts = torch.empty(
        num_splits, batch, heads, n_queries, tile_dim, device=q.device, dtype=torch.float32
    )
    lse2 = torch.empty(num_splits, batch * heads, n_queries, device=q.device, dtype=torch.float32)
    pad = padding_rows(key_padding_mask, q)
    grid = (triton.cdiv(n_queries, block_m), batch * heads, num_splits)
    attn_fwd[grid](
        q,
        k_cache,
        v_cache,
        pad,
        parts,
        lse2,
        scale * LOG2E,
        *strides(q),
        *strides(k_cache),
        *strides(v_cache),
        *strides(pad),
        *strides(parts),
        heads,
        n_queries,
        n_keys,
        keys_per_split,
        triton.next_power_of_2(n_queries),
        triton.next_power_of_2(n_keys),
        HEAD_DIM=tile_dim,
        CAUSAL=causal,
        HAS_PAD=key_padding_mask is not None,
        PRECISION=dot_precision(q.dtype),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=num_warps,
        num_stages=num_stages,
    )
    out = combine_splits(parts, lse2.view(num_splits, batch, heads, n_queries))
    return out[..., :value_dim].to(q.dtype)
