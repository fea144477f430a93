"""Triton device code for exact attention with an online softmax (FlashAttention-2 style).

The N x N score table is never stored: each program keeps one block of queries (or keys) on chip
and streams the other side through it block by block. Score tiles hold the raw products q k^T; the
scale, times log2(e), enters once per score in `_exp2_scaled` (exp2(s * scale - shift), one fused
multiply-subtract, as in Triton's fused-attention tutorial), and the forward's running maximum is
max(s) * scale, one multiply per row (true for scale > 0, which `flash.softmax_scale` checks). So
the softmax uses exp2, and the running maximum and the saved log-sum-exp `lse2` are base 2.

Masking, shared by every kernel (`_allowed`): query i of Nq sits at key position i + (Nk - Nq)
(causal masking aligned to the end); keys past Nk and keys flagged in the padding row never
contribute. A query that may read no key gets a zero output and `lse2 = -inf`. Each kernel walks
its blocks in two phases, unrolled at compile time (`tl.static_range(2)`): the blocks that need no
score mask (every key in range and visible to every query of the block) and the blocks that do.

Kernels: `attn_fwd` (output + lse2, optionally over one split of the keys, which the decode path
uses), `attn_bwd_delta` (rowsum(dO * O)), `attn_bwd_dkdv` (one key block per program; with
ATOMIC_DQ it also adds that block's share of dQ into an fp32 buffer with atomics: five matrix
products per (query block, key block) pair instead of the seven of dK/dV plus `attn_bwd_dq`, not
deterministic), `attn_bwd_dq` (one query block per program) and `attn_decode_combine` (the split-K
partial outputs -> the output). Launch configurations live in `tiles.py`. With causal masking the
query-block kernels (`attn_fwd`, `attn_bwd_dq`) take their blocks in descending order
(`_query_block_start`), so the blocks that read the most keys start first; `attn_bwd_dkdv`'s
ascending key blocks already start with the one the most queries read.
Not done: TMA tensor descriptors and Hopper warp specialisation (producer and consumer warp groups,
as cuDNN and FlashAttention-3 use): their correctness and speed show only on an sm_90 GPU, which
neither the CPU interpreter nor ptxas stands in for and this project's CPU sessions do not have.

Offsets: a program moves its pointers to its (batch, head) in 64-bit arithmetic; offsets inside a
head are 32-bit unless the launch sets WIDE (N x stride >= 2^31, see `flash.needs_wide_offsets`).
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

# Two workarounds for Triton's CPU interpreter (triton 3.9), compiled out on the GPU: it multiplies
# bf16 tiles as their raw 16-bit patterns, so bf16 dot operands are widened to fp32 first (exact,
# like a bf16 tensor-core product); and it truncates fp32 -> bf16 (round toward zero), so `_cast`
# rounds to nearest even itself. CPU results in bf16 then round as the GPU's do.
INTERPRETER: tl.constexpr = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")


@triton.jit
def _cast(x, dtype: tl.constexpr):
    """x.to(dtype), rounding to nearest even also under the interpreter."""
    if INTERPRETER and dtype == tl.bfloat16:
        bits = x.to(tl.float32).to(tl.uint32, bitcast=True)
        bits = bits + 0x7FFF + ((bits >> 16) & 1)
        x = (bits & 0xFFFF0000).to(tl.float32, bitcast=True)
    return x.to(dtype)


@triton.jit
def _dot(a, b, acc, PRECISION: tl.constexpr):
    """a @ b (+ acc) with fp32 accumulation."""
    if INTERPRETER and a.dtype == tl.bfloat16:
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    return tl.dot(a, b, acc, input_precision=PRECISION)


@triton.jit
def _head(ptr, bh, H, stride_b, stride_h):
    """ptr moved to head (b, h) = divmod(bh, H) of a (B, H, ...) tensor, in 64-bit arithmetic."""
    return ptr + (bh // H).to(tl.int64) * stride_b + (bh % H).to(tl.int64) * stride_h


@triton.jit
def _qkv_heads(Q, K, V, bh, H, stride_qb, stride_qh, stride_kb, stride_kh, stride_vb, stride_vh):
    """Q, K, V moved to head (b, h) = divmod(bh, H)."""
    return (
        _head(Q, bh, H, stride_qb, stride_qh),
        _head(K, bh, H, stride_kb, stride_kh),
        _head(V, bh, H, stride_vb, stride_vh),
    )


@triton.jit
def _tile_offsets(
    start, stride_n, stride_d, BLOCK: tl.constexpr, HEAD_DIM: tl.constexpr, WIDE: tl.constexpr
):
    """Offsets of rows [start, start + BLOCK) x columns [0, HEAD_DIM) in one head; row indices."""
    rows = tl.multiple_of(start, BLOCK) + tl.arange(0, BLOCK)
    wide_rows = rows
    if WIDE:
        wide_rows = rows.to(tl.int64)
    return wide_rows[:, None] * stride_n + tl.arange(0, HEAD_DIM)[None, :] * stride_d, rows


@triton.jit
def _load_tile(
    ptr,
    start,
    n_rows,
    stride_n,
    stride_d,
    BLOCK: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    WIDE: tl.constexpr,
):
    """(BLOCK, HEAD_DIM) tile of rows [start, start + BLOCK) of one head; rows >= n_rows read 0."""
    offsets, rows = _tile_offsets(start, stride_n, stride_d, BLOCK, HEAD_DIM, WIDE)
    return tl.load(ptr + offsets, mask=(rows < n_rows)[:, None], other=0.0)


@triton.jit
def _store_tile(
    ptr,
    tile,
    start,
    n_rows,
    stride_n,
    stride_d,
    BLOCK: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    WIDE: tl.constexpr,
):
    offsets, rows = _tile_offsets(start, stride_n, stride_d, BLOCK, HEAD_DIM, WIDE)
    tl.store(ptr + offsets, _cast(tile, ptr.dtype.element_ty), mask=(rows < n_rows)[:, None])


@triton.jit
def _key_block(
    q,
    K,
    V,
    start_n,
    N_K,
    stride_kn,
    stride_kd,
    stride_vn,
    stride_vd,
    BLOCK_N: tl.constexpr,
    HEAD_DIM: tl.constexpr,
    PRECISION: tl.constexpr,
    WIDE: tl.constexpr,
):
    """Keys and values [start_n, start_n + BLOCK_N) and the raw scores q k^T against them
    (unscaled: `_exp2_scaled` applies the scale)."""
    k = _load_tile(K, start_n, N_K, stride_kn, stride_kd, BLOCK_N, HEAD_DIM, WIDE)
    v = _load_tile(V, start_n, N_K, stride_vn, stride_vd, BLOCK_N, HEAD_DIM, WIDE)
    return k, v, _dot(q, tl.trans(k), None, PRECISION)  # (BLOCK_M, BLOCK_N)


@triton.jit
def _exp2_scaled(s, qk_scale_log2, shift):
    """exp2(s * qk_scale_log2 - shift) of raw scores s: the scale enters with the shift (the row
    maximum or lse2, already base 2) in one multiply-subtract per score, fused to an FMA on the
    GPU, as in Triton's fused-attention tutorial; no pass over the tile multiplies by the scale."""
    return tl.math.exp2(s * qk_scale_log2 - shift)


@triton.jit
def _pad_row(PAD, offs_n, N_K, stride_pn, HAS_PAD: tl.constexpr):
    """The padding flags (1 = padding) of keys offs_n; keys past N_K count as padding."""
    pad = tl.zeros(offs_n.shape, dtype=tl.int8)
    if HAS_PAD:
        pad = tl.load(PAD + offs_n * stride_pn, mask=offs_n < N_K, other=1)
    return pad


@triton.jit
def _allowed(
    query_pos, key_pos, key_pad, N_K, causal_shift, CAUSAL: tl.constexpr, HAS_PAD: tl.constexpr
):
    """Bool, broadcast of the three inputs: may the query at query_pos read the key at key_pos.

    Pass query_pos (M, 1), key_pos and key_pad (1, N) for a (M, N) mask, or the transposes.
    """
    allowed = key_pos < N_K
    if CAUSAL:
        allowed = allowed & (key_pos <= query_pos + causal_shift)
    if HAS_PAD:
        allowed = allowed & (key_pad == 0)
    return allowed


@triton.jit
def _mask_keys(
    x,
    fill,
    offs_m,
    start_n,
    PAD,
    stride_pn,
    N_K,
    causal_shift,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
):
    """x (queries offs_m, keys [start_n, start_n + BLOCK_N)) with `fill` where not allowed."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    pad_row = _pad_row(PAD, offs_n, N_K, stride_pn, HAS_PAD)
    allowed = _allowed(
        offs_m[:, None], offs_n[None, :], pad_row[None, :], N_K, causal_shift, CAUSAL, HAS_PAD
    )
    return tl.where(allowed, x, fill)


@triton.jit
def _key_phases(
    start_m,
    lo,
    hi,
    N_Q,
    N_K,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
):
    """Keys [lo, hi) that queries [start_m, start_m + BLOCK_M) read, as (lo, full_end, hi):
    [lo, full_end) need no score mask, [full_end, hi) do. lo is a multiple of BLOCK_N."""
    causal_shift = N_K - N_Q
    full_end = (N_K // BLOCK_N) * BLOCK_N
    if CAUSAL:
        hi = tl.minimum(hi, tl.maximum(start_m + BLOCK_M + causal_shift, 0))
        full_end = tl.minimum(
            full_end, (tl.maximum(start_m + causal_shift + 1, 0) // BLOCK_N) * BLOCK_N
        )
    if HAS_PAD:
        full_end = 0
    return lo, tl.maximum(tl.minimum(full_end, hi), lo), hi


@triton.jit
def _phase(phase: tl.constexpr, first, middle, last):
    """The bounds of phase 0 ([first, middle)) or phase 1 ([middle, last))."""
    start = middle
    end = last
    if phase == 0:
        start = first
        end = middle
    return start, end


@triton.jit
def _query_block_start(BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
    """First query of this program's block (grid dimension 0 = the query blocks). Causal: the
    blocks in descending order, so the programs that start first are those that read the most keys
    (the last queries see every key) and the short ones fill the tail of the schedule."""
    block = tl.program_id(0)
    if CAUSAL:
        block = tl.num_programs(0) - 1 - block
    return block * BLOCK_M


@triton.jit
def attn_fwd(
    Q,
    K,
    V,
    PAD,
    OUT,
    LSE,
    qk_scale_log2,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_vd,
    stride_pb,
    stride_pn,
    stride_os,
    stride_ob,
    stride_oh,
    stride_om,
    stride_od,
    H,
    N_Q,
    N_K,
    KEYS_PER_SPLIT,
    TUNE_N_Q,
    TUNE_N_K,
    TUNE_BH,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    WIDE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H, splits): one query block against one split of the keys.

    Writes OUT[split, b, h, m, :] (normalised over that split) and LSE[split, b*h, m] (base 2).
    TUNE_N_Q, TUNE_N_K, TUNE_BH (power-of-two buckets of Nq, Nk and B*H, `tiles.tuning_buckets`)
    only key the autotuner, here and in the backward kernels.
    """
    start_m = _query_block_start(BLOCK_M, CAUSAL)
    bh = tl.program_id(1)
    split = tl.program_id(2)  # the decode path's split of the keys, independent of the block order
    Q, K, V = _qkv_heads(
        Q, K, V, bh, H, stride_qb, stride_qh, stride_kb, stride_kh, stride_vb, stride_vh
    )
    OUT = _head(OUT + split.to(tl.int64) * stride_os, bh, H, stride_ob, stride_oh)
    PAD += (bh // H).to(tl.int64) * stride_pb

    q = _load_tile(Q, start_m, N_Q, stride_qm, stride_qd, BLOCK_M, HEAD_DIM, WIDE)
    offs_m = start_m + tl.arange(0, BLOCK_M)
    causal_shift = N_K - N_Q
    lo = split * KEYS_PER_SPLIT
    first, middle, last = _key_phases(
        start_m,
        lo,
        tl.minimum(N_K, lo + KEYS_PER_SPLIT),
        N_Q,
        N_K,
        BLOCK_M,
        BLOCK_N,
        CAUSAL,
        HAS_PAD,
    )

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for phase in tl.static_range(2):  # 0: key blocks needing no score mask; 1: the others
        start, end = _phase(phase, first, middle, last)
        for start_n in range(start, end, BLOCK_N):
            _, v, s = _key_block(
                q,
                K,
                V,
                start_n,
                N_K,
                stride_kn,
                stride_kd,
                stride_vn,
                stride_vd,
                BLOCK_N,
                HEAD_DIM,
                PRECISION,
                WIDE,
            )
            if phase == 1:
                s = _mask_keys(
                    s,
                    float("-inf"),
                    offs_m,
                    start_n,
                    PAD,
                    stride_pn,
                    N_K,
                    causal_shift,
                    BLOCK_N,
                    CAUSAL,
                    HAS_PAD,
                )
            # base-2 running maximum: max(s) * scale = max(s * scale), the scale being > 0
            m_new = tl.maximum(m_i, tl.max(s, 1) * qk_scale_log2)
            m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing allowed
            p = _exp2_scaled(s, qk_scale_log2, m_safe[:, None])
            alpha = tl.math.exp2(m_i - m_safe)
            l_i = l_i * alpha + tl.sum(p, 1)
            acc = _dot(_cast(p, v.dtype), v, acc * alpha[:, None], PRECISION)
            m_i = m_new

    empty = l_i == 0.0  # no allowed key: output 0, lse -inf
    out = acc / tl.where(empty, 1.0, l_i)[:, None]
    lse2 = tl.where(empty, float("-inf"), m_i + tl.math.log2(tl.where(empty, 1.0, l_i)))
    _store_tile(OUT, out, start_m, N_Q, stride_om, stride_od, BLOCK_M, HEAD_DIM, WIDE)
    lse_row = (split * tl.num_programs(1) + bh).to(tl.int64) * N_Q
    tl.store(LSE + lse_row + offs_m, lse2, mask=offs_m < N_Q)


@triton.jit
def attn_bwd_delta(
    OUT,
    DO,
    DELTA,
    stride_ob,
    stride_oh,
    stride_om,
    stride_od,
    stride_dob,
    stride_doh,
    stride_dom,
    stride_dod,
    H,
    N_Q,
    HEAD_DIM: tl.constexpr,
    WIDE: tl.constexpr,
    BLOCK_M: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H): DELTA[b*h, m] = sum_d dO * O, in fp32."""
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    OUT = _head(OUT, bh, H, stride_ob, stride_oh)
    DO = _head(DO, bh, H, stride_dob, stride_doh)
    o = _load_tile(OUT, start_m, N_Q, stride_om, stride_od, BLOCK_M, HEAD_DIM, WIDE)
    do = _load_tile(DO, start_m, N_Q, stride_dom, stride_dod, BLOCK_M, HEAD_DIM, WIDE)
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    offs_m = start_m + tl.arange(0, BLOCK_M)
    tl.store(DELTA + bh.to(tl.int64) * N_Q + offs_m, delta, mask=offs_m < N_Q)


@triton.jit
def _load_lse2(LSE, offs_m, N_Q):
    """lse2 of queries offs_m; +inf for rows out of range or empty, so that exp2(s - lse2) = 0."""
    lse2 = tl.load(LSE + offs_m, mask=offs_m < N_Q, other=float("inf"))
    return tl.where(lse2 == float("-inf"), float("inf"), lse2)


@triton.jit
def attn_bwd_dkdv(
    Q,
    K,
    V,
    PAD,
    DO,
    LSE,
    DELTA,
    DK,
    DV,
    DQ_ACC,
    scale,
    qk_scale_log2,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_vd,
    stride_pb,
    stride_pn,
    stride_dob,
    stride_doh,
    stride_dom,
    stride_dod,
    stride_gb,
    stride_gh,
    stride_gn,
    stride_gd,
    stride_ab,
    stride_ah,
    stride_am,
    stride_ad,
    H,
    N_Q,
    N_K,
    TUNE_N_Q,
    TUNE_N_K,
    TUNE_BH,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    WIDE: tl.constexpr,
    ATOMIC_DQ: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nk, BLOCK_N), B*H): dK, dV of one key block, streaming the queries that see it.

    DK and DV share the strides stride_g*; LSE and DELTA are (B*H, Nq). With ATOMIC_DQ, each
    query block's dQ share (dS^T K, unscaled) is added into DQ_ACC (fp32, strides stride_a*).
    """
    # key blocks in ascending order: causal, block 0 is the one the most queries see, so the longest
    # programs already start first (no reversal, unlike the query-block kernels)
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    Q, K, V = _qkv_heads(
        Q, K, V, bh, H, stride_qb, stride_qh, stride_kb, stride_kh, stride_vb, stride_vh
    )
    DO = _head(DO, bh, H, stride_dob, stride_doh)
    DQ_ACC = _head(DQ_ACC, bh, H, stride_ab, stride_ah)
    PAD += (bh // H).to(tl.int64) * stride_pb
    LSE += bh.to(tl.int64) * N_Q
    DELTA += bh.to(tl.int64) * N_Q

    k = _load_tile(K, start_n, N_K, stride_kn, stride_kd, BLOCK_N, HEAD_DIM, WIDE)
    v = _load_tile(V, start_n, N_K, stride_vn, stride_vd, BLOCK_N, HEAD_DIM, WIDE)
    offs_n = start_n + tl.arange(0, BLOCK_N)
    pad_row = _pad_row(PAD, offs_n, N_K, stride_pn, HAS_PAD)

    # queries that see this key block: [lo, N_Q); [lo, full_start) need a score mask
    causal_shift = N_K - N_Q
    q_end = tl.cdiv(N_Q, BLOCK_M) * BLOCK_M
    lo = 0
    full_start = 0
    if CAUSAL:
        lo = (tl.maximum(start_n - causal_shift, 0) // BLOCK_M) * BLOCK_M
        full_start = tl.cdiv(tl.maximum(start_n + BLOCK_N - 1 - causal_shift, 0), BLOCK_M) * BLOCK_M
    if HAS_PAD:
        full_start = q_end
    full_start = tl.maximum(tl.minimum(full_start, q_end), lo)

    dk = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], dtype=tl.float32)
    for phase in tl.static_range(2):  # 0: query blocks needing a score mask; 1: the others
        start, end = _phase(phase, lo, full_start, N_Q)
        for start_m in range(start, end, BLOCK_M):
            q = _load_tile(Q, start_m, N_Q, stride_qm, stride_qd, BLOCK_M, HEAD_DIM, WIDE)
            do = _load_tile(DO, start_m, N_Q, stride_dom, stride_dod, BLOCK_M, HEAD_DIM, WIDE)
            offs_m = start_m + tl.arange(0, BLOCK_M)
            lse2 = _load_lse2(LSE, offs_m, N_Q)
            delta = tl.load(DELTA + offs_m, mask=offs_m < N_Q, other=0.0)
            s_t = _dot(k, tl.trans(q), None, PRECISION)  # (BLOCK_N, BLOCK_M), raw
            p_t = _exp2_scaled(s_t, qk_scale_log2, lse2[None, :])
            if phase == 0:
                allowed_t = _allowed(
                    offs_m[None, :],
                    offs_n[:, None],
                    pad_row[:, None],
                    N_K,
                    causal_shift,
                    CAUSAL,
                    HAS_PAD,
                )
                p_t = tl.where(allowed_t, p_t, 0.0)
            dv = _dot(_cast(p_t, do.dtype), do, dv, PRECISION)
            dp_t = _dot(v, tl.trans(do), None, PRECISION)  # (BLOCK_N, BLOCK_M)
            ds_t = p_t * (dp_t - delta[None, :])
            dk = _dot(_cast(ds_t, q.dtype), q, dk, PRECISION)
            if ATOMIC_DQ:
                dq = _dot(tl.trans(_cast(ds_t, k.dtype)), k, None, PRECISION)  # (BLOCK_M, HEAD_DIM)
                offsets, rows = _tile_offsets(
                    start_m, stride_am, stride_ad, BLOCK_M, HEAD_DIM, WIDE
                )
                tl.atomic_add(DQ_ACC + offsets, dq, mask=(rows < N_Q)[:, None], sem="relaxed")

    DK = _head(DK, bh, H, stride_gb, stride_gh)
    DV = _head(DV, bh, H, stride_gb, stride_gh)
    _store_tile(DK, dk * scale, start_n, N_K, stride_gn, stride_gd, BLOCK_N, HEAD_DIM, WIDE)
    _store_tile(DV, dv, start_n, N_K, stride_gn, stride_gd, BLOCK_N, HEAD_DIM, WIDE)


@triton.jit
def attn_bwd_dq(
    Q,
    K,
    V,
    PAD,
    DO,
    LSE,
    DELTA,
    DQ,
    scale,
    qk_scale_log2,
    stride_qb,
    stride_qh,
    stride_qm,
    stride_qd,
    stride_kb,
    stride_kh,
    stride_kn,
    stride_kd,
    stride_vb,
    stride_vh,
    stride_vn,
    stride_vd,
    stride_pb,
    stride_pn,
    stride_dob,
    stride_doh,
    stride_dom,
    stride_dod,
    stride_gb,
    stride_gh,
    stride_gm,
    stride_gd,
    H,
    N_Q,
    N_K,
    TUNE_N_Q,
    TUNE_N_K,
    TUNE_BH,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    WIDE: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H): dQ of one query block, streaming the keys it sees."""
    start_m = _query_block_start(BLOCK_M, CAUSAL)
    bh = tl.program_id(1)
    Q, K, V = _qkv_heads(
        Q, K, V, bh, H, stride_qb, stride_qh, stride_kb, stride_kh, stride_vb, stride_vh
    )
    DO = _head(DO, bh, H, stride_dob, stride_doh)
    PAD += (bh // H).to(tl.int64) * stride_pb

    q = _load_tile(Q, start_m, N_Q, stride_qm, stride_qd, BLOCK_M, HEAD_DIM, WIDE)
    do = _load_tile(DO, start_m, N_Q, stride_dom, stride_dod, BLOCK_M, HEAD_DIM, WIDE)
    offs_m = start_m + tl.arange(0, BLOCK_M)
    lse2 = _load_lse2(LSE + bh.to(tl.int64) * N_Q, offs_m, N_Q)
    delta = tl.load(DELTA + bh.to(tl.int64) * N_Q + offs_m, mask=offs_m < N_Q, other=0.0)
    causal_shift = N_K - N_Q
    first, middle, last = _key_phases(start_m, 0, N_K, N_Q, N_K, BLOCK_M, BLOCK_N, CAUSAL, HAS_PAD)

    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for phase in tl.static_range(2):  # the key blocks of the forward pass, in the same phases
        start, end = _phase(phase, first, middle, last)
        for start_n in range(start, end, BLOCK_N):
            k, v, s = _key_block(
                q,
                K,
                V,
                start_n,
                N_K,
                stride_kn,
                stride_kd,
                stride_vn,
                stride_vd,
                BLOCK_N,
                HEAD_DIM,
                PRECISION,
                WIDE,
            )
            p = _exp2_scaled(s, qk_scale_log2, lse2[:, None])
            if phase == 1:
                p = _mask_keys(
                    p,
                    0.0,
                    offs_m,
                    start_n,
                    PAD,
                    stride_pn,
                    N_K,
                    causal_shift,
                    BLOCK_N,
                    CAUSAL,
                    HAS_PAD,
                )
            dp = _dot(do, tl.trans(v), None, PRECISION)  # (BLOCK_M, BLOCK_N)
            ds = p * (dp - delta[:, None])
            dq = _dot(_cast(ds, k.dtype), k, dq, PRECISION)

    DQ = _head(DQ, bh, H, stride_gb, stride_gh)
    _store_tile(DQ, dq * scale, start_m, N_Q, stride_gm, stride_gd, BLOCK_M, HEAD_DIM, WIDE)


@triton.jit
def attn_decode_combine(
    PARTS,
    LSE,
    OUT,
    stride_ps,
    stride_pr,
    stride_ls,
    stride_or,
    SPLITS,
    VALUE_DIM,
    HEAD_DIM: tl.constexpr,
    BLOCK_S: tl.constexpr,
):
    """Grid (B*H*Nq,): one query's output from its split-K partial outputs.

    PARTS (S, B*H*Nq, HEAD_DIM) fp32, each normalised over its split; LSE (S, B*H*Nq) base 2.
    Weights exp2(lse2_split - max): a split with no allowed key has weight 0; when no split has
    one, every weight and part is 0 and clamping the total at 1 gives a zero output.
    """
    row = tl.program_id(0).to(tl.int64)
    splits = tl.arange(0, BLOCK_S)
    lse2 = tl.load(LSE + splits * stride_ls + row, mask=splits < SPLITS, other=float("-inf"))
    top = tl.max(lse2, 0)
    top = tl.where(top == float("-inf"), 0.0, top)
    weights = tl.math.exp2(lse2 - top)  # (BLOCK_S,)
    cols = tl.arange(0, HEAD_DIM)
    parts = tl.load(
        PARTS + splits[:, None] * stride_ps + row * stride_pr + cols[None, :],
        mask=(splits < SPLITS)[:, None],
        other=0.0,
    )
    out = tl.sum(weights[:, None] * parts, 0) / tl.maximum(tl.sum(weights, 0), 1.0)
    tl.store(OUT + row * stride_or + cols, _cast(out, OUT.dtype.element_ty), mask=cols < VALUE_DIM)
