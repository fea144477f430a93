"""The Triton kernels as the GPU sees them, checked without a GPU.

The CPU interpreter accepts code the compiler rejects, so these tests compile the kernels ahead of
time for an H100/H200 (sm_90, with the ptxas Triton itself runs) and check which tiles each input
class gets. They run in a subprocess with TRITON_INTERPRET=0, because Triton fixes
interpreter-or-compiler when a kernel is defined. Every tile autotuning may pick was measured by
`python -m softlookup.bench.ptxas` into benchmarks/ptxas_sm90.csv (a few minutes on 2 cores);
the tests check that the file covers today's tile lists and shows no spill, and recompile the
default tile of each kernel live.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = str(ROOT / "src")
SHARED_LIMIT = 227 * 1024  # shared memory per block on an H100/H200

COMPILE_SCRIPT = r"""
import json, sys
from softlookup.bench.ptxas import compile_one
print(json.dumps([compile_one(job) for job in json.loads(sys.argv[1])]))
"""

PRUNE_SCRIPT = r"""
import json
import torch
from softlookup.kernels.triton import tiles as fc

chosen = {}
for name, kernel, atomic in (("fwd", fc.attn_fwd_tuned, False), ("dkdv", fc.attn_bwd_dkdv_tuned, False),
                             ("dkdv_atomic", fc.attn_bwd_dkdv_tuned, True),
                             ("dq", fc.attn_bwd_dq_tuned, False)):
    for dtype, head_dim in ((torch.bfloat16, 64), (torch.bfloat16, 128), (torch.float16, 256),
                            (torch.float32, 128)):
        q = torch.empty(1, dtype=dtype)
        configs = kernel.early_config_prune(kernel.configs, {"Q": q}, HEAD_DIM=head_dim,
                                            ATOMIC_DQ=atomic)
        chosen[f"{name} {dtype} {head_dim}"] = [fc.as_tile(c) for c in configs]
print(json.dumps(chosen))
"""


def run_uninterpreted(script: str, *args: str, **env: str) -> object:
    environment = {**os.environ, "TRITON_INTERPRET": "0", "PYTHONPATH": SRC, **env}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("autotune", ["1", "0"])
def test_each_input_class_gets_its_own_tiles(autotune):
    from softlookup.kernels.triton.tiles import DKDV_ATOMIC_TILES, DKDV_TILES, DQ_TILES, FWD_TILES

    chosen = run_uninterpreted(PRUNE_SCRIPT, SOFTLOOKUP_AUTOTUNE=autotune)
    for name, tiles in (
        ("fwd", FWD_TILES),
        ("dkdv", DKDV_TILES),
        ("dkdv_atomic", DKDV_ATOMIC_TILES),
        ("dq", DQ_TILES),
    ):
        for dtype, head_dim, cls in (
            ("torch.bfloat16", 64, "16bit_d64"),
            ("torch.bfloat16", 128, "16bit_d128"),
            ("torch.float16", 256, "16bit_d256"),
            ("torch.float32", 128, "fp32"),
        ):
            expected = tiles[cls] if autotune == "1" else tiles[cls][:1]
            assert chosen[f"{name} {dtype} {head_dim}"] == [list(t) for t in expected]


def test_default_tiles_compile_for_sm90_without_spills():
    pytest.importorskip("triton.backends.nvidia")
    from softlookup.kernels.triton.tiles import (
        DECODE_TILES,
        DKDV_ATOMIC_TILES,
        DKDV_TILES,
        DQ_TILES,
        FWD_TILES,
    )

    def job(kernel, tile, dtype="bf16", head_dim=128, atomic=False):
        return dict(
            zip(
                (
                    "kernel",
                    "atomic_dq",
                    "input_class",
                    "dtype",
                    "head_dim",
                    "block_m",
                    "block_n",
                    "warps",
                    "stages",
                ),
                (kernel, atomic, "", dtype, head_dim, *tile),
                strict=True,
            )
        )

    jobs = [
        job("attn_fwd", FWD_TILES["16bit_d128"][0]),
        job("attn_bwd_dkdv", DKDV_TILES["16bit_d128"][0]),
        job("attn_bwd_dkdv", DKDV_ATOMIC_TILES["16bit_d128"][0], atomic=True),
        job("attn_bwd_dq", DQ_TILES["16bit_d128"][0]),
        job("attn_bwd_delta", (16, 16, 4, 1)),
        job("attn_decode_combine", (16, 16, 4, 1)),
        job("attn_fwd", DECODE_TILES["16bit_d64"], "fp16", 64),
        job("attn_fwd", FWD_TILES["fp32"][0], "fp32", 64),
    ]
    compiled = run_uninterpreted(COMPILE_SCRIPT, json.dumps(jobs))
    assert [c["kernel"] for c in compiled] == [j["kernel"] for j in jobs]
    for row in compiled:
        assert row["spill_stores"] == 0 and row["spill_loads"] == 0, row
        assert 0 <= row["shared_bytes"] <= SHARED_LIMIT, row


def test_measured_table_covers_every_tile_and_shows_no_spill():
    from softlookup.bench.ptxas import COLUMNS, jobs

    table = pd.read_csv(ROOT / "benchmarks" / "ptxas_sm90.csv")
    assert list(table.columns) == COLUMNS
    keys = [
        "kernel",
        "atomic_dq",
        "input_class",
        "dtype",
        "head_dim",
        "block_m",
        "block_n",
        "warps",
        "stages",
    ]
    measured = set(table[keys].itertuples(index=False, name=None))
    wanted = {tuple(job[k] for k in keys) for job in jobs()}
    assert wanted == measured, (
        "benchmarks/ptxas_sm90.csv is stale: TRITON_INTERPRET=0 python -m softlookup.bench.ptxas "
        "--out benchmarks/ptxas_sm90.csv"
    )
    selectable = table[table.input_class != "fp32"]  # the speed path: 16-bit inputs
    assert (selectable.spill_stores == 0).all(), selectable[selectable.spill_stores > 0]
    assert (table.shared_bytes <= SHARED_LIMIT).all()


def test_the_device_triton_version_shows_no_spill_either():
    """The device image has Triton 3.6 (measured with that Triton on PYTHONPATH): today's 16-bit
    tiles among its rows spill nothing there either."""
    from softlookup.bench.ptxas import jobs

    table = pd.read_csv(ROOT / "benchmarks" / "ptxas_sm90_triton3.6.csv")
    assert (table.triton == "3.6.0").all()
    keys = [
        "kernel",
        "atomic_dq",
        "input_class",
        "dtype",
        "head_dim",
        "block_m",
        "block_n",
        "warps",
        "stages",
    ]
    wanted = {tuple(job[k] for k in keys) for job in jobs() if job["input_class"] != "fp32"}
    rows = table[[tuple(r) in wanted for r in table[keys].itertuples(index=False, name=None)]]
    assert len(rows) == len(wanted)
    assert (rows.spill_stores == 0).all(), rows[rows.spill_stores > 0]
