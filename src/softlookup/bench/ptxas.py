"""Registers, spills and shared memory of our kernels as ptxas builds them for sm_90 (H100/H200).

    TRITON_INTERPRET=0 python -m softlookup.bench.ptxas --out benchmarks/ptxas_sm90.csv

No GPU needed: each kernel is compiled ahead of time by Triton for the target sm_90a at every tile
its autotuning may pick (tiles.py), with the integer arguments specialised as a benchmark launch
specialises them (strides of the last dim = 1, the other integers divisible by 16), causal masking
and key padding on (the most code); the PTX is then assembled by the ptxas Triton itself runs,
whose `-v` report gives registers per thread and spill bytes; shared memory is Triton's own count.
A spill (local-memory stores and loads) in a hot loop costs a large share of the throughput.
Prints a Markdown table (benchmarks/README.md keeps one). The CSV names the Triton version: the
CPU environment has 3.9 (benchmarks/ptxas_sm90.csv), the device image 3.6 (run with that Triton
first on PYTHONPATH: benchmarks/ptxas_sm90_triton3.6.csv).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import subprocess
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

COLUMNS = [
    "triton",
    "kernel",
    "atomic_dq",
    "input_class",
    "dtype",
    "head_dim",
    "block_m",
    "block_n",
    "warps",
    "stages",
    "registers",
    "spill_stores",
    "spill_loads",
    "shared_bytes",
]
POINTERS = {"Q", "K", "V", "OUT", "DO", "DK", "DV", "DQ"}
FP32_POINTERS = {"LSE", "DELTA", "DQ_ACC", "PARTS"}
UNIT_STRIDES = {
    "stride_qd",
    "stride_kd",
    "stride_vd",
    "stride_od",
    "stride_dod",
    "stride_gd",
    "stride_ad",
    "stride_pn",
}
# (input class, dtype, head dims measured): the largest head dim of each class; fp32 covers all
CLASSES = [
    ("16bit_d64", "bf16", (64,)),
    ("16bit_d128", "bf16", (128,)),
    ("16bit_d256", "bf16", (256,)),
    ("fp32", "fp32", (64, 128, 256)),
]


def jobs() -> list[dict]:
    """Every (kernel, class, head dim, tile) autotuning or the decode path may launch."""
    from ..kernels.triton.tiles import (
        DECODE_TILES,
        DKDV_ATOMIC_TILES,
        DKDV_TILES,
        DQ_TILES,
        FWD_TILES,
    )

    decode = {cls: [tile] for cls, tile in DECODE_TILES.items()}
    found = []
    for kernel, tiles, atomic in (
        ("attn_fwd", FWD_TILES, False),
        ("attn_bwd_dkdv", DKDV_TILES, False),
        ("attn_bwd_dkdv", DKDV_ATOMIC_TILES, True),
        ("attn_bwd_dq", DQ_TILES, False),
        ("attn_fwd", decode, False),
    ):
        for cls, dtype, head_dims in CLASSES:
            for head_dim in head_dims:
                for block_m, block_n, warps, stages in tiles[cls]:
                    found.append(
                        {
                            "kernel": kernel,
                            "atomic_dq": atomic,
                            "input_class": cls,
                            "dtype": dtype,
                            "head_dim": head_dim,
                            "block_m": block_m,
                            "block_n": block_n,
                            "warps": warps,
                            "stages": stages,
                        }
                    )
    return list({tuple(job.values()): job for job in found}.values())  # decode tile may repeat


def compile_one(job: dict) -> dict:
    """Compile one job for sm_90a and read ptxas's resource report."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from ..kernels.triton import kernels

    fn = getattr(kernels, job["kernel"])
    constexprs = {
        "HEAD_DIM": job["head_dim"],
        "CAUSAL": True,
        "HAS_PAD": True,
        "WIDE": False,
        "PRECISION": "ieee" if job["dtype"] == "fp32" else "tf32",
        "ATOMIC_DQ": job["atomic_dq"],
        "BLOCK_M": job["block_m"],
        "BLOCK_N": job["block_n"],
        "BLOCK_S": 16,
    }
    constexprs.update({name: 1 for name in UNIT_STRIDES})
    constexprs = {k: v for k, v in constexprs.items() if k in fn.arg_names}
    signature, attrs = {}, {}
    for index, name in enumerate(fn.arg_names):
        if name in constexprs:
            signature[name] = "constexpr"
        elif name in POINTERS:
            signature[name] = "*" + job["dtype"]
        elif name in FP32_POINTERS:
            signature[name] = "*fp32"
        elif name == "PAD":
            signature[name] = "*i8"
        else:
            signature[name] = "fp32" if "scale" in name else "i32"
        if signature[name].startswith("*") or signature[name] == "i32":
            attrs[(index,)] = [["tt.divisibility", 16]]
    compiled = triton.compile(
        ASTSource(fn, signature, constexprs=constexprs, attrs=attrs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": job["warps"], "num_stages": job["stages"]},
    )
    from triton.backends.nvidia.compiler import get_ptxas

    ptxas = get_ptxas(90).path  # the ptxas Triton itself runs for sm_90
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "kernel.ptx"
        ptx.write_text(compiled.asm["ptx"])
        report = subprocess.run(
            [
                str(ptxas),
                "-v",
                "--regAllocOptLevel=2",
                "--gpu-name=sm_90a",
                str(ptx),
                "-o",
                str(Path(tmp) / "kernel.o"),
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stderr
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", report)
    return {
        "triton": triton.__version__,
        **job,
        "registers": int(re.search(r"Used (\d+) registers", report).group(1)),
        "spill_stores": int(spills.group(1)) if spills else 0,
        "spill_loads": int(spills.group(2)) if spills else 0,
        "shared_bytes": compiled.metadata.shared,
    }


def markdown(rows: list[dict]) -> str:
    head = [
        "kernel",
        "class",
        "d",
        "tile (M, N, warps, stages)",
        "registers",
        "spills (B)",
        "shared (KiB)",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in rows:
        name = r["kernel"] + (" (atomic dQ)" if r["atomic_dq"] else "")
        tile = f"{r['block_m']}, {r['block_n']}, {r['warps']}, {r['stages']}"
        lines.append(
            f"| {name} | {r['input_class']} | {r['head_dim']} | {tile} | {r['registers']} | "
            f"{r['spill_stores']} | {r['shared_bytes'] / 1024:.0f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m softlookup.bench.ptxas", description=__doc__)
    p.add_argument("--out", type=Path, required=True, help="CSV, one row per compiled tile")
    p.add_argument("--workers", type=int, default=os.cpu_count())
    p.add_argument("--kernels", nargs="+", help="only these kernels (default: all)")
    args = p.parse_args(argv)
    if os.environ.get("TRITON_INTERPRET", "0") != "0":
        sys.exit("set TRITON_INTERPRET=0: the interpreter does not compile")
    todo = [j for j in jobs() if not args.kernels or j["kernel"] in args.kernels]
    with ProcessPoolExecutor(args.workers) as pool:
        rows = list(pool.map(compile_one, todo))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    print(markdown(rows))


if __name__ == "__main__":
    main()
