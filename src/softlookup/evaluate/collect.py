"""Every run's scores and training record -> the tidy tables the figures, claims and paper read.

    python -m softlookup.evaluate.collect --runs-dir results/runs --runs a-s1 b-s1
        --test-sets test_2016_flickr --out results/tables/scores.csv
        --training-out results/tables/training.csv
        [--point-scores results/runs/a-s1/ladder/scores.e2.test_2016_flickr.csv ...]

Each run's settings come from its own files: config.json (what was asked) and meta.json (what
happened), so a sweep is a group-by over columns, not a parse of run names.
scores.csv: one row per run x test set x bucket x metric (columns: tables.SCORES_COLUMNS), plus
rows of the pseudo test set "train" (bucket "all") holding the training record's scalars; column
`epoch` is "final" for the run's model and k for the scores of its weights at budget point k
(`--point-scores`, results/runs/<run>/ladder/scores.e<k>.<test set>.csv).
training.csv: one row per run x epoch (the settings columns, then log.csv's: epoch, steps,
train_loss, val_loss, lr, target_tokens, wall_s (that epoch's training), tokens_per_s; then device
and threads of the training job).
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pandas as pd

from ..data.buckets import ALL
from ..models.config import head_width
from ..rundir import read_meta, read_run_config, run_settings
from ..tables import FINAL, SCORES_COLUMNS, SETTING_COLUMNS

TRAINING_METRICS = [
    "train_tokens_per_s",
    "train_wall_s",
    "final_train_loss",
    "best_val_loss",
    "epochs",
    "parameters",
]


def setting_columns(run: str, config: dict, meta: dict) -> dict:
    """The settings columns of one trained run (see tables.SETTING_COLUMNS)."""
    settings = run_settings(run, config, meta)
    model = settings.model  # the settings it trained with, defaults filled in by train
    if model["arch"] == "gru":
        width = model["hidden_dim"]
        attention = model["attention"]
        shape = {
            "attention": attention,
            "d_model": width,
            "heads": 1 if attention != "none" else 0,
            "d_k": width if attention != "none" else None,
            "scale": attention == "scaled_dot",
            "causal_mask": True,  # a recurrent decoder never sees later target tokens
        }
    else:
        shape = {
            "attention": "scaled_dot" if model["scale"] else "dot",
            "d_model": model["d_model"],
            "heads": model["heads"],
            "d_k": head_width(model["d_model"], model["heads"], model["d_k"]),
            "scale": model["scale"],
            "causal_mask": model["causal_mask"],
        }
    train = settings.train
    return {
        "run": run,
        "variant": settings.variant,
        "base_model": settings.base_model,
        "arch": model["arch"],
        **shape,
        "padding_mask": model["padding_mask"],
        "max_train_words": train.get("max_source_words"),
        "epochs": train.get("epochs", meta.get("train_config", {}).get("epochs")),
        "seed": settings.seed,
        "parameters": meta.get("parameters"),
        "status": meta["status"],  # = rundir.run_status(run_dir)
    }


def training_rows(meta: dict) -> list[dict]:
    """Scalars of the training record, as rows of the 'train' pseudo test set."""
    return [
        {
            "test_set": "train",
            "bucket": ALL,
            "metric": name,
            "value": meta.get(name),
            "ci_low": meta.get(name),
            "ci_high": meta.get(name),
        }
        for name in TRAINING_METRICS
    ]


def point_of(path: Path) -> str:
    """The budget point of results/runs/<run>/ladder/scores.e<k>.<test set>.csv: "k"."""
    match = re.fullmatch(r"scores\.e(\d+)\..+\.csv", path.name)
    if match is None or path.parent.name != "ladder":
        raise ValueError(f"{path}: not a budget point's scores (ladder/scores.e<k>.<test set>.csv)")
    return match.group(1)


def run_rows(run: str, run_dir: Path, test_sets: list[str], points: list[Path]) -> pd.DataFrame:
    """The run's final scores of every test set, its training scalars, and the scores of its
    budget points (`points`: files of this run's ladder/)."""
    config, meta = read_run_config(run_dir), read_meta(run_dir)
    parts = [pd.DataFrame(training_rows(meta)).assign(epoch=FINAL)]
    parts += [pd.read_csv(run_dir / f"scores.{name}.csv").assign(epoch=FINAL) for name in test_sets]
    parts += [pd.read_csv(path).assign(epoch=point_of(path)) for path in points]
    table = pd.concat(parts, ignore_index=True)
    if meta["status"] != "ok":  # a diverged run's translations mean nothing: record no scores
        scored = table.test_set != "train"
        table.loc[scored, ["value", "ci_low", "ci_high"]] = float("nan")
    return table.assign(
        **setting_columns(run, config, meta),
        device=meta.get("environment", {}).get("device"),
        train_seconds=meta.get("train_wall_s"),
        tokens_per_s=meta.get("train_tokens_per_s"),
    )


def collect(
    runs: list[str], runs_dir: Path, test_sets: list[str], point_scores: list[Path] = ()
) -> pd.DataFrame:
    tables = [
        run_rows(
            run,
            runs_dir / run,
            test_sets,
            [p for p in point_scores if Path(p).parent.parent.name == run],
        )
        for run in runs
    ]
    return pd.concat(tables, ignore_index=True).reindex(columns=SCORES_COLUMNS)


def training_log(runs: list[str], runs_dir: Path) -> pd.DataFrame:
    """Per-epoch training log of every run with its settings columns."""
    tables = []
    for run in runs:
        run_dir = runs_dir / run
        config, meta = read_run_config(run_dir), read_meta(run_dir)
        log = pd.read_csv(run_dir / "log.csv")
        environment = meta.get("environment", {})
        tables.append(
            log.assign(
                **setting_columns(run, config, meta),
                device=environment.get("device"),
                threads=environment.get("threads"),
            )
        )
    table = pd.concat(tables, ignore_index=True)
    return table[SETTING_COLUMNS + [c for c in table.columns if c not in SETTING_COLUMNS]]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", required=True, type=Path)
    parser.add_argument("--runs", required=True, nargs="+", help="run names (directories)")
    parser.add_argument("--test-sets", required=True, nargs="+")
    parser.add_argument(
        "--point-scores",
        type=Path,
        nargs="*",
        default=[],
        help="scores of budget points: <runs-dir>/<run>/ladder/scores.e<k>.*.csv",
    )
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--training-out", type=Path, help="per-epoch table (training.csv)")
    args = parser.parse_args(argv)
    table = collect(args.runs, args.runs_dir, args.test_sets, args.point_scores)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"{len(table)} rows from {table.run.nunique()} runs -> {args.out}")
    if args.training_out:
        log = training_log(args.runs, args.runs_dir)
        log.to_csv(args.training_out, index=False)
        print(f"{len(log)} epochs -> {args.training_out}")


if __name__ == "__main__":
    main()
