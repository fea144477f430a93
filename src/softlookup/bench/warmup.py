"""Compile (and autotune) our kernels for each (head dim, causal, pass) before the benchmark.

    python -m softlookup.bench.warmup --device cuda --head-dims 128 64 --causal 1 0

starts one process per (head dim, causal, kind) at once, so that the Triton compiles run in
parallel on the CPU cores and land in Triton's on-disk cache, where the benchmark process finds
them (`scripts/gpu_check.sh` runs it first). The inputs are built as the benchmark builds them (same model width,
tokens per batch, dtype and layout), so the integer arguments Triton specialises on (divisibility
by 16) match: the cached kernels are the ones the benchmark launches. `forward` runs the forward
kernel; `backward` and `backward_atomic` run only the backward kernels (deterministic, and with
dQ by atomics), from a stand-in output and log-sum-exp.
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import sys
import time

import torch

KINDS = ("forward", "backward", "backward_atomic")


def warm(device: torch.device, head_dim: int, causal: bool, kind: str, args) -> None:
    """Launch the kernels of one kind once, on inputs built as the benchmark builds them."""
    from ..kernels.triton.flash import launch_backward, launch_forward, no_padding

    dtype = getattr(torch, args.dtype)
    shape = (
        max(1, args.tokens // args.seq_len),
        args.model_dim // head_dim,
        args.seq_len,
        head_dim,
    )
    q, k, v, out, grad_out = (torch.randn(shape, device=device, dtype=dtype) for _ in range(5))
    pad = no_padding(device)
    options = {"causal": causal, "scale": head_dim**-0.5, "has_pad": False}
    if kind == "forward":
        launch_forward(q, k, v, pad, **options)
    else:
        lse2 = torch.zeros(shape[0] * shape[1], shape[2], device=device, dtype=torch.float32)
        deterministic = kind == "backward"
        launch_backward(grad_out, q, k, v, out, lse2, pad, deterministic=deterministic, **options)
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m softlookup.bench.warmup", description=__doc__)
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    p.add_argument("--head-dims", type=int, nargs="+", required=True)
    p.add_argument("--causal", type=int, nargs="+", choices=(0, 1), default=[1, 0])
    p.add_argument("--kinds", nargs="+", choices=KINDS, default=list(KINDS))
    p.add_argument("--seq-len", type=int, default=1024)
    p.add_argument("--tokens", type=int, default=16384)
    p.add_argument("--model-dim", type=int, default=2048)
    p.add_argument("--dtype", default="bfloat16")
    args = p.parse_args(argv)
    jobs = list(itertools.product(args.head_dims, args.causal, args.kinds))
    if len(jobs) == 1:
        started = time.perf_counter()
        head_dim, causal, kind = jobs[0]
        warm(torch.device(args.device), head_dim, bool(causal), kind, args)
        print(
            f"warm-up d={head_dim} causal={causal} {kind}: {time.perf_counter() - started:.1f} s",
            flush=True,
        )
        return
    common = [
        "--device",
        args.device,
        "--seq-len",
        str(args.seq_len),
        "--tokens",
        str(args.tokens),
        "--model-dim",
        str(args.model_dim),
        "--dtype",
        args.dtype,
    ]
    module = [sys.executable, "-m", "softlookup.bench.warmup", *common]
    processes = [
        subprocess.Popen([*module, "--head-dims", str(d), "--causal", str(c), "--kinds", kind])
        for d, c, kind in jobs
    ]
    failed = [
        " ".join(map(str, job))
        for job, proc in zip(jobs, processes, strict=True)
        if proc.wait() != 0
    ]
    if failed:
        sys.exit(f"warm-up failed for (head dim, causal, kind): {', '.join(failed)}")


if __name__ == "__main__":
    main()
