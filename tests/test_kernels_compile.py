"""The Triton kernels as the GPU sees them, checked without a GPU.

The CPU interpreter accepts code the compiler rejects, so these tests compile the kernels ahead of
time for an H100/H200 (sm_90, with the ptxas that ships in the Triton wheel) at the tiles a GPU run
uses, and check which tiles each input class gets. They run in a subprocess with
TRITON_INTERPRET=0, because Triton fixes interpreter-or-compiler when a kernel is defined.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[1] / "src")

COMPILE_SCRIPT = r"""
import json, sys
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from softlookup.kernels import flash_kernels

POINTERS = {"Q", "K", "V", "OUT", "DO", "DK", "DV", "DQ"}
STATS = {"LSE", "DELTA"}

def signature(fn, dtype, constexprs):
    types = {}
    for name in fn.arg_names:
        if name in constexprs:
            types[name] = "constexpr"
        elif name in POINTERS:
            types[name] = "*" + dtype
        elif name in STATS:
            types[name] = "*fp32"
        elif name == "PAD":
            types[name] = "*i8"
        else:
            types[name] = "fp32" if "scale" in name else "i32"
    return types

results = []
for kernel, tiles, dtype, head_dim in json.loads(sys.argv[1]):
    fn = getattr(flash_kernels, kernel)
    block_m, block_n, warps, stages = tiles
    constexprs = {"HEAD_DIM": head_dim, "CAUSAL": True, "HAS_PAD": True,
                  "PRECISION": "ieee" if dtype == "fp32" else "tf32",
                  "BLOCK_M": block_m, "BLOCK_N": block_n}
    constexprs = {k: v for k, v in constexprs.items() if k in fn.arg_names}
    compiled = triton.compile(
        ASTSource(fn, signature(fn, dtype, constexprs), constexprs=constexprs),
        target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages},
    )
    results.append({"kernel": kernel, "shared": compiled.metadata.shared})
print(json.dumps(results))
"""

PRUNE_SCRIPT = r"""
import json
import torch
from softlookup.kernels import flash_configs as fc

chosen = {}
for name, kernel in (("fwd", fc.attn_fwd_tuned), ("dkdv", fc.attn_bwd_dkdv_tuned),
                     ("dq", fc.attn_bwd_dq_tuned)):
    for dtype, head_dim in ((torch.bfloat16, 64), (torch.float16, 256), (torch.float32, 128)):
        q = torch.empty(1, dtype=dtype)
        configs = kernel.early_config_prune(kernel.configs, {"Q": q}, HEAD_DIM=head_dim)
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
    from softlookup.kernels.flash_configs import DKDV_TILES, DQ_TILES, FWD_TILES

    chosen = run_uninterpreted(PRUNE_SCRIPT, SOFTLOOKUP_AUTOTUNE=autotune)
    for name, tiles in (("fwd", FWD_TILES), ("dkdv", DKDV_TILES), ("dq", DQ_TILES)):
        for dtype, head_dim, cls in (
            ("torch.bfloat16", 64, "16bit"), ("torch.float16", 256, "16bit_d256"),
            ("torch.float32", 128, "fp32"),
        ):  # fmt: skip
            expected = tiles[cls] if autotune == "1" else tiles[cls][:1]
            assert chosen[f"{name} {dtype} {head_dim}"] == [list(t) for t in expected]


def test_kernels_compile_for_sm90_at_the_default_tiles():
    pytest.importorskip("triton.backends.nvidia")
    from softlookup.kernels.flash_configs import DECODE_TILES, DKDV_TILES, DQ_TILES, FWD_TILES

    jobs = [
        ["attn_fwd", FWD_TILES["16bit"][0], "bf16", 128],
        ["attn_bwd_dkdv", DKDV_TILES["16bit"][0], "bf16", 128],
        ["attn_bwd_dq", DQ_TILES["16bit"][0], "bf16", 128],
        ["attn_bwd_delta", [16, 16, 4, 1], "bf16", 128],
        ["attn_fwd", DECODE_TILES["16bit"], "fp16", 64],
        ["attn_fwd", FWD_TILES["fp32"][0], "fp32", 64],
    ]
    compiled = run_uninterpreted(COMPILE_SCRIPT, json.dumps(jobs))
    limit = 227 * 1024  # shared memory per block on an H100/H200
    assert [c["kernel"] for c in compiled] == [job[0] for job in jobs]
    assert all(0 < c["shared"] <= limit for c in compiled)
