"""Everything a run directory holds, written and read in one place.

results/runs/<run>/
    config.json     the run's settings (written by the workflow's `run_config` rule)
    checkpoint.pt   training state after the last finished epoch (for resuming), with the
                    fingerprint of what it was trained on
    best.pt         the best validation weights so far (a model file), kept across resumes
    model.pt        the model file translation and analysis read (a copy of best.pt)
    meta.json       training record: status ("ok" or "diverged"), epochs, losses, versions

Model files and checkpoints are written atomically and read with weights_only=True, so a
truncated or foreign file fails with a clear `CheckpointError` rather than executing anything.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import torch

from . import build_model


class CheckpointError(RuntimeError):
    pass


MODEL_KEYS = ("model_config", "vocab_size", "state_dict")
CHECKPOINT_KEYS = ("model", "optimizer", "progress", "rng", "fingerprint")


def save_atomic(state: dict, path: Path) -> None:
    """Write to a temporary file beside `path`, then rename: a kill never leaves half a file."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    torch.save(state, partial)
    os.replace(partial, path)


def copy_atomic(source: Path, target: Path) -> None:
    target = Path(target)
    partial = target.with_name(f".{target.name}.partial")
    shutil.copyfile(source, partial)
    os.replace(partial, target)


def load_checked(path: Path, required: tuple[str, ...], device="cpu") -> dict:
    """Load a checkpoint with weights_only=True; fail clearly if it is truncated or foreign."""
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception as error:  # torch raises several types for a damaged file
        raise CheckpointError(
            f"checkpoint {path} cannot be read (truncated or not a torch file): {error}"
        ) from error
    missing = [key for key in required if not isinstance(state, dict) or key not in state]
    if missing:
        raise CheckpointError(
            f"checkpoint {path} is not a softlookup checkpoint: missing {missing}"
        )
    return state


# -- model files (model.pt, best.pt) ------------------------------------------------------------


def model_file(run: dict, model: torch.nn.Module, vocab_size: int, fingerprint=None) -> dict:
    """What a model file holds: the model config (JSON), vocabulary size, weights."""
    state = {
        "model_config": json.dumps(run["model"], sort_keys=True),
        "vocab_size": vocab_size,
        "state_dict": model.state_dict(),
    }
    if fingerprint is not None:
        state["fingerprint"] = json.dumps(fingerprint, sort_keys=True)
    return state


def save_model(path: Path, run: dict, model: torch.nn.Module, vocab_size: int,
               fingerprint: dict | None = None) -> None:
    save_atomic(model_file(run, model, vocab_size, fingerprint), path)


def load_model(path: Path, device: torch.device | str = "cpu") -> torch.nn.Module:
    """A saved model, rebuilt from its own config, in eval mode on `device`."""
    saved = load_checked(path, MODEL_KEYS, device=device)
    model = build_model(json.loads(saved["model_config"]), saved["vocab_size"])
    model.load_state_dict(saved["state_dict"])
    return model.to(device).eval()


def model_fingerprint(path: Path) -> dict | None:
    """The training fingerprint a model file was saved with (None for older files)."""
    saved = load_checked(path, MODEL_KEYS)
    return json.loads(saved["fingerprint"]) if "fingerprint" in saved else None


# -- the run directory's JSON files -------------------------------------------------------------


def _read_run_json(path: Path, name: str, what: str) -> dict:
    """A run's <name> (path of the file or of the run directory); a clear error if absent."""
    path = Path(path)
    if path.is_dir():
        path = path / name
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")
    return json.loads(path.read_text())


def read_run_config(path: Path) -> dict:
    """A run's config.json (path of the file or of the run directory)."""
    return _read_run_json(path, "config.json", "run config")


def read_meta(path: Path) -> dict:
    """A run's meta.json (path of the file or of the run directory)."""
    return _read_run_json(path, "meta.json", "run metadata")


def run_status(path: Path) -> str:
    """"ok" or "diverged", from the run's meta.json (for those that need only the status)."""
    return read_meta(path)["status"]


def write_json(data: dict, path: Path) -> None:
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(partial, path)
