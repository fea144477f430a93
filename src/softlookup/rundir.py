"""A run directory's JSON files, read and written without torch (the weights: models/checkpoint.py).

results/runs/<run>/
    config.json     the run's settings (written by the workflow's `run_config` rule)
    meta.json       training record: status ("ok" or "diverged"), epochs, losses, the model and
                    train settings with their defaults filled in, versions

`run_settings` is the one reading of what a run is (variant, base model, seed, model, train):
the tidy tables (evaluate/collect.py) and the report (report/study.py) both go through it.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import atomic_file

RUN_SEED = re.compile(r"-s(\d+)$")  # a run is <variant>-s<seed>


def variant_of(run: str) -> str:
    """The variant of a run name: 'transformer.heads-1-s2' -> 'transformer.heads-1'."""
    return RUN_SEED.sub("", str(run))


def split_run(run: str) -> tuple[str, int]:
    """A run name's variant and seed: 'transformer.heads-1-s2' -> ('transformer.heads-1', 2)."""
    found = RUN_SEED.search(str(run))
    if found is None:
        raise ValueError(f"not a run name (<variant>-s<seed>): {run!r}")
    return variant_of(run), int(found.group(1))


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


@dataclass(frozen=True)
class RunSettings:
    """What a run is: its variant, base model and seed, and the model and train settings."""

    run: str
    variant: str
    base_model: str
    seed: int | None
    model: dict = field(default_factory=dict)
    train: dict = field(default_factory=dict)


def run_settings(run: str, config: dict, meta: dict) -> RunSettings:
    """A run's settings, read one way by every reader (the tidy tables, the report).

    `config`: its config.json (what was asked; meta.json's `run` holds a copy, read when
    config.json is gone); `meta`: its meta.json, or {} for a run not trained yet. The model is the
    one it trained with (meta.json's `model_config`, defaults filled in), else the one asked for.
    """
    asked = config or meta.get("run") or {}
    variant = asked.get("variant") or variant_of(run)
    return RunSettings(
        run=run,
        variant=variant,
        base_model=asked.get("base_model") or variant.split(".")[0],
        seed=asked.get("seed"),
        model=meta.get("model_config") or asked.get("model") or {},
        train=asked.get("train") or {},
    )


def run_status(path: Path) -> str:
    """ "ok" or "diverged", from the run's meta.json (for those that need only the status)."""
    return read_meta(path)["status"]


def write_json(data: dict, path: Path) -> None:
    """Write whole or not at all (softlookup.atomic): a kill never leaves half a file."""
    with atomic_file(path) as partial:
        partial.write_text(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")
