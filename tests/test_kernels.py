"""Attention kernels against the fp32 reference: forward, gradients, decode, dispatch.

On a machine without CUDA the Triton kernels run under Triton's CPU interpreter (TRITON_INTERPRET=1,
set in conftest.py before any kernel is defined); with CUDA and TRITON_INTERPRET=0
(scripts/gpu_check.sh) the same tests run the compiled kernels on the GPU, plus a few larger shapes.

Tolerances, against the reference computed in fp32 from the same inputs:
- fp32 kernels: |err| <= 1e-5 + 1e-4 |ref| (IEEE products, no TF32);
- fp16/bf16 kernels: max |err| <= 2 x (max |err| of the reference run in that dtype) + 1e-3, the
  criterion of the FlashAttention test-suite: the fused kernel may not be worse than twice the
  plain low-precision computation. Under the interpreter this criterion means what it means on the
  GPU: the interpreter truncates fp32 -> bf16, and the kernels' casts round to nearest even
  themselves there (`test_bf16_casts_round_to_nearest_even_like_the_gpu`), so the CPU error is the
  GPU's, not up to twice it.
"""

from __future__ import annotations

import os

import pytest
import torch

from softlookup.kernels import BACKENDS, attention, reference_attention
from softlookup.kernels.triton import kernels as triton_kernels  # after conftest's TRITON_INTERPRET

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"
ON_GPU = torch.cuda.is_available() and not INTERPRETING
TRITON_DEVICE = "cuda" if ON_GPU else "cpu"
needs_triton = pytest.mark.skipif(
    not (INTERPRETING or ON_GPU), reason="needs CUDA or TRITON_INTERPRET=1"
)


def make_inputs(batch, heads, n_queries, n_keys, head_dim, dtype, device, seed=0):
    """q (B,H,Nq,d), k/v (B,H,Nk,d) with unit-variance entries."""
    gen = torch.Generator().manual_seed(seed)
    shapes = [(batch, heads, n, head_dim) for n in (n_queries, n_keys, n_keys)]
    return [torch.randn(s, generator=gen).to(device=device, dtype=dtype) for s in shapes]


def padding_mask(batch, n_keys, device):
    """(B, Nk) bool: row 0 pads its last third, row 1 (if any) is padding everywhere."""
    mask = torch.zeros(batch, n_keys, dtype=torch.bool)
    mask[0, n_keys - n_keys // 3 :] = True
    if batch > 1:
        mask[1] = True
    return mask.to(device)


def forward_and_grads(q, k, v, grad_out, **kwargs):
    """Output and (dq, dk, dv) of attention(q, k, v, **kwargs) for the upstream gradient grad_out."""
    q, k, v = (t.detach().requires_grad_() for t in (q, k, v))
    out = attention(q, k, v, **kwargs)
    return [out, *torch.autograd.grad(out, (q, k, v), grad_out.to(out.dtype))]


def max_error(tensors, references):
    return max((t.float() - r).abs().max().item() for t, r in zip(tensors, references, strict=True))


def assert_matches_reference(q, k, v, **kwargs):
    """Forward and gradients of backend kwargs["backend"] against the fp32 reference."""
    grad_out = torch.randn(q.shape[:-1] + v.shape[-1:], generator=torch.Generator().manual_seed(1))
    grad_out = grad_out.to(q.device)
    reference = {**kwargs, "backend": "reference"}
    expected = forward_and_grads(q.float(), k.float(), v.float(), grad_out, **reference)
    got = forward_and_grads(q, k, v, grad_out, **kwargs)
    assert all(torch.isfinite(t).all() for t in got)
    if q.dtype in (torch.float32, torch.float64):
        for name, g, e in zip(("out", "dq", "dk", "dv"), got, expected, strict=True):
            torch.testing.assert_close(g.float(), e, atol=1e-5, rtol=1e-4, msg=name)
    else:
        plain = forward_and_grads(q, k, v, grad_out, **reference)
        assert max_error(got, expected) <= 2 * max_error(plain, expected) + 1e-3


# (B, H, Nq, Nk, d, causal, padded, scale, dtype): odd lengths, Nq != Nk both ways, every head dim,
# a fully padded batch row, Nq > Nk with causal (the first queries see no key), scale 1.0
TRITON_CASES = [
    (1, 2, 37, 37, 16, False, False, None, torch.float32),
    (1, 1, 37, 37, 16, True, False, None, torch.float32),
    (2, 1, 23, 41, 32, True, True, 1.0, torch.float32),
    (2, 1, 41, 23, 64, True, False, None, torch.float32),
    (1, 1, 19, 50, 128, False, True, 0.3, torch.float32),
    (1, 1, 17, 33, 256, True, False, None, torch.bfloat16),
    (1, 1, 29, 29, 24, True, False, None, torch.float32),
    (1, 2, 33, 47, 64, True, False, None, torch.bfloat16),
    (2, 1, 33, 18, 128, False, True, 1.0, torch.bfloat16),
    (2, 1, 33, 47, 32, False, True, None, torch.float16),
    (1, 1, 40, 21, 16, True, False, None, torch.float16),
    # one query and one key; one query with gradients (the fused path); block-size multiples;
    # d = 8 and 48 (zero-padded to 16 and 64)
    (1, 1, 1, 1, 16, True, False, None, torch.float32),
    (2, 1, 1, 50, 48, False, True, None, torch.bfloat16),
    (1, 1, 64, 64, 64, True, False, None, torch.bfloat16),
    (1, 3, 16, 80, 8, True, True, 0.5, torch.float32),
]
if not ON_GPU:  # compiled, fp32 at d = 256 takes a minute to build; interpreted, a second
    TRITON_CASES += [(1, 1, 17, 33, 256, False, True, None, torch.float32)]
if ON_GPU:
    TRITON_CASES += [
        (2, 4, 1000, 1000, 128, True, False, None, torch.bfloat16),
        (1, 4, 777, 2049, 64, True, True, None, torch.float16),
        (1, 2, 4096, 4096, 64, False, False, None, torch.bfloat16),
        (1, 2, 513, 1031, 128, True, False, None, torch.float32),
    ]


# the five-product backward (dQ by atomics) against the reference, on the awkward cases; causal
# with padding in both directions (Nq > Nk: the first queries see no key; a fully padded batch row),
# every 16-bit head-dim class, a block-size multiple with d = 8
ATOMIC_CASES = [
    (2, 1, 23, 41, 32, True, True, 1.0, torch.float32),
    (2, 1, 41, 23, 64, True, False, None, torch.float32),
    (1, 2, 33, 47, 64, True, False, None, torch.bfloat16),
    (2, 1, 33, 47, 32, False, True, None, torch.float16),
    (2, 1, 41, 23, 64, True, True, None, torch.bfloat16),
    (1, 2, 37, 53, 128, True, True, 0.5, torch.float16),
    (2, 1, 17, 33, 256, True, True, None, torch.bfloat16),
    (1, 3, 16, 80, 8, True, True, 0.5, torch.float32),
]
if ON_GPU:
    ATOMIC_CASES += [
        (2, 4, 1000, 1000, 128, True, False, None, torch.bfloat16),
        (1, 4, 777, 2049, 64, True, True, None, torch.float16),
    ]


@needs_triton
@pytest.mark.parametrize(
    "batch,heads,n_q,n_k,d,causal,padded,scale,dtype,backward",
    [(*case, "deterministic") for case in TRITON_CASES]
    + [(*case, "atomic") for case in ATOMIC_CASES],
)
def test_triton_matches_reference(
    monkeypatch, batch, heads, n_q, n_k, d, causal, padded, scale, dtype, backward
):
    monkeypatch.setenv("SOFTLOOKUP_DETERMINISTIC_BWD", "0" if backward == "atomic" else "1")
    q, k, v = make_inputs(batch, heads, n_q, n_k, d, dtype, TRITON_DEVICE)
    mask = padding_mask(batch, n_k, TRITON_DEVICE) if padded else None
    assert_matches_reference(
        q, k, v, causal=causal, scale=scale, key_padding_mask=mask, backend="triton"
    )


@needs_triton
@pytest.mark.parametrize("scale", [0.0, -0.5])
@pytest.mark.parametrize("needs_grad", [False, True])  # the decode kernel, the fused kernel
def test_triton_needs_a_positive_scale(scale, needs_grad):
    """The kernels fold the scale into the row maximum, max(s) * scale = max(s * scale), true only
    for scale > 0: a clear error instead of a wrong softmax."""
    q, k, v = make_inputs(1, 1, 4, 4, 16, torch.float32, TRITON_DEVICE)
    with pytest.raises(ValueError, match="positive, finite scale"):
        attention(q.requires_grad_(needs_grad), k, v, scale=scale, backend="triton")


@needs_triton
def test_triton_accepts_strided_inputs():
    """q, k, v as (B,N,H,d) tensors viewed as (B,H,N,d), the layout a model's projections give."""
    gen = torch.Generator().manual_seed(0)
    q, k, v = (
        torch.randn(2, n, 3, 32, generator=gen).to(TRITON_DEVICE).transpose(1, 2)  # (B,H,N,d)
        for n in (19, 21, 21)
    )
    assert not q.is_contiguous()
    assert_matches_reference(q, k, v, causal=True, backend="triton")


@needs_triton
def test_fully_padded_row_and_keyless_queries_give_zeros():
    q, k, v = make_inputs(2, 1, 20, 17, 16, torch.float32, TRITON_DEVICE)
    mask = padding_mask(2, 17, TRITON_DEVICE)
    q, k, v = (t.requires_grad_() for t in (q, k, v))
    out = attention(q, k, v, causal=True, key_padding_mask=mask, backend="triton")
    out.sum().backward()
    assert torch.all(out[1] == 0)  # batch row 1: every key is padding
    assert torch.all(out[0, :, :3] == 0)  # Nq - Nk = 3 first queries precede every key
    assert torch.all(out[0, :, 3:].abs().sum(-1) > 0)
    assert all(torch.isfinite(t.grad).all() for t in (q, k, v))
    assert torch.all(k.grad[0, :, 17 - 17 // 3 :] == 0)  # padded keys get no gradient


@needs_triton
def test_triton_saves_no_score_table():
    """Memory linear in N: autograd keeps q, k, v, out and per-query statistics, no Nq x Nk table."""
    n_q, n_k = 48, 40
    q, k, v = (t.requires_grad_() for t in make_inputs(1, 1, n_q, n_k, 16, torch.float32, "cpu"))
    q, k, v = (t.to(TRITON_DEVICE) for t in (q, k, v))
    saved = []

    def keep(t):
        saved.append(t)
        return t

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
        attention(q, k, v, backend="triton")
    assert saved and max(t.numel() for t in saved) < n_q * n_k


# (B, H, Nq new queries, L cached keys, d, padded, num_splits): splits that cover several tiles,
# splits with nothing allowed (padding), more splits than tiles, two causal query blocks (run in
# descending order) over three splits
DECODE_CASES = [
    (2, 2, 1, 70, 32, False, 1),
    (2, 1, 1, 70, 64, True, 3),
    (1, 2, 3, 53, 16, False, 4),
    (2, 1, 2, 37, 128, True, 8),
    (2, 1, 20, 61, 32, True, 3),
]


@needs_triton
@pytest.mark.parametrize("batch,heads,n_q,n_cache,d,padded,num_splits", DECODE_CASES)
def test_decode_matches_full_attention(batch, heads, n_q, n_cache, d, padded, num_splits):
    from softlookup.kernels.triton.decode import decode_attention

    q, k, v = make_inputs(batch, heads, n_q, n_cache, d, torch.float32, TRITON_DEVICE)
    mask = padding_mask(batch, n_cache, TRITON_DEVICE) if padded else None
    got = decode_attention(q, k, v, causal=True, key_padding_mask=mask, num_splits=num_splits)
    expected = reference_attention(q, k, v, causal=True, key_padding_mask=mask)
    torch.testing.assert_close(got, expected, atol=1e-5, rtol=1e-4)


@needs_triton
def test_decode_in_low_precision_matches_reference():
    from softlookup.kernels.triton.decode import decode_attention

    q, k, v = make_inputs(2, 2, 1, 90, 64, torch.bfloat16, TRITON_DEVICE)
    got = decode_attention(q, k, v, causal=True, num_splits=3)
    expected = reference_attention(q.float(), k.float(), v.float(), causal=True)
    plain = reference_attention(q, k, v, causal=True)
    assert max_error([got], [expected]) <= 2 * max_error([plain], [expected]) + 1e-3


@needs_triton
def test_small_query_counts_without_grad_route_to_decode(monkeypatch):
    from softlookup.kernels.triton import decode

    calls = []

    def spy(*args, **kwargs):
        calls.append(args[0].shape)
        return decode_attention(*args, **kwargs)

    decode_attention = decode.decode_attention
    monkeypatch.setattr(decode, "decode_attention", spy)
    q, k, v = make_inputs(1, 2, 1, 30, 16, torch.float32, TRITON_DEVICE)
    with torch.no_grad():
        out = attention(q, k, v, causal=True, backend="triton")
    assert calls == [q.shape]
    torch.testing.assert_close(out, reference_attention(q, k, v, causal=True))
    attention(q.requires_grad_(), k, v, causal=True, backend="triton")  # needs grad: fused kernel
    assert len(calls) == 1


# torch backend: the same awkward cases, in fp32 and fp64, on CPU
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize(
    "batch,heads,n_q,n_k,d,causal,padded,scale",
    [
        (2, 2, 7, 7, 8, False, False, None),
        (2, 1, 5, 11, 16, True, True, 1.0),
        (2, 3, 11, 5, 16, True, False, None),
        (2, 1, 9, 13, 4, False, True, 0.5),
    ],
)
def test_torch_backend_matches_reference(batch, heads, n_q, n_k, d, causal, padded, scale, dtype):
    q, k, v = make_inputs(batch, heads, n_q, n_k, d, dtype, "cpu")
    mask = padding_mask(batch, n_k, "cpu") if padded else None
    assert_matches_reference(
        q, k, v, causal=causal, scale=scale, key_padding_mask=mask, backend="torch"
    )


def test_auto_backend_uses_torch_on_cpu():
    q, k, v = make_inputs(2, 2, 6, 9, 8, torch.float32, "cpu")
    mask = padding_mask(2, 9, "cpu")
    auto = attention(q, k, v, causal=True, key_padding_mask=mask)
    torch_out = attention(q, k, v, causal=True, key_padding_mask=mask, backend="torch")
    assert torch.equal(auto, torch_out)


def test_reference_gradcheck_float64():
    q, k, v = make_inputs(2, 1, 4, 6, 3, torch.float64, "cpu")
    mask = torch.tensor([[False] * 5 + [True], [False] * 6])
    inputs = tuple(t.requires_grad_() for t in (q, k, v))

    def f(q, k, v):
        return reference_attention(q, k, v, causal=True, scale=1.0, key_padding_mask=mask)

    assert torch.autograd.gradcheck(f, inputs)


def test_reference_weights_are_a_softmax_with_masked_cells_zero():
    q, k, v = make_inputs(2, 1, 5, 7, 4, torch.float64, "cpu")
    mask = padding_mask(2, 7, "cpu")
    out, weights = reference_attention(
        q, k, v, causal=True, key_padding_mask=mask, return_weights=True
    )
    torch.testing.assert_close(weights[0].sum(-1), torch.ones(1, 5, dtype=torch.float64))
    assert torch.all(weights[0, ..., 5:] == 0) and torch.all(weights[1] == 0)
    assert torch.all(weights[0, 0, 0, 4:] == 0)  # causal, aligned to the end: query 0 sits at key 2
    torch.testing.assert_close(out, weights @ v)


def test_unknown_backend_is_a_clear_error():
    q, k, v = make_inputs(1, 1, 2, 2, 4, torch.float32, "cpu")
    with pytest.raises(ValueError, match="unknown attention backend 'cuda'.*triton"):
        attention(q, k, v, backend="cuda")
    assert set(BACKENDS) == {"auto", "reference", "torch", "triton"}


@pytest.mark.parametrize(
    "shapes,match",
    [
        (((1, 1, 2, 4), (1, 1, 3, 4), (1, 1, 2, 4)), "k and v share Nk"),
        (((1, 1, 2, 4), (1, 1, 3, 5), (1, 1, 3, 4)), "q and k share d"),
        (((2, 4), (2, 4), (2, 4)), "q \\(B,H,Nq,d\\)"),
    ],
)
def test_bad_shapes_are_clear_errors(shapes, match):
    q, k, v = (torch.zeros(s) for s in shapes)
    with pytest.raises(ValueError, match=match):
        attention(q, k, v, backend="reference")


@pytest.mark.parametrize(
    "backend", ["reference", "torch", pytest.param("triton", marks=needs_triton)]
)
def test_autocast_brings_mixed_dtypes_to_its_dtype(backend):
    """A GRU's fp16 (cuDNN) or fp32 outputs beside a Linear's bf16 query, as training on a GPU
    meets them: under autocast every backend computes in the autocast dtype; outside, an error."""
    device = TRITON_DEVICE if backend == "triton" else "cpu"
    q, k, v = make_inputs(2, 1, 5, 9, 16, torch.float32, device)
    mixed = (q.bfloat16(), k.half(), v)
    with pytest.raises(ValueError, match="differ in dtype"):
        attention(*mixed, backend=backend)
    with torch.autocast(device, dtype=torch.bfloat16):
        out = attention(*mixed, key_padding_mask=padding_mask(2, 9, device), backend=backend)
    assert out.dtype == torch.bfloat16
    expected = reference_attention(
        *(t.bfloat16().float() for t in mixed), key_padding_mask=padding_mask(2, 9, device)
    )
    assert max_error([out], [expected]) < 2e-2


def test_bad_padding_mask_is_a_clear_error():
    q, k, v = make_inputs(2, 1, 3, 5, 4, torch.float32, "cpu")
    with pytest.raises(ValueError, match="key_padding_mask must be bool"):
        attention(q, k, v, key_padding_mask=torch.zeros(2, 4, dtype=torch.bool))


@needs_triton
def test_atomic_and_deterministic_backward_agree():
    from softlookup.kernels.triton.flash import flash_attention

    q, k, v = make_inputs(1, 2, 37, 29, 32, torch.float32, TRITON_DEVICE)
    grad_out = torch.randn(q.shape, generator=torch.Generator().manual_seed(2)).to(TRITON_DEVICE)
    grads = []
    for deterministic in (True, False):
        leaves = [t.detach().requires_grad_() for t in (q, k, v)]
        out = flash_attention(*leaves, causal=True, deterministic=deterministic)
        grads.append(torch.autograd.grad(out, leaves, grad_out))
    for a, b in zip(*grads, strict=True):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-4)


@needs_triton
def test_wide_offsets_give_the_same_result(monkeypatch):
    """The 64-bit in-head offsets (used when N x stride >= 2^31), forced on a small problem."""
    from softlookup.kernels.triton import flash

    monkeypatch.setattr(flash, "INT32_LIMIT", 1)
    q, k, v = make_inputs(2, 1, 21, 35, 16, torch.float32, TRITON_DEVICE)
    assert flash.needs_wide_offsets(q)
    assert_matches_reference(q, k, v, causal=True, backend="triton")


def test_wide_offsets_are_chosen_past_int32():
    from softlookup.kernels.triton.flash import needs_wide_offsets

    small = torch.empty(1, 1, 4096, 128, device="meta")
    huge_stride = torch.empty_strided((1, 1, 2**17, 128), (0, 0, 2**14, 1), device="meta")
    assert not needs_wide_offsets(small)
    assert needs_wide_offsets(huge_stride)  # 2^17 rows x 2^14 elements = 2^31


@needs_triton
@pytest.mark.parametrize("num_splits", [1, 2])
def test_decode_single_query_and_value_dim(num_splits):
    """One new query (no causal mask needed), dv < d, bf16 output, written without a copy."""
    from softlookup.kernels.triton.decode import decode_attention

    q, k, v = make_inputs(2, 2, 1, 45, 32, torch.float16, TRITON_DEVICE)
    v = v[..., :20]
    mask = padding_mask(2, 45, TRITON_DEVICE)
    got = decode_attention(q, k, v, causal=True, key_padding_mask=mask, num_splits=num_splits)
    assert got.dtype == torch.float16 and got.shape == (2, 2, 1, 20)
    expected = reference_attention(
        q.float(), k.float(), v.float(), causal=True, key_padding_mask=mask
    )
    plain = reference_attention(q, k, v, causal=True, key_padding_mask=mask)
    assert max_error([got], [expected]) <= 2 * max_error([plain], [expected]) + 1e-3
    assert torch.all(got[1] == 0)  # every key padded


@needs_triton
def test_bf16_casts_round_to_nearest_even_like_the_gpu():
    """The interpreter truncates fp32 -> bf16; the kernels' `_cast` rounds to nearest even."""
    import triton
    import triton.language as tl

    @triton.jit
    def cast_kernel(X, Y, N: tl.constexpr):
        offsets = tl.arange(0, N)
        tl.store(Y + offsets, triton_kernels._cast(tl.load(X + offsets), tl.bfloat16))

    x = torch.randn(4096, generator=torch.Generator().manual_seed(0)).to(TRITON_DEVICE)
    y = torch.empty(4096, dtype=torch.bfloat16, device=TRITON_DEVICE)
    cast_kernel[(1,)](x, y, N=4096)
    assert torch.equal(y, x.to(torch.bfloat16))


@needs_triton
@pytest.mark.parametrize("causal", [False, True])
def test_causal_query_blocks_run_longest_first(causal):
    """Program i of the query-block kernels (attn_fwd, attn_bwd_dq) takes query block i, or, causal,
    block n - 1 - i: the blocks that read the most keys start first."""
    import triton
    import triton.language as tl

    @triton.jit
    def starts_kernel(OUT, BLOCK_M: tl.constexpr, CAUSAL: tl.constexpr):
        tl.store(OUT + tl.program_id(0), triton_kernels._query_block_start(BLOCK_M, CAUSAL))

    starts = torch.empty(5, dtype=torch.int32, device=TRITON_DEVICE)
    starts_kernel[(5,)](starts, BLOCK_M=16, CAUSAL=causal)
    expected = [64, 48, 32, 16, 0] if causal else [0, 16, 32, 48, 64]
    assert starts.tolist() == expected


@needs_triton
def test_autotune_key_includes_the_grid(monkeypatch):
    """Each autotuned kernel's key, computed as Triton's Autotuner.run computes it, differs between
    calls that differ only in batch x heads (the grid), and only there: a one-head gradient check
    does not pick the tiles that a many-head benchmark row then times."""
    from softlookup.kernels.triton import tiles

    tuners = {
        "fwd": tiles.attn_fwd_tuned,
        "dkdv": tiles.attn_bwd_dkdv_tuned,
        "dq": tiles.attn_bwd_dq_tuned,
    }
    keys = {name: [] for name in tuners}
    for name, tuner in tuners.items():

        def recording_run(*args, _tuner=tuner, _name=name, _run=tuner.run, **kwargs):
            named = {**dict(zip(_tuner.arg_names, args, strict=False)), **kwargs}
            keys[_name].append({key: named[key] for key in _tuner.keys})
            return _run(*args, **kwargs)

        monkeypatch.setattr(tuner, "run", recording_run)
    for batch, heads in ((1, 1), (1, 4), (2, 2)):  # B x H = 1, 4, 4
        q, k, v = make_inputs(batch, heads, 33, 33, 16, torch.float32, TRITON_DEVICE)
        forward_and_grads(q, k, v, torch.ones_like(q), causal=True, backend="triton")
    for name, (one_head, four_heads, two_by_two) in ((n, keys[n]) for n in tuners):
        assert {k for k in one_head if one_head[k] != four_heads[k]} == {"TUNE_BH"}, name
        assert four_heads == two_by_two, name  # B x H, not B or H alone
