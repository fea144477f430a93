"""Launch configurations for the kernels in `kernels.py`.

Tiles depend on the input class: 16-bit inputs with d <= 64 and with d = 128 (the fast path,
autotuned over block sizes, warps 4/8 and 2-4 pipeline stages, as the Triton tutorial does), 16-bit
with d = 256 (smaller query tiles, so the fp32 accumulators fit in registers), and fp32 (IEEE
products run on FMA units, not tensor cores: small tiles, which also keep the compile short). The
dK/dV kernel with dQ by atomics (the five-product backward) holds one more tile of products and has
its own lists: at d <= 64 up to 64 queries x 128 keys, at d = 128 64 x 32 or 32 x 128 (the
larger tiles spill; the list's comment gives the measured bytes). Every tile listed compiles for
sm_90 without register spills and within the 227 KiB of shared memory of an H100/H200:
`python -m softlookup.bench.ptxas` measures them (registers, spills, shared memory; the table is
in benchmarks/README.md, the CSV in benchmarks/ptxas_sm90.csv, and tests/test_kernels_compile.py
checks that it covers these lists and shows no spill).

Autotuning is keyed by what changes the best tile: power-of-2 buckets of Nq, Nk and of B*H, the
grid's second dimension (varying sequence lengths and batch sizes do not retune every batch; a
one-head call does not pick the tiles of a sixteen-head one), the head dim, causal, padding, dtype
and, for dK/dV, the atomic-dQ flag.
`SOFTLOOKUP_AUTOTUNE=0` skips the search and takes the first tile of the class (the GPU parity
tests use it to save compile time). Under TRITON_INTERPRET=1 (CPU) every kernel runs with 16 x 16
tiles, small enough that test shapes span several blocks.
"""

from __future__ import annotations

import os

import triton

from .kernels import attn_bwd_dkdv, attn_bwd_dq, attn_fwd

INTERPRETING = os.environ.get("TRITON_INTERPRET", "0") == "1"
AUTOTUNE = os.environ.get("SOFTLOOKUP_AUTOTUNE", "1") != "0"
INTERPRETER_BLOCK = 16

Tile = tuple[int, int, int, int]
# (BLOCK_M, BLOCK_N, num_warps, num_stages) per input class; BLOCK_M counts queries, BLOCK_N keys;
# the first tile of a class is the one used without autotuning
# fmt: off
FWD_TILES: dict[str, list[Tile]] = {
    "16bit_d64": [(128, 64, 8, 3), (128, 64, 8, 2), (128, 64, 8, 4), (128, 128, 8, 3),
                  (128, 32, 4, 3), (64, 64, 4, 3), (64, 64, 4, 4), (64, 128, 8, 3)],
    "16bit_d128": [(128, 64, 8, 3), (128, 64, 8, 2), (128, 64, 8, 4), (128, 128, 8, 2),
                   (64, 64, 4, 3), (64, 64, 4, 4), (64, 32, 4, 3)],
    "16bit_d256": [(64, 32, 4, 2), (64, 32, 8, 2), (32, 64, 4, 2)],
    "fp32": [(16, 16, 4, 1)],
}
DKDV_TILES: dict[str, list[Tile]] = {
    "16bit_d64": [(64, 64, 4, 3), (32, 64, 4, 3), (32, 64, 4, 4), (64, 128, 8, 3),
                  (64, 64, 8, 3), (32, 128, 8, 3), (16, 64, 4, 3), (64, 128, 8, 2)],
    "16bit_d128": [(32, 64, 8, 3), (32, 64, 4, 3), (32, 64, 4, 4), (64, 64, 8, 3),
                   (32, 128, 8, 3), (16, 64, 4, 3)],
    "16bit_d256": [(32, 32, 8, 2)],
    "fp32": [(16, 16, 4, 1)],
}
# Five-product dK/dV: the tiles of 64-128 rows that compile without a spill (Triton 3.9 and 3.6).
# Left out, spill stores measured for sm_90a under Triton 3.9 (BLOCK_M queries, BLOCK_N keys):
# d64 (128, 64, 8, 3) 188 B, (128, 64, 8, 2) 268 B, (128, 128, 8, 2/3) 820/796 B;
# d128 (64, 64, 8, 3) 116 B, (64, 64, 8, 2) 144 B, (64, 128, 8, 3) 300 B, (64, 128, 8, 2) 476 B,
# (128, 32, 8, 2) 24 B, (128, 64, 8, 2/3) 1436/1396 B, (128, 128, 8, 2) 1576 B (the last three
# also need 225-290 KiB of shared memory). So at d128, 64 query rows fit only with 32 keys and
# 128 keys only with 32 queries. d64 (128, 32, 8, 2/3) fits (179/176 registers) but holds 32 keys
# per program, four times the dQ atomics of a 128-key block: not added.
DKDV_ATOMIC_TILES: dict[str, list[Tile]] = {
    "16bit_d64": [(64, 64, 8, 3), (32, 64, 8, 3), (32, 128, 8, 3), (16, 128, 8, 3),
                  (32, 64, 4, 2), (64, 128, 8, 3), (32, 64, 4, 3), (64, 128, 8, 2),
                  (64, 64, 8, 2)],
    "16bit_d128": [(32, 64, 8, 3), (16, 64, 4, 3), (32, 128, 8, 3), (16, 128, 8, 3),
                   (32, 128, 8, 2), (64, 32, 8, 3), (64, 32, 8, 2)],
    "16bit_d256": [(32, 32, 8, 2)],
    "fp32": [(16, 16, 4, 1)],
}
DQ_TILES: dict[str, list[Tile]] = {
    "16bit_d64": [(128, 64, 8, 3), (128, 64, 8, 2), (128, 64, 8, 4), (128, 32, 4, 3),
                  (64, 64, 4, 3), (64, 64, 4, 4), (128, 32, 8, 3), (64, 128, 8, 3)],
    "16bit_d128": [(128, 64, 8, 3), (128, 64, 8, 2), (128, 64, 8, 4), (64, 64, 4, 3),
                   (64, 64, 4, 2), (64, 64, 4, 4), (64, 32, 4, 3), (128, 32, 8, 3)],
    "16bit_d256": [(64, 32, 4, 2), (64, 32, 8, 2), (32, 32, 4, 2)],
    "fp32": [(32, 32, 8, 1), (16, 16, 4, 1)],
}
# fmt: on
# the decode path splits the keys itself and launches `attn_fwd` with one fixed tile per class;
# a few new queries need few rows, but tl.dot needs at least 16
DECODE_TILES: dict[str, Tile] = {
    "16bit_d64": (16, 64, 4, 2),
    "16bit_d128": (16, 64, 4, 2),
    "16bit_d256": (16, 32, 4, 2),
    "fp32": (16, 16, 4, 1),
}
TUNE_KEY = ["TUNE_N_Q", "TUNE_N_K", "TUNE_BH", "HEAD_DIM", "CAUSAL", "HAS_PAD"]


def tuning_buckets(batch_heads: int, n_queries: int, n_keys: int) -> tuple[int, int, int]:
    """TUNE_N_Q, TUNE_N_K, TUNE_BH: the launch integers that key the autotuner (powers of 2)."""
    return tuple(triton.next_power_of_2(n) for n in (n_queries, n_keys, batch_heads))


def input_class(element_size: int, head_dim: int) -> str:
    """The tile class of inputs of this element size (bytes) and tile head dim."""
    if element_size == 4:
        return "fp32"
    return "16bit_d64" if head_dim <= 64 else "16bit_d128" if head_dim <= 128 else "16bit_d256"


def decode_tile(element_size: int, head_dim: int) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, num_warps, num_stages) for the decode launch."""
    if INTERPRETING:
        return (INTERPRETER_BLOCK, INTERPRETER_BLOCK, 1, 1)
    return DECODE_TILES[input_class(element_size, head_dim)]


def as_tile(config: triton.Config) -> tuple[int, int, int, int]:
    return (config.kwargs["BLOCK_M"], config.kwargs["BLOCK_N"], config.num_warps, config.num_stages)


def _tuned(kernel, tiles_by_class: dict[str, list[Tile]], key=TUNE_KEY, atomic_tiles=None):
    """`kernel` autotuned over the tiles of the input class of each call (`atomic_tiles`: those
    of calls with ATOMIC_DQ)."""
    every = [tiles_by_class, *([atomic_tiles] if atomic_tiles else [])]
    if INTERPRETING:
        tiles = [(INTERPRETER_BLOCK, INTERPRETER_BLOCK, 1, 1)]
    else:
        tiles = list(dict.fromkeys(t for lists in every for ts in lists.values() for t in ts))
    configs = [
        triton.Config({"BLOCK_M": m, "BLOCK_N": n}, num_warps=warps, num_stages=stages)
        for m, n, warps, stages in tiles
    ]

    def tiles_of_the_class(configs, named_args, **kwargs):
        by_class = atomic_tiles if kwargs.get("ATOMIC_DQ") else tiles_by_class
        wanted = by_class[input_class(named_args["Q"].element_size(), kwargs["HEAD_DIM"])]
        chosen = sorted(
            (c for c in configs if as_tile(c) in wanted), key=lambda c: wanted.index(as_tile(c))
        )
        return chosen if AUTOTUNE else chosen[:1]

    # the atomic dK/dV kernel adds into DQ_ACC: the timing runs must leave it as it was (zeros)
    restore = ["DQ_ACC"] if atomic_tiles else None
    return triton.autotune(
        configs=configs,
        key=key,
        prune_configs_by={"early_config_prune": tiles_of_the_class},
        reset_to_zero=restore,
        restore_value=restore,
    )(kernel)


attn_fwd_tuned = _tuned(attn_fwd, FWD_TILES)
attn_bwd_dkdv_tuned = _tuned(
    attn_bwd_dkdv, DKDV_TILES, [*TUNE_KEY, "ATOMIC_DQ"], atomic_tiles=DKDV_ATOMIC_TILES
)
attn_bwd_dq_tuned = _tuned(attn_bwd_dq, DQ_TILES)
AUTOTUNED = {"fwd": attn_fwd_tuned, "dkdv": attn_bwd_dkdv_tuned, "dq": attn_bwd_dq_tuned}


def last_tiles(names: tuple[str, ...]) -> str:
    """The tile of the last launch of each named autotuned kernel (keys of AUTOTUNED), e.g.
    "fwd 128x64 w8 s3; dq 64x64 w4 s3" (BLOCK_M x BLOCK_N, warps, stages)."""
    tiles = {name: as_tile(AUTOTUNED[name].best_config) for name in names}
    return "; ".join(f"{name} {m}x{n} w{w} s{s}" for name, (m, n, w, s) in tiles.items())
