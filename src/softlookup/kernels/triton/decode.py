"""Decoding with a KV cache: a few new queries against L cached keys, split over the keys (split-K).

One query block cannot keep a GPU busy when Nq is 1, so the cache is cut into splits, each run by
its own program of the forward kernel, which returns a partial output normalised over its split
and that split's log-sum-exp; `attn_decode_combine` (one Triton launch) then weighs the partial
outputs by exp2(lse2_split - lse2_all) and writes the output in the inputs' dtype. With one split
the forward kernel writes the output directly. Causal masking is aligned to the end as everywhere:
the new queries see the whole cache (and, among themselves, only the earlier new queries); a single
new query sees every key, so it runs without the causal mask. Forward only.
"""

from __future__ import annotations

import torch
import triton

from .flash import (
    FP_FUSION,
    LOG2E,
    dot_precision,
    needs_wide_offsets,
    pad_head_dim,
    padding_rows,
    softmax_scale,
    strides,
    tile_head_dim,
)
from .kernels import attn_decode_combine, attn_fwd
from .tiles import INTERPRETING, decode_tile, tuning_buckets

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
    scale = softmax_scale(head_dim, scale)
    tile_dim = tile_head_dim(max(head_dim, value_dim))
    q, k_cache, v_cache = (pad_head_dim(t, tile_dim) for t in (q, k_cache, v_cache))
    block_m, block_n, num_warps, num_stages = decode_tile(q.element_size(), tile_dim)
    if num_splits is None:
        num_splits = choose_num_splits(batch * heads, n_keys, q.device)
    keys_per_split = triton.cdiv(triton.cdiv(n_keys, num_splits), block_n) * block_n
    num_splits = triton.cdiv(n_keys, keys_per_split)

    shape = (batch, heads, n_queries, tile_dim)
    if num_splits == 1:  # the kernel's output is the answer
        parts = torch.empty(shape, device=q.device, dtype=q.dtype)
    else:  # fp32 partial outputs (S,B,H,Nq,d), combined below
        parts = torch.empty((num_splits, *shape), device=q.device, dtype=torch.float32)
    lse2 = torch.empty(num_splits, batch * heads, n_queries, device=q.device, dtype=torch.float32)
    pad = padding_rows(key_padding_mask, q)
    part_strides = strides(parts) if num_splits > 1 else (0, *strides(parts))
    attn_fwd[(triton.cdiv(n_queries, block_m), batch * heads, num_splits)](
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
        *part_strides,
        heads,
        n_queries,
        n_keys,
        keys_per_split,
        *tuning_buckets(batch * heads, n_queries, n_keys),
        HEAD_DIM=tile_dim,
        CAUSAL=causal and n_queries > 1,
        HAS_PAD=key_padding_mask is not None,
        PRECISION=dot_precision(q.dtype),
        WIDE=needs_wide_offsets(q, k_cache, v_cache),
        BLOCK_M=block_m,
        BLOCK_N=block_n,
        num_warps=num_warps,
        num_stages=num_stages,
        **FP_FUSION,
    )
    if num_splits == 1:
        return parts[..., :value_dim]
    out = torch.empty(batch, heads, n_queries, value_dim, device=q.device, dtype=q.dtype)
    rows = batch * heads * n_queries
    attn_decode_combine[(rows,)](
        parts,
        lse2,
        out,
        parts.stride(0),
        tile_dim,
        rows,
        value_dim,
        num_splits,
        value_dim,
        HEAD_DIM=tile_dim,
        BLOCK_S=triton.next_power_of_2(num_splits),
        **FP_FUSION,
    )
    return out
