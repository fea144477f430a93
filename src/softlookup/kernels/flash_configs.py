"""Launch configurations for the kernels in `flash_kernels.py`.

Tiles depend on the input class: 16-bit inputs with d <= 128 (the fast path, autotuned over a few
tile shapes), 16-bit with d = 256 (smaller query tiles, so the fp32 accumulator fits in registers),
and fp32 (IEEE products run on FMA units, not tensor cores: small tiles, which also keep the compile
short). Autotuning is keyed by power-of-2 buckets of Nq and Nk (varying sequence lengths do not
retune every batch), the head dim, causal, padding and dtype. `SOFTLOOKUP_AUTOTUNE=0` skips the
search and takes the first tile of the class (the GPU parity tests use it to save compile time).
Under TRITON_INTERPRET=1 (CPU) every kernel runs with 16 x 16 tiles, small enough that test shapes
span several blocks. Shared memory of every tile below was checked by compiling for sm_90: at most
135 KiB (fp32, d = 256, dK/dV), under the 227 KiB of an H100/H200.
"""

from __future__ import annotations

import os

import triton

from .flash_kernels import attn_bwd_dkdv, attn_bwd_dq, attn_fwd

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"
AUTOTUNE = os.environ.get("SOFTLOOKUP_AUTOTUNE", "1") != "0"
INTERPRETER_BLOCK = 16

# (BLOCK_M, BLOCK_N, num_warps, num_stages) per input class; BLOCK_M counts queries, BLOCK_N keys;
# the first tile of a class is the one used without autotuning
FWD_TILES = {
    "16bit": [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3)],
    "16bit_d256": [(64, 64, 4, 2), (64, 32, 4, 2)],
    "fp32": [(32, 32, 4, 1)],
}
DKDV_TILES = {
    "16bit": [(32, 128, 4, 3), (64, 128, 8, 3), (32, 64, 4, 3)],
    "16bit_d256": [(32, 64, 4, 2)],
    "fp32": [(32, 32, 4, 1)],
}
DQ_TILES = {
    "16bit": [(128, 32, 4, 3), (128, 64, 8, 3), (64, 64, 4, 3)],
    "16bit_d256": [(64, 32, 4, 2)],
    "fp32": [(32, 32, 4, 1)],
}
# the decode path splits the keys itself and launches `attn_fwd` with one fixed tile per class;
# a few new queries need few rows, but tl.dot needs at least 16
DECODE_TILES = {"16bit": (16, 64, 4, 2), "16bit_d256": (16, 32, 4, 2), "fp32": (16, 32, 4, 1)}
TUNE_KEY = ["TUNE_N_Q", "TUNE_N_K", "HEAD_DIM", "CAUSAL", "HAS_PAD"]


def input_class(element_size: int, head_dim: int) -> str:
    if element_size == 4:
        return "fp32"
    return "16bit_d256" if head_dim > 128 else "16bit"


def decode_tile(element_size: int, head_dim: int) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps, num_stages) for the decode launch."""
    if INTERPRETING:
        return (INTERPRETER_BLOCK, INTERPRETER_BLOCK, 1, 1)
    return DECODE_TILES[input_class(element_size, head_dim)]


def as_tile(config: triton.Config) -> tuple[int, int, int, int]:
    return (config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"], config.num_warps, config.num_stages)


def _tuned(kernel, tiles_by_class: dict[str, list[tuple[int, int, int, int]]]):
    """`kernel` autotuned over the tiles of the input class of each call."""
    if INTERPRETING:
        tiles = [(INTERPRETER_BLOCK, INTERPRETER_BLOCK, 1, 1)]
    else:
        tiles = list(dict.fromkeys(t for ts in tiles_by_class.values() for t in ts))
    configs = [
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=warps, num_stages=stages)
        for m, n, warps, stages in tiles
    ]

    def tiles_of_the_class(configs, named_args, **kwargs):
        wanted = tiles_by_class[input_class(named_args["Q"].element_size(), kwargs["HEAD_DIM"])]
        chosen = sorted(
            (c for c in configs if as_tile(c) in wanted), key=lambda c: wanted.index(as_tile(c))
        )
        return chosen if AUTOTUNE else chosen[:1]

    return triton.autotune(
        configs=configs, key=TUNE_KEY, prune_configs_by={"early_config_prune": tiles_of_the_class}
    )(kernel)


attn_fwd_tuned = _tuned(attn_fwd, FWD_TILES)
attn_bwd_dkdv_tuned = _tuned(attn_bwd_dkdv, DKDV_TILES)
attn_bwd_dq_tuned = _tuned(attn_bwd_dq, DQ_TILES)
