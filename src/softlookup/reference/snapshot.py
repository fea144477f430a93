"""Keep a finished build's small outputs as the reference a reviewer's rerun is compared with.

python -m softlookup.reference.snapshot --config-name config --config-json merged.json \
    --paper paper/paper.pdf --scores results/tables/scores.csv ... --benchmarks results/benchmarks \
    --out results/reference/config --compare-command "make compare"

Copies the PDF, the scores, comparisons, seed-variance and claims tables and the data manifest (no checkpoints,
no hypotheses) and writes provenance.json: commit, config and its hash, package versions, CPU
model, and the wall time of every rule (summed over its jobs, from Snakemake's `benchmark:`
files), plus a README.md that says when and on what the reference was made.
"""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..provenance import config_hash, environment

KEPT = (
    "paper",
    "scores",
    "comparisons",
    "seed_variance",
    "training",
    "claims",
    "checks",
    "manifest",
)
FILE_NAMES = {
    "paper": "paper.pdf",
    "scores": "scores.csv",
    "comparisons": "comparisons.csv",
    "seed_variance": "seed_variance.csv",
    "training": "training.csv",
    "claims": "claims.csv",
    "checks": "checks.csv",
    "manifest": "manifest.json",
}


def rule_seconds(benchmarks: Path) -> dict[str, float]:
    """Seconds per rule, summed over its jobs: results/benchmarks/<rule>/<job>.tsv ("s" column)."""
    seconds: dict[str, float] = {}
    for tsv in sorted(benchmarks.glob("*/*.tsv")):
        table = pd.read_csv(tsv, sep="\t")
        if "s" in table and len(table):
            seconds[tsv.parent.name] = seconds.get(tsv.parent.name, 0.0) + float(
                table["s"].iloc[-1]
            )
    return dict(sorted(seconds.items(), key=lambda item: -item[1]))


def snapshot(
    files: dict[str, Path],
    config: dict,
    config_name: str,
    benchmarks: Path,
    out_dir: Path,
    compare_command: str,
    wall_seconds: float | None = None,
) -> dict:
    """Copy `files` (keys from KEPT) into out_dir with provenance; returns the provenance.
    compare_command: the make line that compares a rerun with it (`make reference` passes its
    own CONFIG and RUN), for the README."""
    missing = [f"{kind}: {path}" for kind, path in files.items() if not Path(path).is_file()]
    if missing:
        raise FileNotFoundError(f"cannot snapshot a build that lacks {', '.join(missing)}")
    env = environment()  # before the copies: the committed reference they replace is tracked
    out_dir.mkdir(parents=True, exist_ok=True)
    for kind, path in files.items():
        shutil.copyfile(path, out_dir / FILE_NAMES[kind])
    per_rule = rule_seconds(benchmarks)
    provenance = {
        "made": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "config_name": config_name,
        "config_hash": config_hash(config),
        "config": config,
        "environment": env,
        "wall_seconds": wall_seconds,
        "rule_seconds": per_rule,
        "job_seconds_total": round(sum(per_rule.values()), 1),
    }
    (out_dir / "provenance.json").write_text(json.dumps(provenance, indent=2, default=str) + "\n")
    wall = f"{wall_seconds / 60:.1f} min wall" if wall_seconds else "wall time not recorded"
    (out_dir / "README.md").write_text(
        f"# Reference build of config `{config_name}`\n\n"
        f"Made {provenance['made']} from commit {env['commit'][:12]}"
        f"{' (uncommitted changes)' if env['dirty'] else ''} on {env['device_name']}"
        f" ({env['threads']} threads), torch {env['torch']}, Triton {env['triton']}: {wall},"
        f" {provenance['job_seconds_total'] / 60:.1f} min of job time summed over rules.\n"
        f"Compare a rerun with it: `{compare_command}`"
        " (see the project README).\n"
    )
    return provenance


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config-name", required=True)
    parser.add_argument("--config-json", type=Path, required=True, help="the merged config")
    for kind in KEPT:
        parser.add_argument(f"--{kind.replace('_', '-')}", type=Path, required=True)
    parser.add_argument("--benchmarks", type=Path, required=True)
    parser.add_argument("--wall-seconds", type=float)
    parser.add_argument(
        "--compare-command",
        required=True,
        help="the make line that compares a rerun with this build",
    )
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    files = {kind: getattr(args, kind) for kind in KEPT}
    config = json.loads(args.config_json.read_text())
    snapshot(
        files,
        config,
        args.config_name,
        args.benchmarks,
        args.out,
        args.compare_command,
        args.wall_seconds,
    )
    print(f"reference written to {args.out}")


if __name__ == "__main__":
    main()
