"""Train one translation model: resumable, seeded, logged; a NaN loss is a result, not a crash.

Writes into --out-dir: checkpoint.pt (last epoch, for resuming), model.pt (best validation
weights), log.csv (one row per epoch) and meta.json (config, seed, versions, device, wall time,
status "ok" or "diverged").
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import platform
import random
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from .models.checkpoint import load_checked, save_atomic
from .data import bpe
from .data.batching import Batch, encode, make_batches, read_split
from .models import PAD, build_model, count_parameters

LOG_FIELDS = [
    "epoch",
    "steps",
    "train_loss",
    "val_loss",
    "lr",
    "target_tokens",
    "wall_s",
    "tokens_per_s",
]


@dataclass
class TrainConfig:
    epochs: int = 10
    max_tokens: int = 4000  # padded tokens per batch
    max_sentence_tokens: int = 128  # longer sentences are truncated
    lr: float = 5e-4
    warmup_steps: int = 200
    min_lr_ratio: float = 0.05  # cosine decay ends at lr * min_lr_ratio
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    patience: int = 3  # epochs without a better validation loss before stopping

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown train config key(s) {unknown}")
        return cls(**values)


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True, warn_only=True)
    # deterministic mode would otherwise NaN-fill every new tensor (~3% of CPU time)
    torch.utils.deterministic.fill_uninitialized_memory = False
    torch.set_flush_denormal(True)  # denormal optimizer states slow CPU arithmetic several-fold


def learning_rate(step: int, total_steps: int, cfg: TrainConfig) -> float:
    """Linear warmup, then cosine decay down to lr * min_lr_ratio at the last step."""
    if step < cfg.warmup_steps:
        return cfg.lr * (step + 1) / cfg.warmup_steps
    progress = min(1.0, (step - cfg.warmup_steps) / max(1, total_steps - cfg.warmup_steps))
    cosine = 0.5 * (1 + math.cos(math.pi * progress))
    return cfg.lr * (cfg.min_lr_ratio + (1 - cfg.min_lr_ratio) * cosine)


def batch_loss(model, batch: Batch, device, label_smoothing: float) -> torch.Tensor:
    src, tgt_in, tgt_out = (t.to(device) for t in (batch.src, batch.tgt_in, batch.tgt_out))
    with torch.autocast(device.type, dtype=torch.bfloat16, enabled=device.type == "cuda"):
        logits = model(src, tgt_in)  # (B, T, V)
    return F.cross_entropy(
        logits.float().flatten(0, 1),
        tgt_out.flatten(),
        ignore_index=PAD,
        label_smoothing=label_smoothing,
    )


@torch.no_grad()
def validation_loss(model, batches: list[Batch], device) -> float:
    model.eval()
    total, tokens = 0.0, 0
    for batch in batches:
        total += batch_loss(model, batch, device, 0.0).item() * batch.target_tokens
        tokens += batch.target_tokens
    return total / tokens


def environment(device: torch.device) -> dict:
    import sacrebleu
    import sentencepiece
    import triton

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "triton": triton.__version__,
        "sacrebleu": sacrebleu.__version__,
        "sentencepiece": sentencepiece.__version__,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "host": platform.node(),
        "threads": torch.get_num_threads(),
    }


def train(run: dict, data_dir: Path, spm_path: Path, out_dir: Path) -> dict:
    """Train `run` = {"model": {...}, "train": {...}, "seed": int, "src": "de", "tgt": "en"}."""
    cfg = TrainConfig.from_dict(run.get("train", {}))
    seed_everything(run["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out_dir.mkdir(parents=True, exist_ok=True)

    sp = bpe.load(spm_path)
    model = build_model(run["model"], sp.get_piece_size()).to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    def batches_of(split: str, shuffle: bool, seed: int = 0) -> list[Batch]:
        src_lines, tgt_lines = read_split(data_dir, split, run["src"], run["tgt"])
        src_ids = encode(sp, src_lines, cfg.max_sentence_tokens)
        tgt_ids = encode(sp, tgt_lines, cfg.max_sentence_tokens)
        return make_batches(src_ids, tgt_ids, cfg.max_tokens, shuffle=shuffle, seed=seed)

    valid = batches_of("valid", shuffle=False)
    steps_per_epoch = len(batches_of("train", shuffle=True, seed=run["seed"]))
    total_steps = cfg.epochs * steps_per_epoch

    checkpoint_path = out_dir / "checkpoint.pt"
    state = {
        "epoch": 0,
        "step": 0,
        "best_val_loss": math.inf,
        "best_epoch": 0,
        "wall_s": 0.0,
        "status": "ok",
        "history": [],
    }
    if checkpoint_path.exists():
        saved = load_checked(checkpoint_path, ("model", "optimizer", "progress", "rng"))
        model.load_state_dict(saved["model"])
        optimizer.load_state_dict(saved["optimizer"])
        torch.set_rng_state(saved["rng"])
        state = json.loads(saved["progress"])
        print(f"resuming {out_dir} after epoch {state['epoch']}")

    while state["epoch"] < cfg.epochs and state["status"] == "ok":
        epoch = state["epoch"] + 1
        if epoch - state["best_epoch"] > cfg.patience:
            print(f"early stop: no better validation loss since epoch {state['best_epoch']}")
            break
        model.train()
        started, tokens, loss_sum = time.perf_counter(), 0, 0.0
        progress = tqdm(
            batches_of("train", shuffle=True, seed=run["seed"] + epoch),
            desc=f"epoch {epoch}",
            mininterval=10,
            miniters=1,
        )
        for batch in progress:
            for group in optimizer.param_groups:
                group["lr"] = learning_rate(state["step"], total_steps, cfg)
            loss = batch_loss(model, batch, device, cfg.label_smoothing)
            if not torch.isfinite(loss):
                state["status"] = "diverged"
                print(f"diverged at epoch {epoch}, step {state['step']}: loss {loss.item()}")
                break
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
            optimizer.step()
            state["step"] += 1
            tokens += batch.target_tokens
            loss_sum += loss.item() * batch.target_tokens
            elapsed = time.perf_counter() - started
            progress.set_postfix(
                loss=f"{loss.item():.3f}", tok_s=f"{tokens / elapsed:.0f}", refresh=False
            )
        if state["status"] == "diverged":
            break
        wall = time.perf_counter() - started
        val_loss = validation_loss(model, valid, device)
        state["wall_s"] += wall
        state["epoch"] = epoch
        row = {
            "epoch": epoch,
            "steps": state["step"],
            "train_loss": loss_sum / tokens,
            "val_loss": val_loss,
            "lr": optimizer.param_groups[0]["lr"],
            "target_tokens": tokens,
            "wall_s": wall,
            "tokens_per_s": tokens / wall,
        }
        state["history"].append(row)
        if not math.isfinite(val_loss):
            state["status"] = "diverged"
        elif val_loss < state["best_val_loss"]:
            state["best_val_loss"], state["best_epoch"] = val_loss, epoch
            save_atomic(model_file(run, model, sp.get_piece_size()), out_dir / "best.pt")
        save_atomic(
            {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "rng": torch.get_rng_state(),
                "progress": json.dumps(state),
            },
            checkpoint_path,
        )
        print(json.dumps(row))

    return finish(run, cfg, state, model, sp.get_piece_size(), device, out_dir)


def model_file(run: dict, model: torch.nn.Module, vocab_size: int) -> dict:
    return {
        "model_config": json.dumps(run["model"]),
        "vocab_size": vocab_size,
        "state_dict": model.state_dict(),
    }


def finish(run, cfg, state, model, vocab_size, device, out_dir: Path) -> dict:
    """Write model.pt (best weights, or the last ones if none was best), log.csv and meta.json."""
    best = out_dir / "best.pt"
    if best.exists():
        best.replace(out_dir / "model.pt")
    elif not (out_dir / "model.pt").exists():
        save_atomic(model_file(run, model, vocab_size), out_dir / "model.pt")
    with open(out_dir / "log.csv", "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=LOG_FIELDS)
        writer.writeheader()
        writer.writerows(state["history"])
    history = state["history"]
    tokens = sum(row["target_tokens"] for row in history)
    meta = {
        "run": run,
        "train_config": asdict(cfg),
        "status": state["status"],
        "epochs": state["epoch"],
        "best_epoch": state["best_epoch"],
        "best_val_loss": state["best_val_loss"] if history else None,
        "final_train_loss": history[-1]["train_loss"] if history else None,
        "train_wall_s": state["wall_s"],
        "train_tokens_per_s": tokens / state["wall_s"] if state["wall_s"] else None,
        "parameters": count_parameters(model),
        "environment": environment(device),
    }
    (out_dir / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")
    return meta


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--run-json", required=True, help='{"model": {..}, "train": {..}, "seed": 1}'
    )
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--spm", required=True, type=Path)
    parser.add_argument("--out-dir", required=True, type=Path)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    run = json.loads(args.run_json)
    meta = train(run, args.data_dir, args.spm, args.out_dir)
    print(
        f"{args.out_dir}: status {meta['status']}, {meta['epochs']} epochs, "
        f"{meta['train_wall_s']:.0f}s"
    )


if __name__ == "__main__":
    main()
