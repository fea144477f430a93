#!/usr/bin/env python3
"""Where one CPU training step's time goes, per model family: the profile that chooses the next
speed-up (issue 50). A script, not a module of the package: it reads the training code
(softlookup.train) beside the benchmarks, which sit on one layer (ARCHITECTURE.md).

    # after `make paper` has prepared the corpus (results/data/<corpus>/)
    .venv/bin/python scripts/profile_training.py --out-dir benchmarks/cpu

For each variant (default: one of each family the default config trains), the model is built as
`softlookup.train` builds it and takes `--steps` real AdamW steps on the first batches of its
first epoch (the workflow's length-sorted batches of the prepared train split, `train.max_tokens`
padded tokens each), one thread, after `--warmup` untimed steps. Three tables:

- `profile_phases.csv`: wall ms a step in each phase (encoder, decoder up to the readouts, output
  projection over the vocabulary, loss, backward, gradient clipping, optimizer) and its share;
- `profile_ops.csv`: the torch operators by self CPU time a step (torch.profiler), the top
  `--top` per variant, their calls a step, and `unattributed`: the step's wall time no operator
  accounts for (Python, autograd bookkeeping and dispatch);
- `profile_flops.csv`: the arithmetic floor. The floating-point operations of one step's matrix
  products (torch.utils.flop_counter: mm, addmm, bmm, forward and backward; it counts attention
  only in the kernels it knows, not torch's CPU flash kernels), the rate they ran at, and the
  one-thread rate of a large fp32 matrix product (its fast end) in the same process: `floor_ms`
  is the step done at that rate, the time no change that keeps the model's arithmetic can go
  under.

With `--compiled`, a fourth, `profile_compiled.csv`: what torch.compile would buy. An eager and a
compiled copy of each model (the same initial weights, batches and dropout masks) take steps in
turn, so that both see the same load: each one's median ms a step, their ratio, the compiled
copy's first step (the compile, its cache cold or warm) and the largest gap between the two
losses. The GRU compiles its decoder step as `train.compile` does; the Transformer, whole.
"""

from __future__ import annotations

import argparse
import copy
import statistics
import time
from collections import defaultdict
from contextlib import contextmanager
from functools import partial
from pathlib import Path

import torch
import torch.nn.functional as F
from torch.profiler import ProfilerActivity, profile
from torch.utils.flop_counter import FlopCounterMode

from softlookup.bench.timing import PROVENANCE_COLUMNS, csv_rows, provenance, time_samples
from softlookup.bench.train_step import plan_of
from softlookup.data import bpe
from softlookup.models import PAD, build_model, parse_model_config
from softlookup.paths import CONFIG_DIR
from softlookup.train import TrainConfig, load_training_data, seed_everything

FAMILIES = ["gru_none", "gru_additive", "gru_dot", "sweep_transformer", "transformer"]
PHASES = ["encode", "decode", "output", "loss", "backward", "clip", "optimizer"]
PHASE_COLUMNS = [*PROVENANCE_COLUMNS, "variant", "phase", "ms_per_step", "share", "steps"]
OP_COLUMNS = [*PROVENANCE_COLUMNS, "variant", "op", "self_ms_per_step", "share", "calls_per_step"]
FLOP_COLUMNS = [
    *PROVENANCE_COLUMNS,
    *["variant", "gflop_per_step", "step_ms", "gflops", "peak_gflops", "floor_ms", "floor_share"],
]
COMPILED_COLUMNS = [
    *PROVENANCE_COLUMNS,
    *["variant", "eager_ms", "compiled_ms", "ratio", "first_step_s", "max_loss_gap", "steps"],
]


class PhaseClock:
    """Wall time per named phase, summed over steps; `wrap` times a method of a model in place."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, phase: str):
        started = time.perf_counter()
        yield
        self.seconds[phase] += time.perf_counter() - started

    def wrap(self, owner, method: str, phase: str) -> None:
        inner = getattr(owner, method)

        def timed(*args, **kwargs):
            with self(phase):
                return inner(*args, **kwargs)

        setattr(owner, method, timed)  # an instance attribute: the class is untouched

    def per_step(self, steps: int) -> dict[str, float]:
        """ms a step in each of PHASES; "decode" without the output projection nested in it."""
        ms = {phase: 1e3 * self.seconds[phase] / steps for phase in PHASES}
        ms["decode"] -= ms["output"]
        return ms


def training_step(model, optimizer, batch, clip_norm: float, label_smoothing: float, clock):
    """One training step as softlookup.train takes it (CPU: no autocast), phases timed; its loss."""
    logits = model(batch.src, batch.tgt_in)  # (B,T,V); encode, decode, output timed inside
    with clock("loss"):
        loss = F.cross_entropy(
            logits.flatten(0, 1),
            batch.tgt_out.flatten(),
            ignore_index=PAD,
            label_smoothing=label_smoothing,
        )
    with clock("backward"):
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
    with clock("clip"):
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip_norm)
    with clock("optimizer"):
        optimizer.step()
    return loss.item()


def matmul_peak_gflops(size: int = 1024, samples: int = 5) -> float:
    """The rate (GFLOP/s) of one (size, size) x (size, size) fp32 product at its fast end (the
    20th percentile of `samples` timings, bench.timing): what this thread's matrix arithmetic
    reaches at its most efficient shape."""
    a, b = torch.randn(size, size), torch.randn(size, size)
    timing = time_samples(lambda: torch.mm(a, b), torch.device("cpu"), samples)
    return 2 * size**3 / (timing["time_p20_ms"] / 1e3) / 1e9


def arithmetic_floor(step, step_ms: float, variant: str) -> dict:
    """The flop row of one variant: `step()` runs one training step under the flop counter."""
    with FlopCounterMode(display=False) as counter:
        step()
    gflop = counter.get_total_flops() / 1e9
    peak = matmul_peak_gflops()
    return {
        "variant": variant,
        "gflop_per_step": gflop,
        "step_ms": step_ms,
        "gflops": gflop / (step_ms / 1e3),
        "peak_gflops": peak,
        "floor_ms": 1e3 * gflop / peak,
        "floor_share": gflop / peak / (step_ms / 1e3),
    }


def model_and_batches(entry: dict, data_dir: Path, count: int):
    """(training config, model in training mode, its first `count` batches of epoch 1), as
    softlookup.train builds them (seed 1)."""
    cfg = TrainConfig.from_dict(entry["train"])
    seed_everything(1)
    sp = bpe.load(data_dir / "spm.model")
    model = build_model(parse_model_config(entry["model"]), sp.get_piece_size())
    model.train()
    run = {"src": "de", "tgt": "en", "train": entry["train"]}
    data = load_training_data(run, cfg, sp, data_dir, data_dir / "spm.model")
    return cfg, model, data.batches(seed=2, max_tokens=cfg.max_tokens)[:count]


def adamw(model, cfg: TrainConfig) -> torch.optim.AdamW:
    return torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True
    )


def profile_variant(entry: dict, data_dir: Path, steps: int, warmup: int, top: int):
    """(phase rows, op rows, flop row) of one plan entry."""
    cfg, model, batches = model_and_batches(entry, data_dir, warmup + steps)
    optimizer = adamw(model, cfg)
    settings = [cfg.clip_norm, cfg.label_smoothing]
    for batch in batches[:warmup]:
        training_step(model, optimizer, batch, *settings, PhaseClock())
    clock = PhaseClock()
    for method, phase in (("encode", "encode"), ("decode", "decode")):
        clock.wrap(model, method, phase)
    clock.wrap(model.output, "forward", "output")
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for batch in batches[warmup:]:
            training_step(model, optimizer, batch, *settings, clock)
    ms = clock.per_step(steps)
    wall_ms = sum(ms.values())
    phases = [
        {
            "variant": entry["variant"],
            "phase": phase,
            "ms_per_step": ms[phase],
            "share": ms[phase] / wall_ms,
            "steps": steps,
        }
        for phase in PHASES
    ]
    # the profiler's own overhead inflates the op times a little; shares are what matter
    self_us, calls = defaultdict(float), defaultdict(int)
    for op in prof.key_averages():  # an operator may come once per thread (autograd's)
        self_us[op.key] += op.self_cpu_time_total
        calls[op.key] += op.count
    ranked = sorted(self_us, key=self_us.get, reverse=True)
    op_ms = [(key, self_us[key] / 1e3 / steps, calls[key] / steps) for key in ranked]
    total_op_ms = sum(ms for _, ms, _ in op_ms)
    rows = [
        {"variant": entry["variant"], "op": key, "self_ms_per_step": ms, "calls_per_step": calls}
        for key, ms, calls in op_ms[:top]
    ]
    rows.append(
        {
            "variant": entry["variant"],
            "op": "unattributed",
            "self_ms_per_step": max(0.0, wall_ms - total_op_ms),
            "calls_per_step": 0,
        }
    )
    for row in rows:
        row["share"] = row["self_ms_per_step"] / wall_ms
    one_step = partial(training_step, model, optimizer, batches[-1], *settings, PhaseClock())
    return phases, rows, arithmetic_floor(one_step, wall_ms, entry["variant"])


def compiled_ratio(entry: dict, data_dir: Path, steps: int, warmup: int) -> dict:
    """The compiled row of one plan entry: an eager model and a compiled copy step in turn on the
    same batches, each step's dropout masks drawn from the same seed (inductor's fallback_random
    draws them with eager's generator), so the two train alike up to float noise."""
    import torch._inductor.config as inductor

    cfg, model, batches = model_and_batches(entry, data_dir, warmup + steps)
    twin = copy.deepcopy(model)
    if hasattr(twin, "compile_decoder_step"):  # the GRU: its decoder step, as train.compile does
        twin.compile_decoder_step()
        twin_forward = twin
    else:
        twin_forward = torch.compile(twin, dynamic=True)
    settings = [cfg.clip_norm, cfg.label_smoothing, PhaseClock()]
    sides = [(model, adamw(model, cfg)), (twin_forward, adamw(twin, cfg))]
    seconds, losses = [[], []], [[], []]
    with inductor.patch(fallback_random=True):  # the compile happens at the first step
        for index, batch in enumerate(batches):
            for side, (forward, optimizer) in enumerate(sides):
                torch.manual_seed(index)
                started = time.perf_counter()
                losses[side].append(training_step(forward, optimizer, batch, *settings))
                seconds[side].append(time.perf_counter() - started)
    eager_ms, compiled_ms = (1e3 * statistics.median(s[warmup:]) for s in seconds)
    return {
        "variant": entry["variant"],
        "eager_ms": eager_ms,
        "compiled_ms": compiled_ms,
        "ratio": compiled_ms / eager_ms,
        "first_step_s": seconds[1][0],
        "max_loss_gap": max(abs(a - b) for a, b in zip(*losses, strict=True)),
        "steps": steps,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="scripts/profile_training.py", description=__doc__.split("\n")[0]
    )
    p.add_argument("--configs", type=Path, nargs="+", default=[CONFIG_DIR / "config.yaml"])
    p.add_argument("--data-dir", type=Path, default=Path("results/data/multi30k-de-en"))
    p.add_argument("--variants", nargs="+", default=FAMILIES)
    p.add_argument("--steps", type=int, default=30, help="profiled steps per variant")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps first")
    p.add_argument("--top", type=int, default=15, help="operators kept per variant")
    p.add_argument(
        "--compiled",
        action="store_true",
        help="also eager vs torch.compile (a compile for each variant)",
    )
    p.add_argument("--out-dir", type=Path, required=True)
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if not (args.data_dir / "spm.model").is_file():
        raise SystemExit(
            f"{args.data_dir / 'spm.model'} not found: prepare the corpus first (make paper)"
        )
    torch.set_num_threads(1)  # as the workflow's train jobs run
    plan = {entry["variant"]: entry for entry in plan_of(args.configs)["variants"]}
    unknown = sorted(set(args.variants) - set(plan))
    if unknown:
        raise SystemExit(f"--variants: {unknown} not in {[str(c) for c in args.configs]}")
    args.out_dir.mkdir(parents=True, exist_ok=True)
    base = provenance(torch.device("cpu"))
    with (
        csv_rows(args.out_dir / "profile_phases.csv", PHASE_COLUMNS) as write_phase,
        csv_rows(args.out_dir / "profile_ops.csv", OP_COLUMNS) as write_op,
        csv_rows(args.out_dir / "profile_flops.csv", FLOP_COLUMNS) as write_flops,
    ):
        for name in args.variants:
            phases, ops, flops = profile_variant(
                plan[name], args.data_dir, args.steps, args.warmup, args.top
            )
            for row in phases:
                write_phase({**base, **row})
            for row in ops:
                write_op({**base, **row})
            write_flops({**base, **flops})
            print(
                f"{name:20s} "
                + " ".join(f"{r['phase']} {r['ms_per_step']:.1f}" for r in phases)
                + f" ms/step; floor {flops['floor_ms']:.1f} ms ({flops['floor_share']:.0%})"
            )
    if args.compiled:
        with csv_rows(args.out_dir / "profile_compiled.csv", COMPILED_COLUMNS) as write:
            for name in args.variants:
                row = compiled_ratio(plan[name], args.data_dir, args.steps, args.warmup)
                write({**base, **row})
                print(f"{name:20s} compiled / eager {row['ratio']:.2f}")


if __name__ == "__main__":
    main()
