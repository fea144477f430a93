"""Launch configurations for the kernels in `flash_kernels.py`.

On a GPU the forward and backward kernels are autotuned over a few tile shapes, keyed by power-of-2
buckets of Nq and Nk (so varying sequence lengths do not retune every batch), the head dim, causal,
padding and dtype. `SOFTLOOKUP_AUTOTUNE=0` skips the search and takes the first tile shape that fits
in shared memory (used by the GPU parity tests to save compile time). Under TRITON_INTERPRET=1 (CPU)
every kernel runs with 16 x 16 tiles, small enough that test shapes span several blocks.
"""

from __future__ import annotations

import os

import triton

from .flash_kernels import attn_bwd_dkdv, attn_bwd_dq, attn_fwd

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"
AUTOTUNE = os.environ.get("SOFTLOOKUP_AUTOTUNE", "1") != "0"
SHARED_MEMORY_BUDGET = 160 * 1024  # bytes; below the 227 KiB of an H100/H200 SM, a safe estimate
INTERPRETER_BLOCK = 16

# (BLOCK_M, BLOCK_N, num_warps, num_stages); BLOCK_M counts queries, BLOCK_N keys. The last entry of
# each list is small enough to fit for every supported head dim and dtype.
FWD_TILES = [(128, 64, 4, 3), (128, 64, 8, 3), (128, 128, 8, 3), (64, 64, 4, 3), (32, 32, 4, 1)]
DKDV_TILES = [(32, 128, 4, 3), (64, 128, 8, 3), (32, 64, 4, 3), (32, 32, 4, 1)]
DQ_TILES = [(128, 32, 4, 3), (128, 64, 8, 3), (64, 64, 4, 3), (32, 32, 4, 1)]
TUNE_KEY = ["TUNE_N_Q", "TUNE_N_K", "HEAD_DIM", "CAUSAL", "HAS_PAD"]

# the decode path splits the keys itself, so it launches `attn_fwd` with one fixed tile
DECODE_BLOCK_M = INTERPRETER_BLOCK  # a few new queries; tl.dot needs at least 16 rows
DECODE_BLOCK_N = INTERPRETER_BLOCK if INTERPRETING else 64
DECODE_NUM_WARPS = 4


def _configs(tiles: list[tuple[int, int, int, int]]) -> list[triton.Config]:
    if INTERPRETING:
        tiles = [(INTERPRETER_BLOCK, INTERPRETER_BLOCK, 1, 1)]
    return [
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=warps, num_stages=stages)
        for m, n, warps, stages in tiles
    ]


def _shared_memory_bytes(config: triton.Config, head_dim: int, element_size: int) -> int:
    """Rough upper estimate: the resident tile plus two pipelined tiles per stage."""
    resident = max(config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"])
    streamed = min(config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"])
    return (resident + 2 * streamed * config.num_stages) * head_dim * element_size


def _fitting_configs(configs, named_args, **kwargs) -> list[triton.Config]:
    """Autotuner pre-filter: drop tiles that cannot fit; keep only the first without autotuning."""
    element_size = named_args["Q"].element_size()
    fitting = [
        c
        for c in configs
        if _shared_memory_bytes(c, kwargs["HEAD_DIM"], element_size) <= SHARED_MEMORY_BUDGET
    ] or configs[-1:]
    return fitting if AUTOTUNE else fitting[:1]


def _tuned(kernel, tiles):
    return triton.autotune(
        configs=_configs(tiles),
        key=TUNE_KEY,
        prune_configs_by={"early_config_prune": _fitting_configs},
    )(kernel)


attn_fwd_tuned = _tuned(attn_fwd, FWD_TILES)
attn_bwd_dkdv_tuned = _tuned(attn_bwd_dkdv, DKDV_TILES)
attn_bwd_dq_tuned = _tuned(attn_bwd_dq, DQ_TILES)
