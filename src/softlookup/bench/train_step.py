"""One short real training step per model of a config: step time, and GPU-hours per rule.

    # on a CPU machine with the workflow's dependencies: the runs config/paper.yaml names
    python -m softlookup.bench.train_step --write-plan benchmarks/paper_runs.json \\
        --configs config/config.yaml config/paper.yaml
    # on the GPU (needs only torch): time the steps, estimate the GPU-hours
    python -m softlookup.bench.train_step --plan benchmarks/paper_runs.json --device cuda \\
        --out steps.csv --estimate-out gpu_hours.csv

The plan (JSON) lists every variant the config trains (base models and sweep points, as the
workflow's `run_config` merges them), its seeds and its training settings, so that the GPU side
needs neither Snakemake nor YAML. For each variant, a model built by `build_model` from its config
takes `--steps` timed AdamW steps (after timing.WARMUP_CALLS untimed ones) on random token
batches shaped like the training batches: `max_tokens // sentence_tokens` sentences of `sentence_tokens` source and
target tokens, under bf16 autocast on CUDA, as `softlookup.train` trains. The estimate multiplies
the median step time by the steps of a run (epochs x train_pairs x sentence_tokens / max_tokens)
and by the seeds; `--dry` shrinks every model to a few units wide (CPU, the interpreter test) and
keeps bf16 autocast on, so that the CPU check takes the GPU's mixed-precision path.
Assumptions are columns of the output, not hidden constants.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from pathlib import Path

import torch
import torch.nn.functional as F

from ..models import EOS, PAD, build_model, count_parameters
from ..paths import CONFIG_DIR
from .timing import PROVENANCE_COLUMNS, csv_rows, provenance, time_samples

STEP_COLUMNS = [
    *PROVENANCE_COLUMNS,
    "variant",
    "base_model",
    "arch",
    "parameters",
    "batch_sentences",
    "sentence_tokens",
    "autocast",
    "steps",
    "step_ms",
    "tokens_per_s",
    "status",
    "reason",
]
ESTIMATE_COLUMNS = [
    "rule",
    "variant",
    "runs",
    "epochs",
    "steps_per_epoch",
    "step_ms",
    "gpu_hours_per_run",
    "gpu_hours",
    "train_pairs",
    "sentence_tokens",
    "max_tokens",
    "basis",
]
# --dry: every width a few units, so that every model of the plan builds and steps on CPU
DRY_MODEL = {
    "emb_dim": 16,
    "hidden_dim": 16,
    "d_model": 64,
    "ffn_dim": 64,
    "enc_layers": 1,
    "dec_layers": 1,
}


def plan_of(config_paths: list[Path]) -> dict:
    """{"seeds", "train", "variants": [{variant, base_model, model, train, seeds}]} of merged
    configs (a variant's seeds: the config's and its `more_seeds`)."""
    from ..config import all_variants, drop_removed, merged_config, run_seeds

    config = drop_removed(merged_config(config_paths))  # as `--configfile a b` merges them
    variants = []
    for name, variant in all_variants(config).items():
        model = dict(variant.model)
        train = {**config["train"], **model.pop("train", {})}
        variants.append(
            {
                "variant": name,
                "base_model": variant.base_model,
                "model": model,
                "train": train,
                "seeds": run_seeds(config, name),
            }
        )
    return {
        "configs": [str(p) for p in config_paths],
        "seeds": config["seeds"],
        "bpe_vocab_size": config["data"]["bpe_vocab_size"],
        "variants": variants,
    }


def model_config(entry: dict, dry: bool) -> dict:
    """A plan entry's model config; with `dry`, every width DRY_MODEL's."""
    model_cfg = dict(entry["model"])
    if dry:
        model_cfg.update({k: v for k, v in DRY_MODEL.items() if k in model_cfg})
    return model_cfg


def random_batch(sentences: int, tokens: int, vocab: int, device: torch.device, seed: int):
    """src (B,S), tgt_in (B,T), tgt_out (B,T) of ordinary tokens (no padding: the worst case)."""
    gen = torch.Generator().manual_seed(seed)
    src, tgt = (torch.randint(EOS + 1, vocab, (sentences, tokens), generator=gen) for _ in "ab")
    return src.to(device), tgt[:, :-1].to(device), tgt[:, 1:].to(device)


def training_step(model, batch, device: torch.device, autocast: bool) -> Callable[[], None]:
    """One training step of `model` on `batch` as softlookup.train takes it: forward (bf16
    autocast when `autocast`), cross-entropy, backward, AdamW step."""
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    src, tgt_in, tgt_out = batch

    def step() -> None:
        with torch.autocast(device.type, dtype=torch.bfloat16, enabled=autocast):
            logits = model(src, tgt_in)  # (B, T, V)
        loss = F.cross_entropy(logits.float().flatten(0, 1), tgt_out.flatten(), ignore_index=PAD)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()

    return step


def time_steps(model, batch, steps: int, device: torch.device, autocast: bool) -> float:
    """Median ms of one training step over `steps` samples (timing.time_samples)."""
    return time_samples(training_step(model, batch, device, autocast), device, steps)["time_ms"]


def estimate(entry: dict, step_ms: float, seeds: int, args: argparse.Namespace) -> dict:
    """GPU-hours of training one variant (all seeds) from its step time."""
    max_tokens = entry["train"]["max_tokens"]
    steps_per_epoch = math.ceil(args.train_pairs * args.sentence_tokens / max_tokens)
    epochs = entry["train"]["epochs"]
    per_run = epochs * steps_per_epoch * step_ms / 3.6e6
    return {
        "rule": "train",
        "variant": entry["variant"],
        "runs": seeds,
        "epochs": epochs,
        "steps_per_epoch": steps_per_epoch,
        "step_ms": step_ms,
        "gpu_hours_per_run": per_run,
        "gpu_hours": per_run * seeds,
        "train_pairs": args.train_pairs,
        "sentence_tokens": args.sentence_tokens,
        "max_tokens": max_tokens,
        "basis": "measured step time x epochs x steps (no early stop, validation not counted)",
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m softlookup.bench.train_step", description=__doc__.split("\n")[0]
    )
    p.add_argument("--write-plan", type=Path, help="write the plan of --configs here and stop")
    p.add_argument(
        "--configs",
        type=Path,
        nargs="+",
        default=[CONFIG_DIR / "config.yaml", CONFIG_DIR / "paper.yaml"],
        help="merged in order",
    )
    p.add_argument("--plan", type=Path, help="plan JSON (from --write-plan)")
    p.add_argument("--device", choices=("cpu", "cuda"), default="cuda")
    p.add_argument("--out", type=Path, help="step times CSV")
    p.add_argument("--estimate-out", type=Path, help="GPU-hours per rule CSV")
    p.add_argument("--steps", type=int, default=3, help="timed steps per model (median)")
    p.add_argument(
        "--sentence-tokens",
        type=int,
        default=16,
        help="tokens per sentence, each side (Multi30k, 8k BPE: about 16)",
    )
    p.add_argument("--train-pairs", type=int, default=29000, help="sentence pairs per epoch")
    p.add_argument("--dry", action="store_true", help="tiny models and batches (CPU check)")
    args = p.parse_args(argv)
    if not args.write_plan and not (args.plan and args.out and args.estimate_out):
        p.error("give --write-plan, or --plan with --out and --estimate-out")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.write_plan:
        plan = plan_of(args.configs)
        args.write_plan.parent.mkdir(parents=True, exist_ok=True)
        args.write_plan.write_text(json.dumps(plan, indent=1) + "\n")
        return
    plan = json.loads(args.plan.read_text())
    device = torch.device(args.device)
    env = provenance(device)
    vocab = 100 if args.dry else plan["bpe_vocab_size"]
    autocast = device.type == "cuda" or args.dry
    with (
        csv_rows(args.out, STEP_COLUMNS) as write,
        csv_rows(args.estimate_out, ESTIMATE_COLUMNS) as write_estimate,
    ):
        total, measured, runs, failed = 0.0, 0, 0, []
        for index, entry in enumerate(plan["variants"]):
            seeds = len(entry.get("seeds", plan["seeds"]))  # plans written before more_seeds
            model_cfg = model_config(entry, args.dry)
            sentences = 2 if args.dry else entry["train"]["max_tokens"] // args.sentence_tokens
            tokens = 6 if args.dry else args.sentence_tokens
            row = {
                **env,
                "variant": entry["variant"],
                "base_model": entry["base_model"],
                "arch": model_cfg.get("arch", ""),
                "batch_sentences": sentences,
                "sentence_tokens": tokens,
                "autocast": "bf16" if autocast else "off",
                "steps": args.steps,
            }
            try:
                torch.manual_seed(index)
                model = build_model(model_cfg, vocab).to(device).train()
                batch = random_batch(sentences, tokens + 1, vocab, device, index)
                step_ms = time_steps(model, batch, args.steps, device, autocast)
            # OOM, a config the code refuses, a kernel that fails to build: a row, not a crash
            except Exception as err:  # noqa: BLE001
                reason = f"{type(err).__name__}: {err}".split("\n")[0][:200]
                write({**row, "status": "failed", "reason": reason})
                failed.append(entry["variant"])
                continue
            finally:
                if device.type == "cuda":
                    torch.cuda.empty_cache()
            write(
                {
                    **row,
                    "parameters": count_parameters(model),
                    "step_ms": step_ms,
                    "tokens_per_s": 2 * sentences * tokens / step_ms * 1e3,
                    "status": "ok",
                    "reason": "",
                }
            )
            guess = estimate(entry, step_ms, seeds, args)
            total += guess["gpu_hours"]
            measured += 1
            runs += seeds
            write_estimate(guess)
            print(
                f"{entry['variant']:40s} {step_ms:9.2f} ms/step "
                f"{guess['gpu_hours']:8.3f} GPU-h ({seeds} seeds)",
                flush=True,
            )
        basis = "sum of the rows above" + (f"; not measured: {' '.join(failed)}" if failed else "")
        write_estimate(
            {
                "rule": "train",
                "variant": "all",
                "runs": runs,
                "gpu_hours": total,
                "basis": basis,
            }
        )
        print(
            f"train, {measured} of {len(plan['variants'])} variants: {total:.2f} GPU-hours",
            flush=True,
        )


if __name__ == "__main__":
    main()
