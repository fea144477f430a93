"""A run directory's JSON files, read and written without torch (the weights: models/checkpoint.py).

results/runs/<run>/
    config.json     the run's settings (written by the workflow's `run_config` rule)
    meta.json       training record: status ("ok" or "diverged"), epochs, losses, the model and
                    train settings with their defaults filled in, versions
"""

from __future__ import annotations

import json
import os
from pathlib import Path


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
    """Write to a temporary file beside `path`, then rename: a kill never leaves half a file."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial")
    partial.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
    os.replace(partial, path)
