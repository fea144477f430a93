"""One decoder step of the GRU's attention with each score function, timed and counted (D2).

    python -m softlookup.bench.score_step --device cpu --out results/bench/score_step_cpu.csv \\
        --dim 128 --src-len 32 --batch 64 --calls 200 --repeats 5

Luong et al.'s "much cheaper" is about the score: the dot product needs no network of its own.
The model's own `CrossAttention` (softlookup.models.gru; seeded random weights) of each score
(additive, dot, general) attends from a batch of decoder states (B,D) over encoder outputs (B,S,D)
whose key projections (U h, W h) are computed once per sentence, as the decoder does. What
differs between the scores is one decoder step of that call, and it is measured two ways:
- timed: one repetition times `calls` calls of each score in turn (the scores alternate within a
  repetition, so a drift in machine load hits all of them), giving each score's seconds per step;
  `repeats` repetitions give each time with a 95% t interval, and each ratio to the dot score
  (additive / dot, general / dot) as the geometric mean of the per-repetition ratios with the t
  interval of their logarithms (df = repeats - 1);
- counted from the shapes (FLOPs per sentence and step, a multiply-add counting 2): dot s^T h_j
  2 S D; general s^T (W h_j) 2 S D (W h_j once per sentence: 2 S D^2, shown apart); additive
  v^T tanh(W s + U h_j) 2 D^2 + D (W s and its bias) + S D (the sum) + S D (tanh) + 2 S D (v), U h_j
  once per sentence. The softmax and the weighted mean of the values are the same for every
  score and counted for none.

Rows (one number each): quantity (step_time_s, score_flops, per_sentence_flops, time_ratio,
flops_ratio), score, to (the denominator score of a ratio), value, ci_low, ci_high (the timed
numbers' 95% interval; empty for a count).
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
import torch

from ..intervals import interval
from ..models.gru import CrossAttention
from .timing import PROVENANCE_COLUMNS, csv_rows, provenance, synchronize

SCORES = ("additive", "dot", "general")
BASELINE = "dot"
COLUMNS = [
    *PROVENANCE_COLUMNS,
    "dim",
    "src_len",
    "batch",
    "calls",
    "repeats",
    "quantity",
    "score",
    "to",
    "value",
    "ci_low",
    "ci_high",
]


def score_flops(score: str, dim: int, src_len: int) -> int:
    """FLOPs of one decoder step's score against src_len encoder states, per sentence."""
    per_key = {"dot": 2 * dim, "general": 2 * dim, "additive": 4 * dim}[score]
    per_query = 2 * dim * dim + dim if score == "additive" else 0  # W s + b
    return per_query + per_key * src_len


def per_sentence_flops(score: str, dim: int, src_len: int) -> int:
    """FLOPs of the encoder-side projection (U h or W h), once per sentence, not per step."""
    return 2 * src_len * dim * dim if score in ("additive", "general") else 0


def attention_inputs(score: str, dim: int, src_len: int, batch: int, seed: int, device):
    """(CrossAttention of `score`, decoder states (B,D), the decoder's memory: values (B,S,D),
    keys (B,S,D) projected once, src_pad (B,S)); the same states and values for every score."""
    torch.manual_seed(seed)
    attention = CrossAttention(score, dim, backend="auto").to(device).eval()
    generator = torch.Generator().manual_seed(seed)
    values = torch.randn(batch, src_len, dim, generator=generator).to(device)
    query = torch.randn(batch, dim, generator=generator).to(device)
    with torch.no_grad():
        memory = {
            "values": values,
            "keys": attention.keys(values),
            "src_pad": torch.zeros(batch, src_len, dtype=torch.bool, device=device),
        }
    return attention, query, memory


@torch.no_grad()
def seconds_per_step(attention, query, memory, calls: int, device) -> float:
    synchronize(device)
    start = time.perf_counter()
    for _ in range(calls):
        attention(query, memory)
    synchronize(device)
    return (time.perf_counter() - start) / calls


def mean_interval(samples: np.ndarray) -> tuple[float, float, float]:
    """(mean, ci_low, ci_high): the 95% t interval of the mean (NaN bounds for one sample)."""
    mean = float(samples.mean())
    if len(samples) < 2:
        return mean, math.nan, math.nan
    low, high = interval(
        mean, float(samples.std(ddof=1)) / math.sqrt(len(samples)), len(samples) - 1
    )
    return mean, low, high


def timed_rows(times: dict[str, list[float]]) -> list[dict]:
    """Per score its seconds per step, and per other score its ratio to BASELINE (geometric mean
    of the per-repetition ratios), each with its 95% t interval over the repetitions."""
    rows = []
    for score, samples in times.items():
        value, low, high = mean_interval(np.array(samples))
        rows.append(
            {
                "quantity": "step_time_s",
                "score": score,
                "value": value,
                "ci_low": low,
                "ci_high": high,
            }
        )
    for score in (s for s in times if s != BASELINE):
        logs = np.log(np.array(times[score]) / np.array(times[BASELINE]))
        value, low, high = (math.exp(x) for x in mean_interval(logs))
        rows.append(
            {
                "quantity": "time_ratio",
                "score": score,
                "to": BASELINE,
                "value": value,
                "ci_low": low,
                "ci_high": high,
            }
        )
    return rows


def counted_rows(dim: int, src_len: int) -> list[dict]:
    """Per score its FLOPs per step and per sentence, and per other score its ratio to BASELINE."""
    rows = []
    for score in SCORES:
        rows.append(
            {"quantity": "score_flops", "score": score, "value": score_flops(score, dim, src_len)}
        )
        rows.append(
            {
                "quantity": "per_sentence_flops",
                "score": score,
                "value": per_sentence_flops(score, dim, src_len),
            }
        )
    baseline = score_flops(BASELINE, dim, src_len)
    rows += [
        {
            "quantity": "flops_ratio",
            "score": score,
            "to": BASELINE,
            "value": score_flops(score, dim, src_len) / baseline,
        }
        for score in SCORES
        if score != BASELINE
    ]
    return rows


def measure(args: argparse.Namespace, device: torch.device) -> list[dict]:
    inputs = {
        score: attention_inputs(score, args.dim, args.src_len, args.batch, args.seed, device)
        for score in SCORES
    }
    for attention, query, memory in inputs.values():  # warm-up: one untimed repetition
        seconds_per_step(attention, query, memory, args.calls, device)
    times = {score: [] for score in SCORES}
    for _ in range(args.repeats):
        for score, (attention, query, memory) in inputs.items():
            times[score].append(seconds_per_step(attention, query, memory, args.calls, device))
    return timed_rows(times) + counted_rows(args.dim, args.src_len)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m softlookup.bench.score_step", description=__doc__.split("\n")[0]
    )
    p.add_argument("--device", choices=("cpu", "cuda"), required=True)
    p.add_argument("--out", type=Path, required=True, help="CSV to write")
    p.add_argument("--dim", type=int, default=128, help="decoder state and encoder output width")
    p.add_argument("--src-len", type=int, default=32, help="encoder states attended over")
    p.add_argument("--batch", type=int, default=64, help="sentences decoded together")
    p.add_argument("--calls", type=int, default=200, help="timed calls per repetition")
    p.add_argument("--repeats", type=int, default=5, help="repetitions (the interval's samples)")
    p.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.device == "cuda" and not torch.cuda.is_available():
        p.error("--device cuda: torch sees no CUDA device")
    for name in ("dim", "src_len", "batch", "calls", "repeats"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be positive, got {getattr(args, name)}")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    settings = {
        **provenance(device),
        "dim": args.dim,
        "src_len": args.src_len,
        "batch": args.batch,
        "calls": args.calls,
        "repeats": args.repeats,
    }
    with csv_rows(args.out, COLUMNS) as write:
        for row in measure(args, device):
            write({**settings, **row})
            print(f"score step: {row['quantity']} {row['score']}: {row['value']:.4g}", flush=True)


if __name__ == "__main__":
    main()
