"""Attention kernel benchmarks: time, throughput, memory and error vs sequence length.

    python -m softlookup.bench.kernels --device cpu --out results/bench/attention_cpu.csv \\
        --decode-out results/bench/decode_cpu.csv --seq-lens 128 256 512 --head-dims 64

Two CSVs, one row per measurement, written as measured, each row starting with the provenance
columns of `softlookup.provenance.environment()` (device, device_name, host, threads, python,
torch, triton, ..., commit, dirty):
- attention (`--out`): for each head dim, sequence length N (Nq = Nk = N; in the order given, so
  the decisive rows can come first), causal or not, backend and pass ("forward", "backward",
  "forward_backward"): our Triton kernel ("triton"; "triton_atomic" with the five-product
  backward), torch's SDPA ("torch_sdpa", its flash kernel forced where torch has one for the
  inputs, else its default choice, named in `kernel`; "torch_cudnn", forced to cuDNN attention)
  and the materialised score table ("naive", the reference backend). Columns: time as a count of
  samples, not a time budget (`--repeats` timed calls after warm-up calls, `timing.time_samples`:
  median `time_ms`, spread `time_p20_ms`-`time_p80_ms`, `samples`), our kernels' autotuned tiles
  in that pass (`tiles`), TFLOP/s (FlashAttention's
  count: 4 B H N^2 d for the forward, halved when causal, x2.5 for the backward, x3.5 for
  forward+backward), peak memory above the inputs (CUDA only; CPU has no allocator statistics),
  also per sequence (the batch is `tokens // N`, so memory against N is read per sequence: linear
  for a fused kernel, quadratic for the materialised table), the bytes autograd saves for the
  backward pass, the forward output's max abs error against the fp32 reference and, with
  `--grad-check`, the max abs error of dQ, dK, dV. Order per setting and backend: the three passes
  are timed first (autotuning picks our tiles there, keyed by the shape and the grid), then the
  errors are checked at the same shape (`correctness`), so the tiles checked are the tiles timed
  and no check runs our kernel on another grid first.
- decode (`--decode-out`): generating `new_tokens` tokens after a prompt, one query per step
  against a KV cache of everything so far ("kv_cache"), vs recomputing causal attention over the
  whole sequence every step and keeping the last row ("recompute"); total time (median of
  `--repeats` samples and its spread), time per token, speed-up, and the max abs difference
  between the two ways' outputs (the cache changes nothing). "torch_sdpa" passes torch's SDPA the
  causal mask its wrapper builds for one query against a longer cache; "torch_sdpa_unmasked" none
  (one query sees every key), torch's best one-query path. `--cuda-graphs` adds the rows of each
  way replayed from one CUDA graph (`cuda_graph` True): the launches out of the timing (CPU: no-op).
On CPU the Triton kernels only run under TRITON_INTERPRET=1, an interpreter far too slow to time:
their rows are written with status "skipped" and the reason, so the file says what was not run,
unless `--interpret` asks for them (tiny shapes; `scripts/gpu_check.sh --dry`).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import os
import traceback
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..kernels import attention, reference_attention
from .timing import (
    MIB,
    PROVENANCE_COLUMNS,
    csv_rows,
    cuda_graph,
    peak_mib,
    provenance,
    time_samples,
)

# benchmark backend -> attention() backend; triton_atomic is our kernel with the five-product
# backward (dQ by atomics), torch_cudnn torch's SDPA forced to cuDNN attention, and
# torch_sdpa_unmasked (decode only) torch's SDPA given one query against the cache without a mask
BACKEND_NAMES = {
    "triton": "triton",
    "triton_atomic": "triton",
    "torch_sdpa": "torch",
    "torch_cudnn": "torch",
    "torch_sdpa_unmasked": "torch",
    "naive": "reference",
}
DEFAULT_BACKENDS = ["naive", "torch_sdpa", "torch_sdpa_unmasked", "triton"]
# the others differ from these only in the backward pass
DECODE_BACKENDS = ("naive", "torch_sdpa", "torch_sdpa_unmasked", "triton")
DECODE_ONLY = ("torch_sdpa_unmasked",)  # as an attention row it would be torch_sdpa again
DEFAULT_SAMPLES = {"cuda": 20, "cpu": 5}  # timed samples per row (median and spread)
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
PASSES = ("forward", "backward", "forward_backward")
FLOPS_PER_FORWARD = {"forward": 1.0, "backward": 2.5, "forward_backward": 3.5}
# our autotuned kernels each pass launches (`tiles.AUTOTUNED`); triton_atomic has no dQ kernel
PASS_KERNELS = {
    "forward": ("fwd",),
    "backward": ("dkdv", "dq"),
    "forward_backward": ("fwd", "dkdv", "dq"),
}


@dataclass(frozen=True)
class Setting:
    """One attention problem: q, k, v of shape (batch, heads, seq_len, head_dim)."""

    batch: int
    heads: int
    seq_len: int
    head_dim: int
    dtype: str
    causal: bool

    def forward_flops(self) -> float:
        flops = 4.0 * self.batch * self.heads * self.seq_len**2 * self.head_dim
        return flops / 2 if self.causal else flops


def triton_skip_reason(device: torch.device, interpret: bool) -> str:
    if device.type != "cuda" and not interpret:
        return "Triton runs on CPU only under TRITON_INTERPRET=1: an interpreter too slow to time"
    return ""


@contextlib.contextmanager
def five_product_backward() -> Iterator[None]:
    """Our kernel's backward with dQ by atomics (SOFTLOOKUP_DETERMINISTIC_BWD=0) inside."""
    before = os.environ.get("SOFTLOOKUP_DETERMINISTIC_BWD")
    os.environ["SOFTLOOKUP_DETERMINISTIC_BWD"] = "0"
    try:
        yield
    finally:
        if before is None:
            del os.environ["SOFTLOOKUP_DETERMINISTIC_BWD"]
        else:
            os.environ["SOFTLOOKUP_DETERMINISTIC_BWD"] = before


def backend_context(
    backend: str, setting: Setting, q, k, v, device: torch.device, interpret: bool
) -> tuple[contextlib.AbstractContextManager, str, str]:
    """(context to run the backend in, kernel name, skip reason or "") for one setting."""
    if backend.startswith("triton"):
        skip = triton_skip_reason(device, interpret)
        context = (
            five_product_backward() if backend == "triton_atomic" else contextlib.nullcontext()
        )
        return context, "atomic_dq" if backend == "triton_atomic" else "", skip
    if backend not in ("torch_sdpa", "torch_cudnn"):
        return contextlib.nullcontext(), "", ""
    wanted = SDPBackend.FLASH_ATTENTION if backend == "torch_sdpa" else SDPBackend.CUDNN_ATTENTION
    try:
        with sdpa_kernel(wanted), torch.no_grad():
            attention(q, k, v, causal=setting.causal, backend="torch")  # the timed shape
    except RuntimeError as err:
        if backend == "torch_cudnn":
            return contextlib.nullcontext(), "cudnn", f"cuDNN attention refused: {err}"[:200]
        return contextlib.nullcontext(), "default", ""
    return sdpa_kernel(wanted), "flash" if backend == "torch_sdpa" else "cudnn", ""


def saved_for_backward_mib(fn: Callable[[], object]) -> float:
    """Distinct tensor storage that autograd keeps for the backward pass while fn runs."""
    storages = {}

    def keep(t: torch.Tensor) -> torch.Tensor:
        storage = t.untyped_storage()
        storages[storage.data_ptr()] = storage.nbytes()
        return t

    with torch.autograd.graph.saved_tensors_hooks(keep, lambda t: t):
        fn()
    return sum(storages.values()) / MIB


def make_qkv(setting: Setting, device: torch.device, seed: int = 0) -> list[torch.Tensor]:
    gen = torch.Generator(device=device).manual_seed(seed)
    shape = (setting.batch, setting.heads, setting.seq_len, setting.head_dim)
    return [
        torch.randn(shape, generator=gen, device=device, dtype=DTYPES[setting.dtype])
        for _ in range(3)
    ]


def fp32_reference_error(out: torch.Tensor, q, k, v, causal: bool) -> float:
    """Max abs error of out against the fp32 reference, one head at a time (bounded memory)."""
    error = 0.0
    for h in range(q.shape[1]):
        heads = slice(h, h + 1)
        ref = reference_attention(
            q[:, heads].float(), k[:, heads].float(), v[:, heads].float(), causal=causal
        )
        error = max(error, (out[:, heads].float() - ref).abs().max().item())
    return error


def fp32_gradient_error(name: str, q, k, v, causal: bool) -> float:
    """Max abs error of dQ, dK, dV vs the fp32 reference. The backend runs at the shape given (the
    timed one, so with the tiles autotuning chose for the timed rows); the reference, one head at
    a time, checks the first and the last (batch, head), where the grid's offsets end."""
    gen = torch.Generator(device=q.device).manual_seed(1)
    grad_out = torch.randn(q.shape, generator=gen, device=q.device, dtype=q.dtype)
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    out = attention(*leaves, causal=causal, backend=name)
    grads = torch.autograd.grad(out, leaves, grad_out)  # (B,H,N,d) each
    error = 0.0
    for b, h in {(0, 0), (q.shape[0] - 1, q.shape[1] - 1)}:
        one = (slice(b, b + 1), slice(h, h + 1))
        heads = [t[one].float().requires_grad_() for t in (q, k, v)]  # (1,1,N,d) each
        out = attention(*heads, causal=causal, backend="reference")
        expected = torch.autograd.grad(out, heads, grad_out[one].float())
        error = max(
            error,
            *(
                (g[one].float() - e).abs().max().item()
                for g, e in zip(grads, expected, strict=True)
            ),
        )
    return error


def correctness(name: str, q, k, v, causal: bool, grad_check: bool) -> dict[str, float]:
    """The error columns of a setting's rows: forward output (every head) and, with grad_check,
    gradients against the fp32 reference, both at the timed shape."""
    with torch.no_grad():
        out = attention(q, k, v, causal=causal, backend=name)
    errors = {"max_abs_err": fp32_reference_error(out, q, k, v, causal)}
    del out
    errors["max_abs_grad_err"] = (
        fp32_gradient_error(name, q, k, v, causal) if grad_check else math.nan
    )
    return errors


def run_attention(setting: Setting, backend: str, passes: str, q, k, v) -> Callable[[], object]:
    """A closure running one forward (no grad), one backward or one forward+backward."""
    name = BACKEND_NAMES[backend]
    if passes == "forward":

        def forward():
            with torch.no_grad():
                return attention(q, k, v, causal=setting.causal, backend=name)

        return forward
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    grad_out = torch.randn_like(q)
    if passes == "backward":
        out = attention(*leaves, causal=setting.causal, backend=name)

        def backward():
            out.backward(grad_out, retain_graph=True)
            for t in leaves:
                t.grad = None

        return backward

    def forward_backward():
        out = attention(*leaves, causal=setting.causal, backend=name)
        out.backward(grad_out)
        for t in leaves:
            t.grad = None

    return forward_backward


def measure_attention(
    setting: Setting,
    backend: str,
    device: torch.device,
    samples: int,
    naive_max_len: int,
    *,
    interpret: bool = False,
    grad_check: bool = False,
) -> Iterator[dict]:
    """Rows for every pass of one backend on one setting, yielded once the setting is measured:
    the three passes timed, then the errors checked (`correctness`)."""
    base = {**asdict(setting), "backend": backend, "kernel": ""}
    q, k, v = make_qkv(setting, device)
    context, base["kernel"], skip = backend_context(backend, setting, q, k, v, device, interpret)
    if backend == "naive" and setting.seq_len > naive_max_len:
        skip = f"materialised N x N table: N > --naive-max-len {naive_max_len}"
    if skip:
        for passes in PASSES:
            yield {**base, "pass": passes, "status": "skipped", "reason": skip}
        return
    with context:
        try:
            # the timing first: autotuning picks the tiles at the timed shape (and only there);
            # the checks then run at that same shape, so they check the tiles that were timed
            timed = {
                passes: time_pass(setting, backend, passes, q, k, v, device, samples)
                for passes in PASSES
            }
            errors = correctness(BACKEND_NAMES[backend], q, k, v, setting.causal, grad_check)
            for passes in PASSES:
                yield {
                    **base,
                    "pass": passes,
                    **timed[passes],
                    **errors,
                    "status": "ok",
                    "reason": "",
                }
        except torch.OutOfMemoryError as err:
            yield {**base, "pass": "all", "status": "oom", "reason": str(err).split("\n")[0]}
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()


def time_pass(
    setting: Setting, backend: str, passes: str, q, k, v, device: torch.device, samples: int
) -> dict[str, float]:
    """The timing columns of one pass: samples, our kernels' tiles, throughput, memory."""
    fn = run_attention(setting, backend, passes, q, k, v)
    timing = time_samples(fn, device, samples)
    peak = peak_mib(fn, device)
    return {
        **timing,
        "tiles": timed_tiles(backend, passes),
        "tflops": setting.forward_flops() * FLOPS_PER_FORWARD[passes] / timing["time_ms"] / 1e9,
        "peak_mem_mib": peak,
        "peak_mem_per_seq_mib": peak / setting.batch,
        "saved_for_backward_mib": (
            saved_for_backward_mib(fn) if passes == "forward_backward" else 0.0
        ),
    }


def timed_tiles(backend: str, passes: str) -> str:
    """The tiles autotuning chose for our kernels in the pass just timed ("" for the others)."""
    if not backend.startswith("triton"):
        return ""
    from ..kernels.triton.tiles import last_tiles  # Triton only now: TRITON_INTERPRET is set

    kernels = PASS_KERNELS[passes]
    return last_tiles(kernels if backend == "triton" else tuple(k for k in kernels if k != "dq"))


def decode_step_functions(backend: str, q_all, k_all, v_all):
    """The two ways to produce the attention output of token t (prompt_len <= t < total)."""
    name = BACKEND_NAMES[backend]
    # one query sees every cached key (causal masking is aligned to the end), so the mask can go:
    # torch_sdpa builds one all the same (torch_attention with Nq != Nk), torch_sdpa_unmasked
    # passes none and lets torch pick its flash or memory-efficient kernel
    cache_causal = backend != "torch_sdpa_unmasked"

    def with_cache(t: int) -> torch.Tensor:  # (B,H,1,d): one new query, the cache up to t
        return attention(
            q_all[:, :, t : t + 1],
            k_all[:, :, : t + 1],
            v_all[:, :, : t + 1],
            causal=cache_causal,
            backend=name,
        )

    def recompute(t: int) -> torch.Tensor:  # causal attention over all t + 1 tokens, last row
        return attention(
            q_all[:, :, : t + 1],
            k_all[:, :, : t + 1],
            v_all[:, :, : t + 1],
            causal=True,
            backend=name,
        )[:, :, -1:]

    return with_cache, recompute


def measure_decode(
    backend: str,
    device: torch.device,
    batch: int,
    heads: int,
    head_dim: int,
    dtype: str,
    prompt_len: int,
    new_tokens: int,
    samples: int,
    interpret: bool = False,
    cuda_graphs: bool = False,
) -> Iterator[dict]:
    """Rows "kv_cache" and "recompute" for generating new_tokens tokens after prompt_len; with
    cuda_graphs on CUDA, both again with each way's whole loop replayed from one CUDA graph (no
    launch cost; a no-op on CPU)."""
    base = {
        "backend": backend,
        "batch": batch,
        "heads": heads,
        "head_dim": head_dim,
        "dtype": dtype,
        "prompt_len": prompt_len,
        "new_tokens": new_tokens,
    }
    skip = triton_skip_reason(device, interpret) if backend.startswith("triton") else ""
    if skip:
        for mode in ("kv_cache", "recompute"):
            yield {**base, "mode": mode, "cuda_graph": False, "status": "skipped", "reason": skip}
        return
    setting = Setting(batch, heads, prompt_len + new_tokens, head_dim, dtype, causal=True)
    q_all, k_all, v_all = make_qkv(setting, device)
    steps = range(prompt_len, prompt_len + new_tokens)
    ways = decode_step_functions(backend, q_all, k_all, v_all)
    loops = [lambda way=way: [way(t) for t in steps] for way in ways]
    # the materialised table is not graphed: its recompute loop's 100 score tables, captured
    # into one graph's private pool, filled the H200 (135 GiB) and gains nothing from no launches
    graph_it = cuda_graphs and device.type == "cuda" and backend != "naive"
    for graphed in (False, True) if graph_it else (False,):
        with torch.no_grad():
            timings = [
                time_samples(cuda_graph(loop, device) if graphed else loop, device, samples)
                for loop in loops
            ]
            # after the timing (as for the attention rows); the same kernels with or without graphs
            outputs = [torch.cat([way(t) for t in steps], dim=2) for way in ways]  # (B,H,T,d) each
            difference = (outputs[0].float() - outputs[1].float()).abs().max().item()
        for mode, timing in zip(("kv_cache", "recompute"), timings, strict=True):
            yield {
                **base,
                "mode": mode,
                "cuda_graph": graphed,
                "total_ms": timing["time_ms"],
                "total_p20_ms": timing["time_p20_ms"],
                "total_p80_ms": timing["time_p80_ms"],
                "samples": timing["samples"],
                "ms_per_token": timing["time_ms"] / new_tokens,
                "speedup_vs_recompute": timings[1]["time_ms"] / timing["time_ms"],
                "max_abs_diff_vs_recompute": difference,
                "status": "ok",
                "reason": "",
            }


ATTENTION_COLUMNS = [
    *PROVENANCE_COLUMNS,
    "backend",
    "kernel",
    "pass",
    "batch",
    "heads",
    "seq_len",
    "head_dim",
    "dtype",
    "causal",
    "time_ms",
    "time_p20_ms",
    "time_p80_ms",
    "samples",
    "tiles",
    "tflops",
    "peak_mem_mib",
    "peak_mem_per_seq_mib",
    "saved_for_backward_mib",
    "max_abs_err",
    "max_abs_grad_err",
    "status",
    "reason",
]
DECODE_COLUMNS = [
    *PROVENANCE_COLUMNS,
    "backend",
    "mode",
    "cuda_graph",
    "batch",
    "heads",
    "head_dim",
    "dtype",
    "prompt_len",
    "new_tokens",
    "total_ms",
    "total_p20_ms",
    "total_p80_ms",
    "samples",
    "ms_per_token",
    "speedup_vs_recompute",
    "max_abs_diff_vs_recompute",
    "status",
    "reason",
]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m softlookup.bench.kernels", description=__doc__.split("\n")[0]
    )
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--out", type=Path, help="attention CSV (none: no attention rows)")
    p.add_argument("--decode-out", type=Path, help="decode CSV (none: no decode rows)")
    p.add_argument(
        "--seq-lens",
        type=int,
        nargs="+",
        default=[128, 256, 512, 1024],
        help="measured in this order",
    )
    p.add_argument(
        "--head-dims", type=int, nargs="+", default=[64], help="outermost loop, in order"
    )
    p.add_argument(
        "--dtype",
        choices=sorted(DTYPES),
        default=None,
        help="default: bfloat16 on cuda, float32 on cpu",
    )
    p.add_argument("--causal", choices=("both", "true", "false"), default="both")
    p.add_argument("--backends", nargs="+", choices=sorted(BACKEND_NAMES), default=DEFAULT_BACKENDS)
    p.add_argument(
        "--tokens",
        type=int,
        default=4096,
        help="batch = max(1, tokens // seq_len), a constant amount of work per row",
    )
    p.add_argument("--model-dim", type=int, default=512, help="heads = model_dim // head_dim")
    p.add_argument("--naive-max-len", type=int, default=8192)
    p.add_argument(
        "--repeats",
        type=int,
        default=None,
        help="timed samples per row, after the warm-up calls (a count, not a time "
        f"budget; default {DEFAULT_SAMPLES})",
    )
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument(
        "--grad-check",
        action="store_true",
        help="gradient error of every setting, after its timing, at its shape",
    )
    p.add_argument(
        "--cuda-graphs",
        action="store_true",
        help="decode rows also with each way replayed from a CUDA graph (CPU: no-op)",
    )
    p.add_argument(
        "--interpret",
        action="store_true",
        help="run the Triton rows on CPU too (needs TRITON_INTERPRET=1; tiny shapes)",
    )
    p.add_argument("--decode-prompt-len", type=int, default=512)
    p.add_argument("--decode-new-tokens", type=int, default=100)
    p.add_argument("--decode-batch", type=int, default=1)
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    if args.interpret and os.environ.get("TRITON_INTERPRET") != "1":
        p.error("--interpret needs TRITON_INTERPRET=1 in the environment")
    bad = [d for d in args.head_dims if args.model_dim % d]
    if bad:
        p.error(f"--model-dim {args.model_dim} is not a multiple of head dims {bad}")
    args.dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    args.repeats = args.repeats or DEFAULT_SAMPLES[args.device]
    return args


def guarded(rows: Iterator[dict], base: dict) -> Iterator[dict]:
    """The rows, then, if making them fails (a compile error, inputs a library kernel refuses),
    one row with status "error" and the reason: one failing backend costs only its own rows of a
    one-shot GPU run (the traceback goes to the log)."""
    try:
        yield from rows
    except Exception as err:  # noqa: BLE001 -- recorded in the CSV, the run goes on
        traceback.print_exc()
        reason = f"{type(err).__name__}: {err}".split("\n")[0][:300]
        yield {**base, "status": "error", "reason": reason}


def attention_rows(args: argparse.Namespace, device: torch.device) -> Iterator[dict]:
    causal_values = {"both": (False, True), "true": (True,), "false": (False,)}[args.causal]
    backends = [backend for backend in args.backends if backend not in DECODE_ONLY]
    for head_dim, seq_len, causal in itertools.product(
        args.head_dims, args.seq_lens, causal_values
    ):
        batch = max(1, args.tokens // seq_len)
        setting = Setting(batch, args.model_dim // head_dim, seq_len, head_dim, args.dtype, causal)
        for backend in backends:
            rows = measure_attention(
                setting,
                backend,
                device,
                args.repeats,
                args.naive_max_len,
                interpret=args.interpret,
                grad_check=args.grad_check,
            )
            yield from guarded(rows, {**asdict(setting), "backend": backend, "pass": "all"})


def decode_rows(args: argparse.Namespace, device: torch.device) -> Iterator[dict]:
    for head_dim, backend in itertools.product(args.head_dims, args.backends):
        if backend in DECODE_BACKENDS:
            rows = measure_decode(
                backend,
                device,
                args.decode_batch,
                args.model_dim // head_dim,
                head_dim,
                args.dtype,
                args.decode_prompt_len,
                args.decode_new_tokens,
                args.repeats,
                args.interpret,
                args.cuda_graphs,
            )
            base = {"backend": backend, "head_dim": head_dim, "dtype": args.dtype, "mode": "all"}
            yield from guarded(rows, base)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    env = provenance(device)
    if args.out:
        write_rows(args.out, ATTENTION_COLUMNS, attention_rows(args, device), env, attention_line)
    if args.decode_out:
        write_rows(args.decode_out, DECODE_COLUMNS, decode_rows(args, device), env, decode_line)


def write_rows(path: Path, columns: list[str], rows: Iterator[dict], env: dict, line) -> None:
    """Each row to the CSV as soon as it is measured (after the provenance columns), and a line."""
    with csv_rows(path, columns) as write:
        for row in rows:
            write({**env, **row})
            print(line(row), flush=True)


def attention_line(row: dict) -> str:
    return (
        f"{row['backend']:13s} {row['pass']:16s} N={row['seq_len']:6d} d={row['head_dim']:3d} "
        f"causal={row['causal']!s:5s} {row.get('time_ms', math.nan):9.3f} ms "
        f"{row.get('tflops', math.nan):7.2f} TFLOP/s {row['status']}"
    )


def decode_line(row: dict) -> str:
    return (
        f"decode {row['backend']:10s} {row['mode']:9s} d={row['head_dim']:3d} "
        f"{row.get('ms_per_token', math.nan):8.3f} ms/token {row['status']}"
    )


if __name__ == "__main__":
    main()
