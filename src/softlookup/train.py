"""Train one translation model: resumable, seeded, logged; a NaN loss is a result, not a crash.

    python -m softlookup.train --config results/runs/<run>/config.json --data-dir DIR --spm FILE

Writes into --out-dir (default: the config's directory), see models/checkpoint.py:
checkpoint.pt (last finished epoch, for resuming), best.pt (best validation weights, kept across
resumes), model.pt (a copy of best.pt), log.csv (one row per epoch: train and validation loss,
tokens, seconds, tokens/s) and meta.json (settings, status "ok" or "diverged", versions, time).
With a training-budget ladder (`train.ladder`, epochs), ladder/e<k>.pt holds, for each point k,
the weights the run would deliver with a budget of k epochs: the best validation weights of its
first k epochs (a run that stopped before k delivers its final weights there too).

A checkpoint is resumed only when it was trained on exactly this run: the same model and train
settings (defaults filled in), seed, languages, BPE model and training/validation text, and the
same parameter shapes and checkpoint format. Anything else starts fresh, and the log says why.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import random
import shutil
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F
from tqdm import tqdm

from .config import ladder_points
from .data import bpe
from .data.batching import Batch, encode, make_batches, read_split
from .models import PAD, build_model, count_parameters
from .models.checkpoint import (
    CHECKPOINT_KEYS,
    CheckpointError,
    copy_atomic,
    load_checked,
    model_fingerprint,
    save_atomic,
    save_model,
)
from .models.config import parse_model_config
from .provenance import config_hash, environment
from .rundir import read_run_config, write_json

CHECKPOINT_FORMAT = 2  # bump when the checkpoint's meaning changes: old ones then start fresh

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
    max_source_words: int | None = None  # training pairs with longer sources are dropped
    lr: float = 5e-4
    warmup_steps: int = 200
    min_lr_ratio: float = 0.05  # cosine decay ends at lr * min_lr_ratio
    weight_decay: float = 0.01
    label_smoothing: float = 0.1
    clip_norm: float = 1.0
    patience: int = 3  # epochs without a better validation loss before stopping
    compile: bool = False  # torch.compile the GRU decoder step (models/gru.py); Transformer: no-op
    # budget points (epochs, and "final"): the weights kept at each (ladder/e<k>.pt); what is
    # kept, not how the run trains, so it is left out of the checkpoint's fingerprint
    ladder: list = field(default_factory=list)

    @classmethod
    def from_dict(cls, values: dict) -> TrainConfig:
        unknown = sorted(set(values) - set(cls.__dataclass_fields__))
        if unknown:
            raise ValueError(f"unknown train config key(s) {unknown}")
        return cls(**values)


def ladder_weights(out_dir: Path, point: int) -> Path:
    return Path(out_dir) / "ladder" / f"e{point}.pt"


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


def file_hashes(paths: list[Path]) -> dict[str, str]:
    """sha256 of each file, by name."""
    hashes = {}
    for path in paths:
        digest = hashlib.sha256()
        with open(path, "rb") as stream:
            for block in iter(lambda: stream.read(1 << 20), b""):
                digest.update(block)
        hashes[Path(path).name] = digest.hexdigest()
    return hashes


def fingerprint(run: dict, model_config, cfg: TrainConfig, data_files: list[Path], model) -> dict:
    """What a checkpoint must match to be resumed: one hash per part, so the log can say which
    part differs."""
    return {
        "format": CHECKPOINT_FORMAT,
        "model_config": config_hash(asdict(model_config)),
        "train_config": config_hash({k: v for k, v in asdict(cfg).items() if k != "ladder"}),
        "seed": run["seed"],
        "languages": f"{run['src']}-{run['tgt']}",
        "data": config_hash(file_hashes(data_files)),
        "parameters": config_hash({k: list(v.shape) for k, v in model.state_dict().items()}),
    }


def differences(saved: dict | None, current: dict) -> list[str]:
    if not isinstance(saved, dict):
        return ["no fingerprint (an older checkpoint)"]
    return [key for key in current if saved.get(key) != current[key]]


def load_resumable(path: Path, current: dict) -> dict | None:
    """The checkpoint at `path` if it was trained on this run, else None (with the reason)."""
    if not path.exists():
        return None
    try:
        saved = load_checked(path, CHECKPOINT_KEYS)
    except CheckpointError as error:
        print(f"starting fresh: {error}")
        return None
    differ = differences(json.loads(saved["fingerprint"]), current)
    if differ:
        print(f"starting fresh: {path} was trained with other settings ({', '.join(differ)})")
        return None
    return saved


@dataclass
class TrainingData:
    """A run's encoded training pairs (lists of piece ids), its validation batches, and the files
    they came from (for the fingerprint)."""

    src: list
    tgt: list
    valid: list[Batch]
    files: list[Path]

    def batches(self, seed: int, max_tokens: int) -> list[Batch]:
        return make_batches(self.src, self.tgt, max_tokens, shuffle=True, seed=seed)


def load_training_data(
    run: dict, cfg: TrainConfig, sp, data_dir: Path, spm_path: Path
) -> TrainingData:
    """The train split (pairs with sources over `max_source_words` dropped) and the valid split,
    encoded with the BPE model `sp`."""
    src_lines, tgt_lines = read_split(data_dir, "train", run["src"], run["tgt"])
    if cfg.max_source_words is not None:
        pairs = [
            (s, t)
            for s, t in zip(src_lines, tgt_lines, strict=True)
            if len(s.split()) <= cfg.max_source_words
        ]
        print(
            f"max_source_words={cfg.max_source_words}: kept {len(pairs)} of {len(src_lines)} pairs"
        )
        src_lines, tgt_lines = [s for s, _ in pairs], [t for _, t in pairs]
    if not src_lines:
        raise ValueError(f"no training pairs left (max_source_words={cfg.max_source_words})")
    valid_src, valid_tgt = read_split(data_dir, "valid", run["src"], run["tgt"])
    return TrainingData(
        src=encode(sp, src_lines, cfg.max_sentence_tokens),
        tgt=encode(sp, tgt_lines, cfg.max_sentence_tokens),
        valid=make_batches(
            encode(sp, valid_src, cfg.max_sentence_tokens),
            encode(sp, valid_tgt, cfg.max_sentence_tokens),
            cfg.max_tokens,
            shuffle=False,
        ),
        files=[spm_path]
        + [
            data_dir / f"{split}.{lang}"
            for split in ("train", "valid")
            for lang in (run["src"], run["tgt"])
        ],
    )


def resume_or_start(out_dir: Path, current: dict, model, optimizer, device) -> dict:
    """The progress saved in out_dir/checkpoint.pt, with the model, optimizer and random state
    restored, when that checkpoint was trained on this run (fingerprint `current`); otherwise a
    fresh start, and whatever an earlier run left is removed as stale."""
    saved = load_resumable(out_dir / "checkpoint.pt", current)
    if saved is None:
        for stale in ("checkpoint.pt", "best.pt", "model.pt"):
            (out_dir / stale).unlink(missing_ok=True)
        shutil.rmtree(out_dir / "ladder", ignore_errors=True)
        return {
            "epoch": 0,
            "step": 0,
            "best_val_loss": math.inf,
            "best_epoch": 0,
            "wall_s": 0.0,
            "status": "ok",
            "history": [],
            "ladder": {},  # point -> {"weights_epoch", "val_loss"} of the weights kept there
        }
    model.load_state_dict(saved["model"])
    optimizer.load_state_dict(saved["optimizer"])
    torch.set_rng_state(saved["rng"])
    if device.type == "cuda" and "cuda_rng" in saved:
        torch.cuda.set_rng_state_all(saved["cuda_rng"])
    print(f"resuming {out_dir} after epoch {json.loads(saved['progress'])['epoch']}")
    return {"ladder": {}, **json.loads(saved["progress"])}


def train_epoch(
    model,
    optimizer,
    batches: list[Batch],
    state: dict,
    total_steps: int,
    cfg: TrainConfig,
    device,
    epoch: int,
) -> dict | None:
    """One pass over `batches`, advancing state["step"]. Returns the epoch's log row without its
    validation loss, or None when the loss went non-finite (state["status"] = "diverged")."""
    model.train()
    started, tokens, loss_sum = time.perf_counter(), 0, 0.0
    progress = tqdm(batches, desc=f"epoch {epoch}", mininterval=10, miniters=1)
    for index, batch in enumerate(progress):
        for group in optimizer.param_groups:
            group["lr"] = learning_rate(state["step"], total_steps, cfg)
        loss = batch_loss(model, batch, device, cfg.label_smoothing)
        loss_value = loss.item()
        if not math.isfinite(loss_value):
            state["status"] = "diverged"
            print(f"diverged at epoch {epoch}, step {state['step']}: loss {loss_value}")
            return None
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.clip_norm)
        optimizer.step()
        state["step"] += 1
        tokens += batch.target_tokens
        loss_sum += loss_value * batch.target_tokens
        if index % 20 == 0:  # tqdm's own count lags between its refreshes
            elapsed = time.perf_counter() - started
            progress.set_postfix(
                loss=f"{loss_value:.3f}", tok_s=f"{tokens / elapsed:.0f}", refresh=False
            )
    wall = time.perf_counter() - started
    return {
        "epoch": epoch,
        "steps": state["step"],
        "train_loss": loss_sum / tokens,
        "lr": optimizer.param_groups[0]["lr"],
        "target_tokens": tokens,
        "wall_s": wall,
        "tokens_per_s": tokens / wall,
    }


def save_checkpoint(path: Path, model, optimizer, device, state: dict, current: dict) -> None:
    """Everything needed to resume after this epoch: weights, optimizer, random state, progress."""
    save_atomic(
        {
            "model": model.state_dict(),
            "optimizer": optimizer.state_dict(),
            "rng": torch.get_rng_state(),
            **({"cuda_rng": torch.cuda.get_rng_state_all()} if device.type == "cuda" else {}),
            "progress": json.dumps(state),
            "fingerprint": json.dumps(current),
        },
        path,
    )


def train(run: dict, data_dir: Path, spm_path: Path, out_dir: Path) -> dict:
    """Train `run` = {"model": {...}, "train": {...}, "seed": int, "src": "de", "tgt": "en"}."""
    cfg = TrainConfig.from_dict(run.get("train", {}))
    model_config = parse_model_config(run["model"])
    seed_everything(run["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    sp = bpe.load(spm_path)
    model = build_model(model_config, sp.get_piece_size()).to(device)
    if cfg.compile and hasattr(model, "compile_decoder_step"):
        model.compile_decoder_step()
    # fused: one kernel for every parameter (CPU and CUDA); ~7x faster than the per-tensor loop
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay, fused=True
    )
    data = load_training_data(run, cfg, sp, Path(data_dir), Path(spm_path))
    total_steps = cfg.epochs * len(data.batches(run["seed"], cfg.max_tokens))
    current = fingerprint(run, model_config, cfg, data.files, model)
    keep_weights = partial(
        save_model, run=run, model=model, vocab_size=sp.get_piece_size(), fingerprint=current
    )
    state = resume_or_start(out_dir, current, model, optimizer, device)
    resumed_from = state["epoch"]

    while state["epoch"] < cfg.epochs and state["status"] == "ok":
        epoch = state["epoch"] + 1
        if epoch - state["best_epoch"] > cfg.patience:
            print(f"early stop: no better validation loss since epoch {state['best_epoch']}")
            break
        batches = data.batches(run["seed"] + epoch, cfg.max_tokens)
        row = train_epoch(model, optimizer, batches, state, total_steps, cfg, device, epoch)
        if row is None:
            break
        row["val_loss"] = val_loss = validation_loss(model, data.valid, device)
        state["wall_s"] += row["wall_s"]
        state["epoch"] = epoch
        state["history"].append(row)
        if not math.isfinite(val_loss):
            state["status"] = "diverged"
        elif val_loss < state["best_val_loss"]:
            state["best_val_loss"], state["best_epoch"] = val_loss, epoch
            keep_weights(out_dir / "best.pt")
        if epoch in ladder_points(asdict(cfg)):
            keep_ladder_point(out_dir, epoch, state, keep_weights)
        save_checkpoint(out_dir / "checkpoint.pt", model, optimizer, device, state, current)
        print(json.dumps(row))
    if resumed_from and state["epoch"] == resumed_from:
        print(f"{out_dir}: training had finished; outputs rebuilt from the checkpoint and best.pt")

    extra = {
        "train_pairs": len(data.src),
        "resumed_from_epoch": resumed_from,
        "fingerprint": current,
        "model_config": asdict(model_config),
    }
    return finish(run, cfg, state, model, keep_weights, device, out_dir, extra)


def delivered(state: dict) -> dict:
    """Which weights the run delivers now: its best validation epoch (the last epoch if none was
    best) and that validation loss."""
    return {
        "weights_epoch": state["best_epoch"] or state["epoch"],
        "val_loss": state["best_val_loss"],
    }


def keep_ladder_point(out_dir: Path, point: int, state: dict, keep_weights) -> None:
    """ladder/e<point>.pt: the best validation weights so far (the current ones, written by
    `keep_weights(path)`, if none was best, as after a diverged validation)."""
    target = ladder_weights(out_dir, point)
    target.parent.mkdir(exist_ok=True)
    if state["best_epoch"] and (out_dir / "best.pt").exists():
        copy_atomic(out_dir / "best.pt", target)
    else:
        keep_weights(target)
    state["ladder"][str(point)] = delivered(state)


def fill_ladder(cfg: TrainConfig, state: dict, out_dir: Path) -> dict:
    """Every point's weights, and "final". Points past the run's last epoch (it stopped early or
    diverged) deliver its final weights, model.pt. A point at or before the last epoch must have
    been kept when it was trained: one added to the ladder afterwards cannot be recovered, and
    the error says so."""
    points = ladder_points(asdict(cfg))
    for point in points:
        target = ladder_weights(out_dir, point)
        if str(point) in state["ladder"] and target.exists():
            continue
        if point <= state["epoch"] and state["status"] == "ok":
            raise RuntimeError(
                f"{out_dir}: ladder point {point} was not kept when epoch {point} was trained "
                f"(added to train.ladder afterwards, or {target} deleted); delete "
                "checkpoint.pt to retrain this run"
            )
        target.parent.mkdir(exist_ok=True)
        copy_atomic(out_dir / "model.pt", target)
        state["ladder"][str(point)] = {**delivered(state), "stopped_before": True}
    return {
        **{str(point): state["ladder"][str(point)] for point in points},
        "final": delivered(state),
    }


def stop_reason(cfg: TrainConfig, state: dict) -> str:
    """Why training ended: "diverged", "early stop" (patience) or "epoch cap"."""
    if state["status"] != "ok":
        return "diverged"
    return "epoch cap" if state["epoch"] >= cfg.epochs else "early stop"


def finish(run, cfg, state, model, keep_weights, device, out_dir: Path, extra: dict) -> dict:
    """Write model.pt (the best weights, or the last ones if none was best), log.csv, meta.json."""
    best = out_dir / "best.pt"
    if best.exists() and model_fingerprint(best) == extra["fingerprint"]:
        copy_atomic(best, out_dir / "model.pt")
    else:
        keep_weights(out_dir / "model.pt")
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
        "stop_reason": stop_reason(cfg, state),
        "ladder": fill_ladder(cfg, state, out_dir),
        "parameters": count_parameters(model),
        **extra,
        "environment": environment(device),
    }
    write_json(meta, out_dir / "meta.json")
    return meta


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--config", required=True, type=Path, help="the run's config.json (results/runs/<run>/)"
    )
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--spm", required=True, type=Path)
    parser.add_argument("--out-dir", type=Path, help="default: the config's directory")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    run = read_run_config(args.config)
    out_dir = args.out_dir or args.config.parent
    meta = train(run, args.data_dir, args.spm, out_dir)
    print(
        f"{out_dir}: status {meta['status']}, {meta['epochs']} epochs, {meta['train_wall_s']:.0f}s"
    )


if __name__ == "__main__":
    main()
