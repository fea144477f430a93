"""Every run's scores and training record -> one tidy table (run x test set x bucket x metric)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd

COLUMNS = [
    "run_id",
    "model",
    "arch",
    "attention",
    "sweep",
    "sweep_value",
    "seed",
    "test_set",
    "bucket",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "status",
    "device",
    "sentences",
    "signature",
]
TRAINING_METRICS = [
    "train_tokens_per_s",
    "train_wall_s",
    "final_train_loss",
    "best_val_loss",
    "epochs",
    "parameters",
]


def training_rows(meta: dict) -> list[dict]:
    """Scalars of the training record, as rows of the 'train' pseudo test set."""
    return [
        {
            "test_set": "train",
            "bucket": "all",
            "metric": name,
            "value": meta.get(name),
            "ci_low": meta.get(name),
            "ci_high": meta.get(name),
        }
        for name in TRAINING_METRICS
    ]


def run_rows(run_id: str, settings: dict, run_dir: Path, test_sets: list[str]) -> pd.DataFrame:
    meta = json.loads((run_dir / "meta.json").read_text())
    parts = [pd.DataFrame(training_rows(meta))]
    parts += [pd.read_csv(run_dir / f"scores.{name}.csv") for name in test_sets]
    table = pd.concat(parts, ignore_index=True)
    if meta["status"] != "ok":  # a diverged run's translations mean nothing: record no scores
        scored = table.test_set != "train"
        table.loc[scored, ["value", "ci_low", "ci_high"]] = float("nan")
    return table.assign(
        run_id=run_id, status=meta["status"], device=meta["environment"]["device"], **settings
    )


def collect(runs: dict[str, dict], results_dir: Path, test_sets: list[str]) -> pd.DataFrame:
    tables = [
        run_rows(run_id, settings, results_dir / run_id, test_sets)
        for run_id, settings in runs.items()
    ]
    return pd.concat(tables, ignore_index=True).reindex(columns=COLUMNS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", required=True, help="JSON: run id -> settings columns")
    parser.add_argument("--results-dir", required=True, type=Path)
    parser.add_argument("--test-sets", required=True, nargs="+")
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    table = collect(json.loads(args.runs), args.results_dir, args.test_sets)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"{len(table)} rows from {table.run_id.nunique()} runs -> {args.out}")


if __name__ == "__main__":
    main()
