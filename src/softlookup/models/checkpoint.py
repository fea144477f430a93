"""Atomic checkpoint writes and safe, checked reads (weights_only=True)."""

from __future__ import annotations

import os
from pathlib import Path

import torch


class CheckpointError(RuntimeError):
    pass


def save_atomic(state: dict, path: Path) -> None:
    """Write to a temporary file beside `path`, then rename: a kill never leaves half a file."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    torch.save(state, partial)
    os.replace(partial, path)


def load_checked(path: Path, required: tuple[str, ...]) -> dict:
    """Load a checkpoint with weights_only=True; fail clearly if it is truncated or foreign."""
    try:
        state = torch.load(path, map_location="cpu", weights_only=True)
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
