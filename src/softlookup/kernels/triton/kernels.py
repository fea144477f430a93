"""Triton device code for exact attention with an online softmax (FlashAttention-2 style).

The N x N score table is never stored: each program keeps one block of queries (or keys) on chip
and streams the other side through it block by block. Scores live in the base-2 domain
(`qk * scale * log2(e)`), so the softmax uses exp2 and the saved log-sum-exp `lse2` is base 2.

Masking, shared by every kernel: query i of Nq sits at key position i + (Nk - Nq) (causal masking
aligned to the end); keys past Nk and keys flagged in the padding row never contribute. A query
that may read no key gets a zero output and `lse2 = -inf`. Blocks that need no score mask (every key in
range and visible to every query of the block) run through an unmasked loop; the rest through a
masked one.

Kernels: `attn_fwd` (output + lse2, optionally over one split of the keys, which the decode path
uses), `attn_bwd_delta` (rowsum(dO * O)), `attn_bwd_dkdv` (one key block per program) and
`attn_bwd_dq` (one query block per program). Launch configurations live in `flash_configs.py`.
"""

from __future__ import annotations

import os

import triton
import triton.language as tl

# Triton's CPU interpreter multiplies bf16 tiles as their raw 16-bit patterns (triton 3.9); under
# it, bf16 dot operands are widened to fp32 first, which is exact, like a bf16 tensor-core product.
WIDEN_BF16_DOTS: tl.constexpr = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")


@triton.jit
def _dot(a, b, acc, PRECISION: tl.constexpr):
    """a @ b (+ acc) with fp32 accumulation."""
    if WIDEN_BF16_DOTS and a.dtype == tl.bfloat16:
        a = a.to(tl.float32)
        b = b.to(tl.float32)
    return tl.dot(a, b, acc, input_precision=PRECISION)


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
def _fwd_block(
    acc,
    m_i,
    l_i,
    q,
    K,
    V,
    PAD,
    start_n,
    offs_m,
    N_K,
    causal_shift,
    qk_scale_log2,
    stride_kn,
    stride_kd,
    stride_vn,
    stride_vd,
    stride_pn,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    MASKED: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Fold keys [start_n, start_n + BLOCK_N) into the running (acc, max, sum) of a query block."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    in_range = (offs_n < N_K)[:, None]
    k = tl.load(
        K + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=in_range, other=0.0
    )
    v = tl.load(
        V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=in_range, other=0.0
    )
    s = _dot(q, tl.trans(k), None, PRECISION) * qk_scale_log2  # (BLOCK_M, BLOCK_N)
    if MASKED:
        pad_row = tl.zeros([BLOCK_N], dtype=tl.int8)
        if HAS_PAD:
            pad_row = tl.load(PAD + offs_n * stride_pn, mask=offs_n < N_K, other=1)
        allowed = _allowed(
            offs_m[:, None], offs_n[None, :], pad_row[None, :], N_K, causal_shift, CAUSAL, HAS_PAD
        )
        s = tl.where(allowed, s, float("-inf"))
    m_new = tl.maximum(m_i, tl.max(s, 1))
    m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)  # a row with nothing allowed yet
    p = tl.math.exp2(s - m_safe[:, None])
    alpha = tl.math.exp2(m_i - m_safe)
    l_i = l_i * alpha + tl.sum(p, 1)
    acc = acc * alpha[:, None]
    acc = _dot(p.to(v.dtype), v, acc, PRECISION)
    return acc, m_new, l_i


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
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H, splits): one query block against one split of the keys.

    Writes OUT[split, b, h, m, :] (normalised over that split) and LSE[split, b*h, m] (base 2).
    TUNE_N_Q/TUNE_N_K are power-of-two buckets of Nq/Nk that only key the autotuner.
    """
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    split = tl.program_id(2)
    b = bh // H
    h = bh % H
    Q += b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    K += b.to(tl.int64) * stride_kb + h.to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + h.to(tl.int64) * stride_vh
    OUT += split.to(tl.int64) * stride_os + b.to(tl.int64) * stride_ob + h.to(tl.int64) * stride_oh
    PAD += b.to(tl.int64) * stride_pb

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = offs_m < N_Q
    q = tl.load(
        Q + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd,
        mask=row_ok[:, None],
        other=0.0,
    )

    # keys this program reads: [lo, hi); [lo, full_end) need no score mask
    causal_shift = N_K - N_Q
    lo = split * KEYS_PER_SPLIT
    hi = N_K
    full_end = (N_K // BLOCK_N) * BLOCK_N
    if CAUSAL:
        hi = tl.minimum(hi, tl.maximum(start_m + BLOCK_M + causal_shift, 0))
        full_end = tl.minimum(
            full_end, (tl.maximum(start_m + causal_shift + 1, 0) // BLOCK_N) * BLOCK_N
        )
    if HAS_PAD:
        full_end = 0
    hi = tl.minimum(hi, lo + KEYS_PER_SPLIT)
    full_end = tl.maximum(tl.minimum(full_end, hi), lo)

    m_i = tl.full([BLOCK_M], float("-inf"), dtype=tl.float32)
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(lo, full_end, BLOCK_N):
        acc, m_i, l_i = _fwd_block(
            acc,
            m_i,
            l_i,
            q,
            K,
            V,
            PAD,
            start_n,
            offs_m,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_kn,
            stride_kd,
            stride_vn,
            stride_vd,
            stride_pn,
            HEAD_DIM,
            BLOCK_N,
            CAUSAL,
            HAS_PAD,
            False,
            PRECISION,
        )
    for start_n in range(full_end, hi, BLOCK_N):
        acc, m_i, l_i = _fwd_block(
            acc,
            m_i,
            l_i,
            q,
            K,
            V,
            PAD,
            start_n,
            offs_m,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_kn,
            stride_kd,
            stride_vn,
            stride_vd,
            stride_pn,
            HEAD_DIM,
            BLOCK_N,
            CAUSAL,
            HAS_PAD,
            True,
            PRECISION,
        )

    empty = l_i == 0.0  # no allowed key: output 0, lse -inf
    out = acc / tl.where(empty, 1.0, l_i)[:, None]
    lse2 = tl.where(empty, float("-inf"), m_i + tl.math.log2(tl.where(empty, 1.0, l_i)))
    tl.store(
        OUT + offs_m[:, None] * stride_om + offs_d[None, :] * stride_od,
        out.to(OUT.dtype.element_ty),
        mask=row_ok[:, None],
    )
    tl.store(LSE + (split * tl.num_programs(1) + bh).to(tl.int64) * N_Q + offs_m, lse2, mask=row_ok)


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
    BLOCK_M: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H): DELTA[b*h, m] = sum_d dO * O, in fp32."""
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = (offs_m < N_Q)[:, None]
    o = tl.load(
        OUT
        + b.to(tl.int64) * stride_ob
        + h.to(tl.int64) * stride_oh
        + offs_m[:, None] * stride_om
        + offs_d[None, :] * stride_od,
        mask=row_ok,
        other=0.0,
    )
    do = tl.load(
        DO
        + b.to(tl.int64) * stride_dob
        + h.to(tl.int64) * stride_doh
        + offs_m[:, None] * stride_dom
        + offs_d[None, :] * stride_dod,
        mask=row_ok,
        other=0.0,
    )
    delta = tl.sum(o.to(tl.float32) * do.to(tl.float32), 1)
    tl.store(DELTA + bh.to(tl.int64) * N_Q + offs_m, delta, mask=offs_m < N_Q)


@triton.jit
def _load_lse2(LSE, offs_m, N_Q):
    """lse2 of queries offs_m; +inf for rows out of range or empty, so that exp2(s - lse2) = 0."""
    lse2 = tl.load(LSE + offs_m, mask=offs_m < N_Q, other=float("inf"))
    return tl.where(lse2 == float("-inf"), float("inf"), lse2)


@triton.jit
def _dkdv_block(
    dk,
    dv,
    k,
    v,
    Q,
    DO,
    LSE,
    DELTA,
    PAD,
    start_m,
    offs_n,
    pad_row,
    N_Q,
    N_K,
    causal_shift,
    qk_scale_log2,
    stride_qm,
    stride_qd,
    stride_dom,
    stride_dod,
    HEAD_DIM: tl.constexpr,
    BLOCK_M: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    MASKED: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Add the contribution of queries [start_m, start_m + BLOCK_M) to dK, dV of one key block."""
    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = (offs_m < N_Q)[:, None]
    q = tl.load(
        Q + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd, mask=row_ok, other=0.0
    )
    do = tl.load(
        DO + offs_m[:, None] * stride_dom + offs_d[None, :] * stride_dod, mask=row_ok, other=0.0
    )
    lse2 = _load_lse2(LSE, offs_m, N_Q)
    delta = tl.load(DELTA + offs_m, mask=offs_m < N_Q, other=0.0)
    s_t = _dot(k, tl.trans(q), None, PRECISION) * qk_scale_log2  # (BLOCK_N, BLOCK_M)
    p_t = tl.math.exp2(s_t - lse2[None, :])
    if MASKED:
        allowed_t = _allowed(
            offs_m[None, :], offs_n[:, None], pad_row[:, None], N_K, causal_shift, CAUSAL, HAS_PAD
        )
        p_t = tl.where(allowed_t, p_t, 0.0)
    dv = _dot(p_t.to(do.dtype), do, dv, PRECISION)
    dp_t = _dot(v, tl.trans(do), None, PRECISION)  # (BLOCK_N, BLOCK_M)
    ds_t = p_t * (dp_t - delta[None, :])
    dk = _dot(ds_t.to(q.dtype), q, dk, PRECISION)
    return dk, dv


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
    H,
    N_Q,
    N_K,
    TUNE_N_Q,
    TUNE_N_K,
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nk, BLOCK_N), B*H): dK, dV of one key block, streaming the queries that see it.

    DK and DV share the strides stride_g*; LSE and DELTA are (B*H, Nq).
    """
    start_n = tl.program_id(0) * BLOCK_N
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    Q += b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    K += b.to(tl.int64) * stride_kb + h.to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + h.to(tl.int64) * stride_vh
    DO += b.to(tl.int64) * stride_dob + h.to(tl.int64) * stride_doh
    PAD += b.to(tl.int64) * stride_pb
    LSE += bh.to(tl.int64) * N_Q
    DELTA += bh.to(tl.int64) * N_Q

    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    key_ok = (offs_n < N_K)[:, None]
    k = tl.load(
        K + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=key_ok, other=0.0
    )
    v = tl.load(
        V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=key_ok, other=0.0
    )
    pad_row = tl.zeros([BLOCK_N], dtype=tl.int8)
    if HAS_PAD:
        pad_row = tl.load(PAD + offs_n * stride_pn, mask=offs_n < N_K, other=1)

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
    for start_m in range(lo, full_start, BLOCK_M):
        dk, dv = _dkdv_block(
            dk,
            dv,
            k,
            v,
            Q,
            DO,
            LSE,
            DELTA,
            PAD,
            start_m,
            offs_n,
            pad_row,
            N_Q,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_qm,
            stride_qd,
            stride_dom,
            stride_dod,
            HEAD_DIM,
            BLOCK_M,
            CAUSAL,
            HAS_PAD,
            True,
            PRECISION,
        )
    for start_m in range(full_start, N_Q, BLOCK_M):
        dk, dv = _dkdv_block(
            dk,
            dv,
            k,
            v,
            Q,
            DO,
            LSE,
            DELTA,
            PAD,
            start_m,
            offs_n,
            pad_row,
            N_Q,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_qm,
            stride_qd,
            stride_dom,
            stride_dod,
            HEAD_DIM,
            BLOCK_M,
            CAUSAL,
            HAS_PAD,
            False,
            PRECISION,
        )

    grad_offset = b.to(tl.int64) * stride_gb + h.to(tl.int64) * stride_gh
    grad_ptrs = offs_n[:, None] * stride_gn + offs_d[None, :] * stride_gd
    tl.store(DK + grad_offset + grad_ptrs, (dk * scale).to(DK.dtype.element_ty), mask=key_ok)
    tl.store(DV + grad_offset + grad_ptrs, dv.to(DV.dtype.element_ty), mask=key_ok)


@triton.jit
def _dq_block(
    dq,
    q,
    do,
    lse2,
    delta,
    K,
    V,
    PAD,
    start_n,
    offs_m,
    N_K,
    causal_shift,
    qk_scale_log2,
    stride_kn,
    stride_kd,
    stride_vn,
    stride_vd,
    stride_pn,
    HEAD_DIM: tl.constexpr,
    BLOCK_N: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    MASKED: tl.constexpr,
    PRECISION: tl.constexpr,
):
    """Add the contribution of keys [start_n, start_n + BLOCK_N) to dQ of one query block."""
    offs_n = start_n + tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD_DIM)
    in_range = (offs_n < N_K)[:, None]
    k = tl.load(
        K + offs_n[:, None] * stride_kn + offs_d[None, :] * stride_kd, mask=in_range, other=0.0
    )
    v = tl.load(
        V + offs_n[:, None] * stride_vn + offs_d[None, :] * stride_vd, mask=in_range, other=0.0
    )
    s = _dot(q, tl.trans(k), None, PRECISION) * qk_scale_log2  # (BLOCK_M, BLOCK_N)
    p = tl.math.exp2(s - lse2[:, None])
    if MASKED:
        pad_row = tl.zeros([BLOCK_N], dtype=tl.int8)
        if HAS_PAD:
            pad_row = tl.load(PAD + offs_n * stride_pn, mask=offs_n < N_K, other=1)
        allowed = _allowed(
            offs_m[:, None], offs_n[None, :], pad_row[None, :], N_K, causal_shift, CAUSAL, HAS_PAD
        )
        p = tl.where(allowed, p, 0.0)
    dp = _dot(do, tl.trans(v), None, PRECISION)  # (BLOCK_M, BLOCK_N)
    ds = p * (dp - delta[:, None])
    return _dot(ds.to(k.dtype), k, dq, PRECISION)


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
    HEAD_DIM: tl.constexpr,
    CAUSAL: tl.constexpr,
    HAS_PAD: tl.constexpr,
    PRECISION: tl.constexpr,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
):
    """Grid (cdiv(Nq, BLOCK_M), B*H): dQ of one query block, streaming the keys it sees."""
    start_m = tl.program_id(0) * BLOCK_M
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    Q += b.to(tl.int64) * stride_qb + h.to(tl.int64) * stride_qh
    K += b.to(tl.int64) * stride_kb + h.to(tl.int64) * stride_kh
    V += b.to(tl.int64) * stride_vb + h.to(tl.int64) * stride_vh
    DO += b.to(tl.int64) * stride_dob + h.to(tl.int64) * stride_doh
    PAD += b.to(tl.int64) * stride_pb

    offs_m = start_m + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, HEAD_DIM)
    row_ok = (offs_m < N_Q)[:, None]
    q = tl.load(
        Q + offs_m[:, None] * stride_qm + offs_d[None, :] * stride_qd, mask=row_ok, other=0.0
    )
    do = tl.load(
        DO + offs_m[:, None] * stride_dom + offs_d[None, :] * stride_dod, mask=row_ok, other=0.0
    )
    lse2 = _load_lse2(LSE + bh.to(tl.int64) * N_Q, offs_m, N_Q)
    delta = tl.load(DELTA + bh.to(tl.int64) * N_Q + offs_m, mask=offs_m < N_Q, other=0.0)

    # the same key ranges as the forward pass
    causal_shift = N_K - N_Q
    hi = N_K
    full_end = (N_K // BLOCK_N) * BLOCK_N
    if CAUSAL:
        hi = tl.minimum(hi, tl.maximum(start_m + BLOCK_M + causal_shift, 0))
        full_end = tl.minimum(
            full_end, (tl.maximum(start_m + causal_shift + 1, 0) // BLOCK_N) * BLOCK_N
        )
    if HAS_PAD:
        full_end = 0
    full_end = tl.minimum(full_end, hi)

    dq = tl.zeros([BLOCK_M, HEAD_DIM], dtype=tl.float32)
    for start_n in range(0, full_end, BLOCK_N):
        dq = _dq_block(
            dq,
            q,
            do,
            lse2,
            delta,
            K,
            V,
            PAD,
            start_n,
            offs_m,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_kn,
            stride_kd,
            stride_vn,
            stride_vd,
            stride_pn,
            HEAD_DIM,
            BLOCK_N,
            CAUSAL,
            HAS_PAD,
            False,
            PRECISION,
        )
    for start_n in range(full_end, hi, BLOCK_N):
        dq = _dq_block(
            dq,
            q,
            do,
            lse2,
            delta,
            K,
            V,
            PAD,
            start_n,
            offs_m,
            N_K,
            causal_shift,
            qk_scale_log2,
            stride_kn,
            stride_kd,
            stride_vn,
            stride_vd,
            stride_pn,
            HEAD_DIM,
            BLOCK_N,
            CAUSAL,
            HAS_PAD,
            True,
            PRECISION,
        )

    dq_ptrs = DQ + b.to(tl.int64) * stride_gb + h.to(tl.int64) * stride_gh
    dq_ptrs += offs_m[:, None] * stride_gm + offs_d[None, :] * stride_gd
    tl.store(dq_ptrs, (dq * scale).to(DQ.dtype.element_ty), mask=row_ok)
