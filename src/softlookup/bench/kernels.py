"""Attention kernel benchmarks: time, throughput, memory and error vs sequence length.

    python -m softlookup.bench.kernels --device cpu --out results/bench/attention_cpu.csv \\
        --decode-out results/bench/decode_cpu.csv --seq-lens 128 256 512 --head-dims 64

Two CSVs, one row per measurement, with the device name and torch/triton versions on every row:
- attention: for each sequence length N (Nq = Nk = N), head dim, causal or not, and pass
  ("forward", "forward_backward"): our Triton kernel ("triton"), torch's SDPA ("torch_sdpa",
  its flash kernel forced where torch has one for the inputs, else its default choice, named in
  `kernel`) and the materialised score table ("naive", the reference backend). Columns: median
  time, TFLOP/s (FlashAttention's count: 4 B H N^2 d for the forward, halved when causal, x3.5 for
  forward+backward), peak memory above the inputs (CUDA only; CPU has no allocator statistics),
  also per sequence (the batch is `tokens // N`, so memory against N is read per sequence: linear
  for a fused kernel, quadratic for the materialised table), the bytes autograd saves for the
  backward pass, and the forward output's max abs error against the fp32 reference.
- decode: generating `new_tokens` tokens after a prompt, one query per step against a KV cache of
  everything so far ("kv_cache"), vs recomputing causal attention over the whole sequence every
  step and keeping the last row ("recompute"); total time, time per token, speed-up, and the max
  abs difference between the two ways' outputs (the cache should change nothing).
On CPU the Triton kernels only run under TRITON_INTERPRET=1, an interpreter far too slow to time:
their rows are written with status "skipped" and the reason, so the file says what was not run.
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import itertools
import math
import platform
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

import torch
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

from ..kernels import attention, reference_attention

BACKEND_NAMES = {"triton": "triton", "torch_sdpa": "torch", "naive": "reference"}
DTYPES = {"float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}
PASSES = ("forward", "forward_backward")
MIB = 2**20


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


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), else what platform knows."""
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        for line in cpuinfo.read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or platform.machine()


def environment(device: torch.device) -> dict[str, str]:
    return {
        "device": device.type,
        "device_name": torch.cuda.get_device_name(device) if device.type == "cuda" else cpu_name(),
        "torch_version": torch.__version__,
        "triton_version": triton.__version__,
    }


def triton_skip_reason(device: torch.device) -> str:
    if device.type != "cuda":
        return "Triton runs on CPU only under TRITON_INTERPRET=1: an interpreter too slow to time"
    return ""


def synchronize(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def median_ms(fn: Callable[[], object], device: torch.device, repeats: int) -> float:
    """Median wall time of fn in milliseconds (triton.testing.do_bench on CUDA)."""
    if device.type == "cuda":
        return triton.testing.do_bench(fn, warmup=10, rep=50, return_mode="median")
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def peak_mib(fn: Callable[[], object], device: torch.device) -> float:
    """Peak CUDA memory fn allocates above what was allocated before; NaN on CPU."""
    if device.type != "cuda":
        return math.nan
    synchronize(device)
    torch.cuda.reset_peak_memory_stats(device)
    before = torch.cuda.memory_allocated(device)
    fn()
    synchronize(device)
    return (torch.cuda.max_memory_allocated(device) - before) / MIB


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


def sdpa_context(setting: Setting, q, k, v) -> tuple[contextlib.AbstractContextManager, str]:
    """Torch's flash SDPA kernel when it accepts these inputs, else torch's own choice."""
    try:
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION), torch.no_grad():
            attention(q, k, v, causal=setting.causal, backend="torch")
    except RuntimeError:
        return contextlib.nullcontext(), "default"
    return sdpa_kernel(SDPBackend.FLASH_ATTENTION), "flash"


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


def run_attention(setting: Setting, backend: str, passes: str, q, k, v) -> Callable[[], object]:
    """A closure running one forward (no grad) or one forward+backward of the backend."""
    name = BACKEND_NAMES[backend]
    if passes == "forward":

        def forward():
            with torch.no_grad():
                return attention(q, k, v, causal=setting.causal, backend=name)

        return forward
    leaves = [t.detach().requires_grad_() for t in (q, k, v)]
    grad_out = torch.randn_like(q)

    def forward_backward():
        out = attention(*leaves, causal=setting.causal, backend=name)
        out.backward(grad_out)
        for t in leaves:
            t.grad = None

    return forward_backward


def measure_attention(
    setting: Setting, backend: str, device: torch.device, repeats: int, naive_max_len: int
) -> Iterator[dict]:
    """Rows for both passes of one backend on one setting."""
    base = {**asdict(setting), "backend": backend, "kernel": ""}
    skip = triton_skip_reason(device) if backend == "triton" else ""
    if backend == "naive" and setting.seq_len > naive_max_len:
        skip = f"materialised N x N table: N > --naive-max-len {naive_max_len}"
    if skip:
        for passes in PASSES:
            yield {**base, "pass": passes, "status": "skipped", "reason": skip}
        return
    q, k, v = make_qkv(setting, device)
    context = contextlib.nullcontext()
    if backend == "torch_sdpa":
        context, base["kernel"] = sdpa_context(setting, q, k, v)
    with context:
        try:
            with torch.no_grad():
                out = attention(q, k, v, causal=setting.causal, backend=BACKEND_NAMES[backend])
            error = fp32_reference_error(out, q, k, v, setting.causal)
            del out
            for passes in PASSES:
                fn = run_attention(setting, backend, passes, q, k, v)
                ms = median_ms(fn, device, repeats)
                flops = setting.forward_flops() * (3.5 if passes == "forward_backward" else 1.0)
                peak = peak_mib(fn, device)
                yield {
                    **base,
                    "pass": passes,
                    "time_ms": ms,
                    "tflops": flops / ms / 1e9,
                    "peak_mem_mib": peak,
                    "peak_mem_per_seq_mib": peak / setting.batch,
                    "saved_for_backward_mib": saved_for_backward_mib(fn)
                    if passes == "forward_backward"
                    else 0.0,
                    "max_abs_err": error,
                    "status": "ok",
                    "reason": "",
                }
        except torch.OutOfMemoryError as err:
            for passes in PASSES:
                yield {**base, "pass": passes, "status": "oom", "reason": str(err).split("\n")[0]}
        finally:
            if device.type == "cuda":
                torch.cuda.empty_cache()


def decode_step_functions(backend: str, q_all, k_all, v_all, prompt_len: int):
    """The two ways to produce the attention output of token t (prompt_len <= t < total)."""
    name = BACKEND_NAMES[backend]

    def with_cache(t: int) -> torch.Tensor:  # (B,H,1,d): one new query, the cache up to t
        return attention(
            q_all[:, :, t : t + 1],
            k_all[:, :, : t + 1],
            v_all[:, :, : t + 1],
            causal=True,
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
    repeats: int,
) -> Iterator[dict]:
    """Rows "kv_cache" and "recompute" for generating new_tokens tokens after prompt_len."""
    base = {
        "backend": backend,
        "batch": batch,
        "heads": heads,
        "head_dim": head_dim,
        "dtype": dtype,
        "prompt_len": prompt_len,
        "new_tokens": new_tokens,
    }
    skip = triton_skip_reason(device) if backend == "triton" else ""
    if skip:
        for mode in ("kv_cache", "recompute"):
            yield {**base, "mode": mode, "status": "skipped", "reason": skip}
        return
    setting = Setting(batch, heads, prompt_len + new_tokens, head_dim, dtype, causal=True)
    q_all, k_all, v_all = make_qkv(setting, device)
    steps = range(prompt_len, prompt_len + new_tokens)
    ways = decode_step_functions(backend, q_all, k_all, v_all, prompt_len)
    with torch.no_grad():
        outputs = [torch.cat([way(t) for t in steps], dim=2) for way in ways]  # (B,H,T,d) each
        difference = (outputs[0].float() - outputs[1].float()).abs().max().item()
        totals = [
            median_ms(lambda way=way: [way(t) for t in steps], device, repeats) for way in ways
        ]
    for mode, total in zip(("kv_cache", "recompute"), totals):
        yield {
            **base,
            "mode": mode,
            "total_ms": total,
            "ms_per_token": total / new_tokens,
            "speedup_vs_recompute": totals[1] / total,
            "max_abs_diff_vs_recompute": difference,
            "status": "ok",
            "reason": "",
        }


ATTENTION_COLUMNS = [
    "device",
    "device_name",
    "torch_version",
    "triton_version",
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
    "tflops",
    "peak_mem_mib",
    "peak_mem_per_seq_mib",
    "saved_for_backward_mib",
    "max_abs_err",
    "status",
    "reason",
]
DECODE_COLUMNS = [
    "device",
    "device_name",
    "torch_version",
    "triton_version",
    "backend",
    "mode",
    "batch",
    "heads",
    "head_dim",
    "dtype",
    "prompt_len",
    "new_tokens",
    "total_ms",
    "ms_per_token",
    "speedup_vs_recompute",
    "max_abs_diff_vs_recompute",
    "status",
    "reason",
]


@contextlib.contextmanager
def csv_rows(path: Path, columns: list[str]) -> Iterator[Callable[[dict], None]]:
    """A function writing one row at a time, flushed, so a run cut short keeps what it measured."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns, restval="")
        writer.writeheader()

        def write(row: dict) -> None:
            writer.writerow(row)
            f.flush()

        yield write


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m softlookup.bench.kernels", description=__doc__.split("\n")[0]
    )
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--out", type=Path, required=True, help="attention CSV")
    p.add_argument("--decode-out", type=Path, required=True, help="decode CSV")
    p.add_argument("--seq-lens", type=int, nargs="+", default=[128, 256, 512, 1024])
    p.add_argument("--head-dims", type=int, nargs="+", default=[64])
    p.add_argument(
        "--dtype",
        choices=sorted(DTYPES),
        default=None,
        help="default: bfloat16 on cuda, float32 on cpu",
    )
    p.add_argument("--causal", choices=("both", "true", "false"), default="both")
    p.add_argument(
        "--backends", nargs="+", choices=sorted(BACKEND_NAMES), default=sorted(BACKEND_NAMES)
    )
    p.add_argument(
        "--tokens",
        type=int,
        default=4096,
        help="batch = max(1, tokens // seq_len), a constant amount of work per row",
    )
    p.add_argument("--model-dim", type=int, default=512, help="heads = model_dim // head_dim")
    p.add_argument("--naive-max-len", type=int, default=8192)
    p.add_argument("--repeats", type=int, default=5, help="timed runs on CPU (median)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--decode-prompt-len", type=int, default=512)
    p.add_argument("--decode-new-tokens", type=int, default=100)
    p.add_argument("--decode-batch", type=int, default=1)
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    bad = [d for d in args.head_dims if args.model_dim % d]
    if bad:
        p.error(f"--model-dim {args.model_dim} is not a multiple of head dims {bad}")
    args.dtype = args.dtype or ("bfloat16" if args.device == "cuda" else "float32")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    env = environment(device)
    causal_values = {"both": (False, True), "true": (True,), "false": (False,)}[args.causal]

    with csv_rows(args.out, ATTENTION_COLUMNS) as write:
        for head_dim, seq_len, causal in itertools.product(
            args.head_dims, args.seq_lens, causal_values
        ):
            batch = max(1, args.tokens // seq_len)
            heads = args.model_dim // head_dim
            setting = Setting(batch, heads, seq_len, head_dim, args.dtype, causal)
            for backend in args.backends:
                for row in measure_attention(
                    setting, backend, device, args.repeats, args.naive_max_len
                ):
                    write({**env, **row})
                    print(
                        f"{backend:10s} {row['pass']:16s} N={seq_len:6d} d={head_dim:3d} "
                        f"causal={causal!s:5s} {row.get('time_ms', math.nan):9.3f} ms "
                        f"{row.get('tflops', math.nan):7.2f} TFLOP/s {row['status']}",
                        flush=True,
                    )

    with csv_rows(args.decode_out, DECODE_COLUMNS) as write:
        for head_dim, backend in itertools.product(args.head_dims, args.backends):
            for row in measure_decode(
                backend,
                device,
                args.decode_batch,
                args.model_dim // head_dim,
                head_dim,
                args.dtype,
                args.decode_prompt_len,
                args.decode_new_tokens,
                args.repeats,
            ):
                write({**env, **row})
                print(
                    f"decode {backend:10s} {row['mode']:9s} d={head_dim:3d} "
                    f"{row.get('ms_per_token', math.nan):8.3f} ms/token {row['status']}",
                    flush=True,
                )


if __name__ == "__main__":
    main()
