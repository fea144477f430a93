"""Greedy generation with the KV cache vs recomputing the prefix, on a whole Transformer (D7).

    python -m softlookup.bench.generation --device cpu --out results/bench/generation_cpu.csv \\
        --new-tokens 25 50 100 200 --batch 1 --repeats 3 \\
        --slopes-out results/bench/kv_step_slopes_cpu.csv \\
        --memory-out results/bench/cache_memory_cpu.csv --memory-layers 1 2 4 --memory-heads 1 2 4 8

A Transformer built by `softlookup.models.build_model` with seeded random weights (dims default to
config/config.yaml's `models.transformer`) translates a batch of random source sentences. Both ways
run the model's own step API, `start_decoding(src, use_cache)` then `decode_step` once per token:
with the cache each step feeds one token and appends its keys/values; without it each step reruns
the decoder over the whole prefix. The loop here is greedy search that never stops early: an
untrained model may pick EOS at any step, so the benchmark's own loop picks the best ordinary
token (PAD, BOS and EOS excluded) and every run makes exactly `new_tokens` steps. The model code
is untouched.

Timing runs in rounds: after an untimed run of every setting (the lockstep comparison below),
each round times every (batch, new_tokens) setting once each way, forwards in one round and
backwards in the next, so that a drift in machine load over the benchmark is spread over the
prefix lengths instead of passing for an effect of them (timed one setting after another, a
drift made the cached step look faster at longer prefixes: docs/measurements.md).

One row per (batch, new_tokens) setting: total time of each way (median over rounds, encoder
included), speed-up, whether the two ways generated identical tokens, the largest log-probability
difference over the steps both ways were fed the same tokens, the KV cache's size at the end
(self-attention keys and values: 2 x layers x batch x heads x d_k x tokens numbers; the
cross-attention keys and values are computed once per sentence and reported apart), and the time
of the first and of the last step of each way (medians over rounds): flat with the cache, growing
with the prefix without. Beside the timings, a count that no machine load can move: the score
cells the decoder's self-attention computes for the last generated token, per sentence, summed
over layers and heads, read off the shapes each self-attention call receives (B x heads x Nq x Nk;
with the cache one query against t keys, L H t cells; recomputing t queries against t keys,
L H t^2, the masked half included as a materialised table holds it).
On CUDA every step is synchronised so that it can be timed alone.

The --slopes-out CSV judges the step cost with an interval: per batch (`largest_batch` marks the
one judged, where fixed per-call costs weigh least) and per repetition of the timing, the log-log
slope of the last step's time against the prefix length over the settings' new_tokens (recompute
/ cache, cache, recompute); value = the mean over the repetitions, ci_low and ci_high its 95% t
interval (df = repetitions - 1; NaN with one repetition). A slope whose interval straddles a
threshold cannot tell the two ways apart on this machine.

Memory is measured, not computed from the tensors' shapes: `cache_allocated_bytes` is what the
allocator still holds after the cached decoding steps, with the decoding state alive and every
temporary freed (CUDA: torch.cuda.memory_allocated; CPU: the allocation and free events of
torch.profiler with profile_memory). `cache_bytes` (the tensors' nbytes) stands beside it. The
--memory-out CSV measures it against layers (at the model's heads) and heads (at the model's
d_k, so the width grows with the heads: the cache holds keys and values per head), one row per
model, after --memory-tokens steps (column `swept`: layers or heads).
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import math
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.profiler import ProfilerActivity

from ..intervals import interval
from ..models import BOS, EOS, PAD, Transformer, build_model
from .timing import PROVENANCE_COLUMNS, csv_rows, provenance, synchronize

UNEMITTED = (PAD, BOS, EOS)  # never picked: each run makes exactly new_tokens steps
COLUMNS = [
    *PROVENANCE_COLUMNS,
    "d_model",
    "heads",
    "d_k",
    "layers",
    "ffn_dim",
    "vocab",
    "src_len",
    "batch",
    "new_tokens",
    "repeats",
    "time_cache_s",
    "time_recompute_s",
    "speedup",
    "identical",
    "max_abs_logprob_diff",
    "cache_bytes",
    "cache_allocated_bytes",
    "cross_kv_bytes",
    "first_step_cache_s",
    "last_step_cache_s",
    "first_step_recompute_s",
    "last_step_recompute_s",
    "score_cells_cache",
    "score_cells_recompute",
]


@dataclass(frozen=True)
class Timing:
    """One greedy run: wall time in seconds, in total (encoder included) and per step."""

    total_s: float
    step_s: list[float]


def build_random_transformer(
    d_model: int, heads: int, ffn_dim: int, layers: int, vocab: int, max_len: int, seed: int
) -> Transformer:
    """An untrained Transformer in eval mode, weights drawn from torch's default init, seeded."""
    torch.manual_seed(seed)
    config = {
        "arch": "transformer",
        "d_model": d_model,
        "heads": heads,
        "ffn_dim": ffn_dim,
        "enc_layers": layers,
        "dec_layers": layers,
        "max_len": max_len,
    }
    return build_model(config, vocab).eval()


def random_source(batch: int, src_len: int, vocab: int, seed: int) -> torch.Tensor:
    """(batch, src_len) ordinary token ids, no padding."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(EOS + 1, vocab, (batch, src_len), generator=generator)


def next_tokens(log_probs: torch.Tensor) -> torch.Tensor:
    """(N,V) log-probabilities -> (N,) the most probable ordinary token of each row."""
    allowed = log_probs.index_fill(
        -1, torch.tensor(UNEMITTED, device=log_probs.device), float("-inf")
    )
    return allowed.argmax(dim=-1)


@torch.no_grad()
def timed_generation(
    model: Transformer, src: torch.Tensor, new_tokens: int, use_cache: bool
) -> Timing:
    """Greedy generation of new_tokens tokens per sentence, timed in total and step by step."""
    device = src.device
    synchronize(device)
    start = time.perf_counter()
    state = model.start_decoding(src, use_cache=use_cache)
    tokens = torch.full((src.shape[0],), BOS, dtype=torch.long, device=device)  # (B,)
    step_s = []
    for _ in range(new_tokens):
        synchronize(device)
        step_start = time.perf_counter()
        log_probs, state = model.decode_step(tokens, state)  # (B,V)
        tokens = next_tokens(log_probs)
        synchronize(device)
        step_s.append(time.perf_counter() - step_start)
    return Timing(time.perf_counter() - start, step_s)


@dataclass(frozen=True)
class Comparison:
    """Both ways run side by side, each fed its own greedy choices."""

    identical: bool
    max_abs_logprob_diff: float  # over the steps whose inputs were the same for both ways
    cache_bytes: int  # self-attention keys and values held at the end
    cross_kv_bytes: int  # cross-attention keys and values, computed once per sentence
    score_cells_cache: int  # self-attention score cells of the last token, per sentence
    score_cells_recompute: int


@contextlib.contextmanager
def counted_score_cells(model: Transformer) -> Iterator[list[int]]:
    """While open, every decoder self-attention call appends the score cells it computes,
    B x heads x Nq x Nk, read off the queries it is given (B,Nq,d_model) and its keys
    (B,heads,Nk,d_k)."""
    cells: list[int] = []
    layers = [layer.self_attn for layer in model.decoder]
    for attention in layers:

        def counting(x, kv, *args, _attend=attention.attend, **kwargs):
            batch, heads, keys, _ = kv[0].shape
            cells.append(batch * heads * x.shape[1] * keys)
            return _attend(x, kv, *args, **kwargs)

        attention.attend = counting  # an instance attribute shadows the method
    try:
        yield cells
    finally:
        for attention in layers:
            del attention.attend


def last_step_cells(model: Transformer, tokens: torch.Tensor, state: dict):
    """decode_step(tokens, state) -> (log-probabilities, next state, self-attention score cells
    of this step per sentence)."""
    with counted_score_cells(model) as cells:
        log_probs, state = model.decode_step(tokens, state)
    return log_probs, state, sum(cells) // tokens.shape[0]


@torch.no_grad()
def compare_ways(model: Transformer, src: torch.Tensor, new_tokens: int) -> Comparison:
    """Generate with and without the cache in lockstep and compare what they produce; count the
    score cells of the last step of each way."""
    cached = model.start_decoding(src, use_cache=True)
    recomputed = model.start_decoding(src, use_cache=False)
    tokens_cached = tokens_recomputed = torch.full(
        (src.shape[0],), BOS, dtype=torch.long, device=src.device
    )  # (B,)
    identical, difference = True, 0.0
    for step in range(new_tokens):
        if step < new_tokens - 1:
            log_probs_cached, cached = model.decode_step(tokens_cached, cached)  # (B,V)
            log_probs_recomputed, recomputed = model.decode_step(tokens_recomputed, recomputed)
        else:
            log_probs_cached, cached, cells_cached = last_step_cells(model, tokens_cached, cached)
            log_probs_recomputed, recomputed, cells_recomputed = last_step_cells(
                model, tokens_recomputed, recomputed
            )
        if identical:  # both ways have read the same tokens so far
            gap = (log_probs_cached - log_probs_recomputed).abs().max().item()
            difference = max(difference, gap)
        tokens_cached, tokens_recomputed = (
            next_tokens(log_probs_cached),
            next_tokens(log_probs_recomputed),
        )
        identical = identical and torch.equal(tokens_cached, tokens_recomputed)
    return Comparison(
        identical=identical,
        max_abs_logprob_diff=difference,
        cache_bytes=kv_bytes(cached["self_kv"]),
        cross_kv_bytes=kv_bytes(cached["cross_kv"]),
        score_cells_cache=cells_cached,
        score_cells_recompute=cells_recomputed,
    )


def net_allocated_bytes(device: torch.device, work: Callable[[], object]) -> int:
    """Bytes the allocator holds after work() beyond what it held before, while work's result is
    alive: CUDA's allocated-memory counter, or on CPU the profiler's allocation and free events."""
    if device.type == "cuda":
        synchronize(device)
        before = torch.cuda.memory_allocated(device)
        kept = work()  # alive while the allocator is read
        synchronize(device)
        held = torch.cuda.memory_allocated(device) - before
        del kept
        return held
    with torch.profiler.profile(activities=[ProfilerActivity.CPU], profile_memory=True) as trace:
        kept = work()  # alive until the profiler stops tallying
    del kept
    return int(sum(event.self_cpu_memory_usage for event in trace.events()))


@torch.no_grad()
def cache_allocated_bytes(model: Transformer, src: torch.Tensor, new_tokens: int) -> int:
    """The allocator's bytes held by the self-attention cache after new_tokens cached greedy
    steps (the encoder and cross-attention keys and values come before the measurement)."""
    state = model.start_decoding(src, use_cache=True)
    first = torch.full((src.shape[0],), BOS, dtype=torch.long, device=src.device)

    def decode() -> list:
        tokens, current = first, state
        for _ in range(new_tokens):
            log_probs, current = model.decode_step(tokens, current)
            tokens = next_tokens(log_probs)
        return current["self_kv"]

    return net_allocated_bytes(src.device, decode)


def kv_bytes(per_layer: list[tuple[torch.Tensor, torch.Tensor]]) -> int:
    """Bytes of a per-layer list of (keys, values), each (B,heads,N,d_k)."""
    return sum(keys.nbytes + values.nbytes for keys, values in per_layer)


WAYS = ("cache", "recompute")


def timed_rounds(
    model: Transformer, sources: dict[tuple[int, int], torch.Tensor], repeats: int
) -> dict[tuple[int, int], dict[str, list[Timing]]]:
    """(batch, new_tokens) -> way -> one Timing per round. Each round times every setting, both
    ways back to back, in turn, forwards in even rounds and backwards in odd ones, so that a
    drift in machine load over the benchmark reaches every setting alike instead of passing for
    an effect of the prefix length."""
    settings = list(sources)
    runs = {setting: {way: [] for way in WAYS} for setting in settings}
    for round_ in range(repeats):
        for batch, new_tokens in settings if round_ % 2 == 0 else settings[::-1]:
            for way in WAYS:
                runs[batch, new_tokens][way].append(
                    timed_generation(model, sources[batch, new_tokens], new_tokens, way == "cache")
                )
    return runs


def measured_columns(
    model: Transformer,
    src: torch.Tensor,
    new_tokens: int,
    comparison: Comparison,
    runs: dict[str, list[Timing]],
) -> dict[str, float | bool | int]:
    """The measured columns of one row: the timed rounds' medians beside what the lockstep
    comparison found and the allocator's bytes of the cache."""
    row = {}
    for way, timings in runs.items():
        row[f"time_{way}_s"] = statistics.median(t.total_s for t in timings)
        row[f"first_step_{way}_s"] = statistics.median(t.step_s[0] for t in timings)
        row[f"last_step_{way}_s"] = statistics.median(t.step_s[-1] for t in timings)
    return {
        **row,
        "speedup": row["time_recompute_s"] / row["time_cache_s"],
        "identical": comparison.identical,
        "max_abs_logprob_diff": comparison.max_abs_logprob_diff,
        "cache_bytes": comparison.cache_bytes,
        "cache_allocated_bytes": cache_allocated_bytes(model, src, new_tokens),
        "cross_kv_bytes": comparison.cross_kv_bytes,
        "score_cells_cache": comparison.score_cells_cache,
        "score_cells_recompute": comparison.score_cells_recompute,
    }


SLOPE_COLUMNS = [
    *PROVENANCE_COLUMNS,
    "batch",
    "largest_batch",
    "quantity",
    "points",
    "repeats",
    "value",
    "ci_low",
    "ci_high",
]
SLOPES = {  # quantity -> the last step's time of each repetition it fits, as a function of both
    "last_step_time_ratio_slope": lambda cache, recompute: recompute / cache,
    "last_step_cache_slope": lambda cache, recompute: cache,
    "last_step_recompute_slope": lambda cache, recompute: recompute,
}


def loglog_slope(x: list[int], y: np.ndarray) -> float:
    """Least-squares slope of log y against log x."""
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def slope_rows(last_steps: dict[int, dict[str, list[float]]]) -> list[dict]:
    """One row per quantity of SLOPES: over the prefix lengths of `last_steps` (new_tokens ->
    way -> the last step's time of each repetition), the log-log slope of each repetition, then
    their mean with its 95% t interval (df = repetitions - 1; NaN with one repetition)."""
    tokens = sorted(last_steps)
    repeats = min(len(times) for by_way in last_steps.values() for times in by_way.values())
    rows = []
    for quantity, of in SLOPES.items():
        slopes = np.array(
            [
                loglog_slope(
                    tokens,
                    np.array(
                        [
                            of(last_steps[n]["cache"][r], last_steps[n]["recompute"][r])
                            for n in tokens
                        ]
                    ),
                )
                for r in range(repeats)
            ]
        )
        value = float(slopes.mean())
        if repeats > 1:
            low, high = interval(value, float(slopes.std(ddof=1)) / math.sqrt(repeats), repeats - 1)
        else:
            low = high = math.nan
        rows.append(
            {
                "quantity": quantity,
                "points": len(tokens),
                "repeats": repeats,
                "value": value,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return rows


MEMORY_COLUMNS = [
    *PROVENANCE_COLUMNS,
    "swept",
    "d_model",
    "heads",
    "d_k",
    "layers",
    "ffn_dim",
    "vocab",
    "src_len",
    "batch",
    "new_tokens",
    "cache_allocated_bytes",
]


def memory_models(args: argparse.Namespace) -> list[dict]:
    """The models whose cache memory is measured: the benchmarked one with each number of layers,
    and with each number of heads at its own d_k (so d_model = heads x d_k)."""
    d_k = args.d_model // args.heads
    by_layers = [
        {"swept": "layers", "d_model": args.d_model, "heads": args.heads, "layers": n}
        for n in args.memory_layers
    ]
    by_heads = [
        {"swept": "heads", "d_model": n * d_k, "heads": n, "layers": args.layers}
        for n in args.memory_heads
    ]
    return by_layers + by_heads


def memory_rows(args: argparse.Namespace, device: torch.device) -> list[dict]:
    """One row per model of memory_models: the allocator's bytes of its cache after
    --memory-tokens steps, for the first --batch."""
    rows = []
    batch, tokens = args.batch[0], args.memory_tokens
    for dims in memory_models(args):
        model = build_random_transformer(
            dims["d_model"],
            dims["heads"],
            args.ffn_dim,
            dims["layers"],
            args.vocab,
            max(args.src_len, tokens),
            args.seed,
        ).to(device)
        src = random_source(batch, args.src_len, args.vocab, args.seed).to(device)
        rows.append(
            {
                **dims,
                "d_k": dims["d_model"] // dims["heads"],
                "ffn_dim": args.ffn_dim,
                "vocab": args.vocab,
                "src_len": args.src_len,
                "batch": batch,
                "new_tokens": tokens,
                "cache_allocated_bytes": cache_allocated_bytes(model, src, tokens),
            }
        )
    return rows


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m softlookup.bench.generation", description=__doc__.split("\n")[0]
    )
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--out", type=Path, required=True, help="CSV to write")
    p.add_argument("--d-model", type=int, default=256)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--ffn-dim", type=int, default=1024)
    p.add_argument("--layers", type=int, default=3, help="encoder and decoder layers each")
    p.add_argument("--vocab", type=int, default=8000)
    p.add_argument("--src-len", type=int, default=32, help="source tokens per sentence")
    p.add_argument("--new-tokens", type=int, nargs="+", default=[25, 50, 100, 200])
    p.add_argument("--batch", type=int, nargs="+", default=[1], help="sentences generated together")
    p.add_argument(
        "--repeats", type=int, default=3, help="timed rounds over every setting, each way (median)"
    )
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--memory-out", type=Path, help="CSV of cache memory against layers and heads")
    p.add_argument("--memory-layers", type=int, nargs="+", default=[1, 2, 4])
    p.add_argument(
        "--memory-heads",
        type=int,
        nargs="+",
        default=[1, 2, 4, 8],
        help="heads of d_model / --heads numbers each",
    )
    p.add_argument("--memory-tokens", type=int, default=50, help="cached steps before measuring")
    p.add_argument(
        "--slopes-out",
        type=Path,
        help="CSV of the last step's log-log slopes with their intervals over repeats",
    )
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    for name in (
        "d_model",
        "heads",
        "ffn_dim",
        "layers",
        "vocab",
        "src_len",
        "repeats",
        "new_tokens",
        "batch",
        "memory_layers",
        "memory_heads",
        "memory_tokens",
    ):
        values = getattr(args, name)
        if min(values if isinstance(values, list) else [values]) < 1:
            p.error(f"--{name.replace('_', '-')} must be positive, got {values}")
    if args.vocab <= EOS + 1:
        p.error(f"--vocab {args.vocab} leaves no ordinary token after the specials")
    if args.d_model % args.heads:
        p.error(f"--d-model {args.d_model} is not a multiple of --heads {args.heads}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    model = build_random_transformer(
        args.d_model,
        args.heads,
        args.ffn_dim,
        args.layers,
        args.vocab,
        max(args.src_len, *args.new_tokens),
        args.seed,
    ).to(device)
    settings = {
        **provenance(device),
        "d_model": args.d_model,
        "heads": args.heads,
        "d_k": args.d_model // args.heads,
        "layers": args.layers,
        "ffn_dim": args.ffn_dim,
        "vocab": args.vocab,
        "src_len": args.src_len,
        "repeats": args.repeats,
    }
    sources = {  # (batch, new_tokens) -> (B,S) source tokens
        (batch, new_tokens): random_source(batch, args.src_len, args.vocab, args.seed).to(device)
        for batch, new_tokens in itertools.product(args.batch, args.new_tokens)
    }
    comparisons = {  # both ways in lockstep, untimed: the warm-up of every setting
        (batch, new_tokens): compare_ways(model, src, new_tokens)
        for (batch, new_tokens), src in sources.items()
    }
    runs = timed_rounds(model, sources, args.repeats)
    last_steps = {batch: {} for batch in args.batch}  # batch -> new_tokens -> way -> times
    with csv_rows(args.out, COLUMNS) as write:
        for (batch, new_tokens), src in sources.items():
            timings = runs[batch, new_tokens]
            last_steps[batch][new_tokens] = {
                way: [t.step_s[-1] for t in timings[way]] for way in WAYS
            }
            measured = measured_columns(
                model, src, new_tokens, comparisons[batch, new_tokens], timings
            )
            row = {**settings, "batch": batch, "new_tokens": new_tokens, **measured}
            write(row)
            print(
                f"generation batch {batch:3d}, {new_tokens:4d} tokens:"
                f" cache {row['time_cache_s']:.3f} s, recompute {row['time_recompute_s']:.3f} s,"
                f" x{row['speedup']:.2f},"
                f" identical={row['identical']}, cache {row['cache_bytes'] / 2**20:.2f} MiB",
                flush=True,
            )
    if args.slopes_out is not None:
        with csv_rows(args.slopes_out, SLOPE_COLUMNS) as write:
            for batch, by_tokens in last_steps.items():
                largest = batch == max(args.batch)  # the one judged: fixed costs matter least
                for row in slope_rows(by_tokens):
                    write({**provenance(device), "batch": batch, "largest_batch": largest, **row})
                    print(
                        f"batch {batch:3d}, {row['quantity']}: {row['value']:.2f}"
                        f" [{row['ci_low']:.2f}, {row['ci_high']:.2f}]",
                        flush=True,
                    )
    if args.memory_out is not None:
        with csv_rows(args.memory_out, MEMORY_COLUMNS) as write:
            for row in memory_rows(args, device):
                write({**provenance(device), **row})
                print(
                    f"cache memory, {row['layers']} layers x {row['heads']} heads of"
                    f" {row['d_k']}: {row['cache_allocated_bytes']:,} bytes",
                    flush=True,
                )


if __name__ == "__main__":
    main()
