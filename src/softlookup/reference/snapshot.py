"""Keep a finished build's small outputs as the reference a reviewer's rerun is compared with.

python -m softlookup.reference.snapshot --config-name config --config-json merged.json \
    --paper paper/paper.pdf --scores results/tables/scores.csv ... --benchmarks results/benchmarks \
    --results results --out results/reference/config --compare-command "make compare" \
    --rebuild-command "make paper"

Copies the PDF, the scores, comparisons, seed-variance and claims tables and the data manifest (no
checkpoints), packs what re-judging needs into hypotheses.tar.gz (every run's hypotheses, settings
and training record, the test sets, the probe, benchmark and analysis CSVs: see
softlookup.reference.archive) and writes provenance.json: commit, config and its hash, package
versions, CPU model, and the wall time of every rule (summed over its jobs, from Snakemake's
`benchmark:` files), plus a README.md that says when and on what the reference was made.

The reference is written whole or not at all (softlookup.atomic.atomic_directory): an interrupted
snapshot leaves the committed one as it was. A build that lacks a file is refused before anything
is written, in one line naming the file and the command that rebuilds it.
"""

from __future__ import annotations

import argparse
import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd

from ..atomic import atomic_directory
from ..provenance import config_hash, environment
from .archive import ARCHIVE, evidence, pack

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


class IncompleteBuild(FileNotFoundError):
    """A build without a file the reference keeps: which file, and the command that rebuilds it."""


def check_complete(paths: list[Path], rebuild_command: str) -> None:
    """Refuse, in one line, a build that lacks one of `paths`."""
    missing = [path for path in paths if not Path(path).is_file()]
    if missing:
        more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
        raise IncompleteBuild(
            f"cannot make a reference: {missing[0]} is missing{more}; rebuild it with"
            f" `{rebuild_command}`"
        )


def snapshot(
    files: dict[str, Path],
    config: dict,
    config_name: str,
    benchmarks: Path,
    out_dir: Path,
    compare_command: str,
    wall_seconds: float | None = None,
    *,
    results: Path,
    rebuild_command: str,
) -> dict:
    """Copy `files` (keys from KEPT) and the archive of what re-judging needs (from `results`,
    the build's results/ folder) into out_dir with provenance, whole or not at all; returns the
    provenance. compare_command: the make line that compares a rerun with it, rebuild_command the
    one that completes the build (`make reference` passes its own CONFIG and RUN)."""
    check_complete(list(files.values()), rebuild_command)
    languages = config["data"]["src"], config["data"]["tgt"]
    kept = evidence(results, files["scores"], files["manifest"], *languages)
    check_complete([results / path for path in kept], rebuild_command)
    env = environment()  # before the copies: the committed reference they replace is tracked
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
    with atomic_directory(out_dir) as fresh:
        write_reference(files, provenance, fresh, compare_command)
        pack(results, kept, fresh / ARCHIVE)
    return provenance


def write_reference(
    files: dict[str, Path], provenance: dict, out_dir: Path, compare_command: str
) -> None:
    """The copies, provenance.json and README.md in out_dir (a fresh folder)."""
    for kind, path in files.items():
        shutil.copyfile(path, out_dir / FILE_NAMES[kind])
    (out_dir / "provenance.json").write_text(json.dumps(provenance, indent=2, default=str) + "\n")
    env, wall_seconds = provenance["environment"], provenance["wall_seconds"]
    wall = f"{wall_seconds / 60:.1f} min wall" if wall_seconds else "wall time not recorded"
    (out_dir / "README.md").write_text(
        f"# Reference build of config `{provenance['config_name']}`\n\n"
        f"Made {provenance['made']} from commit {env['commit'][:12]}"
        f"{' (uncommitted changes)' if env['dirty'] else ''} on {env['device_name']}"
        f" ({env['threads']} threads), torch {env['torch']}, Triton {env['triton']}: {wall},"
        f" {provenance['job_seconds_total'] / 60:.1f} min of job time summed over rules.\n"
        f"Compare a rerun with it: `{compare_command}`"
        " (see the project README); re-judge it with today's code, without retraining:"
        " `make rejudge` with the same arguments.\n"
    )


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
    parser.add_argument(
        "--rebuild-command",
        required=True,
        help="the make line that rebuilds a missing file of this build",
    )
    parser.add_argument("--results", type=Path, required=True, help="the build's results/")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    files = {kind: getattr(args, kind) for kind in KEPT}
    config = json.loads(args.config_json.read_text())
    try:
        snapshot(
            files,
            config,
            args.config_name,
            args.benchmarks,
            args.out,
            args.compare_command,
            args.wall_seconds,
            results=args.results,
            rebuild_command=args.rebuild_command,
        )
    except IncompleteBuild as error:
        raise SystemExit(str(error)) from None
    print(f"reference written to {args.out}")


if __name__ == "__main__":
    main()
