"""A run directory's weights, written and read in one place (its JSON files: softlookup.rundir).

results/runs/<run>/
    checkpoint.pt   training state after the last finished epoch (for resuming), with the
                    fingerprint of what it was trained on
    best.pt         the best validation weights so far (a model file), kept across resumes
    model.pt        the model file translation and analysis read (a copy of best.pt)

Model files and checkpoints are written atomically (softlookup.atomic) and read with weights_only=True, so a
truncated or foreign file fails with a clear `CheckpointError` rather than executing anything.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import torch

from ..atomic import atomic_file
from . import build_model


class CheckpointError(RuntimeError):
    pass


MODEL_KEYS = ("model_config", "vocab_size", "state_dict")
CHECKPOINT_KEYS = ("model", "optimizer", "progress", "rng", "fingerprint")


def save_atomic(state: dict, path: Path) -> None:
    """torch.save whole or not at all (softlookup.atomic): a kill never leaves half a file, and a
    full disk says so, not torch's "[enforce fail at inline_container.cc:672] unexpected pos"."""
    with atomic_file(path, hiding=(RuntimeError,)) as partial:
        torch.save(state, partial)


def copy_atomic(source: Path, target: Path) -> None:
    with atomic_file(target) as partial:
        shutil.copyfile(source, partial)


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


def save_model(
    path: Path, run: dict, model: torch.nn.Module, vocab_size: int, fingerprint: dict | None = None
) -> None:
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
