"""Re-judge a committed reference with today's code, without retraining.

python -m softlookup.reference.rejudge --reference results/reference/test \
    --directory runs/rejudge-test --configfile config/test.yaml [--cores 2] [--dry-run]

`--directory` is a scratch run directory laid out as the Makefile's `rundir` lays one out (links to
config/, workflow/, the paper's sources); `make rejudge CONFIG=...` makes it. Its results/ is
emptied and filled from the reference's hypotheses.tar.gz (softlookup.reference.archive): every
run's hypotheses, settings and training record, the test sets, the probe, benchmark and analysis
CSVs. Then the project's own workflow runs there with only the rules that compute from those
files allowed (`--allowed-rules`: every rule but the MEASURING ones, which train, translate or
measure): the hypotheses are scored again, compared, collected, judged by the claims ledger, drawn
and written up, and no training job can be planned. Last, the re-judged tables, ledger and PDF
(REJUDGED) replace the reference's own, whole or not at all, and provenance.json records when and
from which commit it was re-judged. `--dry-run` stops after Snakemake's dry run (the jobs it plans).
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shutil
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

from ..atomic import atomic_directory
from ..provenance import environment
from .archive import ARCHIVE, unpack

# rules that make the evidence (corpus, weights, translations, measurements): never run here
MEASURING = (
    "fetch_*",
    "prepare*",
    "train_bpe*",
    "run_config",
    "train",
    "translate",
    "translate_point",
    "attention_maps",
    "bench_*",
    "probe",
)
TARGET = "paper/paper.pdf"
# reference file -> the re-judged build's file it is replaced with (under the run directory)
REJUDGED = {
    "paper.pdf": "paper/paper.pdf",
    "scores.csv": "results/tables/scores.csv",
    "comparisons.csv": "results/tables/comparisons.csv",
    "seed_variance.csv": "results/tables/seed_variance.csv",
    "training.csv": "results/tables/training.csv",
    "claims.csv": "results/claims/claims.csv",
    "checks.csv": "results/claims/checks.csv",
}


class RejudgeError(RuntimeError):
    """A reference that cannot be re-judged, or a workflow that failed, in one line."""


def snakemake(directory: Path, configfiles: list[str], *args: str) -> subprocess.CompletedProcess:
    """This Python's Snakemake on the run directory (rules run the Python that runs it)."""
    command = [sys.executable, "-m", "snakemake", "--directory", str(directory)]
    return subprocess.run(
        [*command, "--configfile", *configfiles, *args], check=False, text=True, capture_output=True
    )


def allowed_rules(directory: Path, configfiles: list[str]) -> list[str]:
    """The workflow's rules less the MEASURING ones."""
    listed = snakemake(directory, configfiles, "--list-rules")
    if listed.returncode:
        raise RejudgeError(f"snakemake --list-rules failed: {last_line(listed)}")
    rules = [line.strip() for line in listed.stdout.splitlines() if line.strip()]
    return [rule for rule in rules if not any(fnmatch.fnmatch(rule, p) for p in MEASURING)]


def last_line(result: subprocess.CompletedProcess) -> str:
    lines = (result.stderr or result.stdout).strip().splitlines()
    return lines[-1] if lines else f"exit status {result.returncode}"


def restore(reference: Path, directory: Path) -> list[Path]:
    """An empty results/ in the run directory, filled from the reference's archive."""
    archive = reference / ARCHIVE
    if not archive.is_file():
        raise RejudgeError(
            f"{reference} has no {ARCHIVE} (made before references kept their hypotheses):"
            " make the reference again with `make reference`"
        )
    for stale in (directory / "results", directory / ".snakemake"):
        shutil.rmtree(stale, ignore_errors=True)
    (directory / TARGET).unlink(missing_ok=True)
    return unpack(archive, directory / "results")


def store(reference: Path, directory: Path) -> None:
    """The re-judged files in place of the reference's own, whole or not at all; provenance.json
    says when and from which commit."""
    env = environment()
    provenance = json.loads((reference / "provenance.json").read_text())
    provenance["rejudged"] = {
        "made": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": env["commit"],
        "dirty": env["dirty"],
    }
    with atomic_directory(reference) as fresh:
        for kept in sorted(reference.iterdir()):
            shutil.copyfile(kept, fresh / kept.name)
        for name, made in REJUDGED.items():
            shutil.copyfile(directory / made, fresh / name)
        (fresh / "provenance.json").write_text(json.dumps(provenance, indent=2, default=str) + "\n")


def rejudge(
    reference: Path, directory: Path, configfiles: list[str], cores: int, dry_run: bool = False
) -> str:
    """Restore, run the workflow without its MEASURING rules, store; returns Snakemake's output
    (its dry run's with dry_run, and nothing is stored)."""
    restore(reference, directory)
    rules = allowed_rules(directory, configfiles)
    args = ["--cores", str(cores), "--allowed-rules", *rules, "--", TARGET]
    result = snakemake(directory, configfiles, *(["--dry-run"] if dry_run else []), *args)
    if result.returncode:
        raise RejudgeError(
            f"re-judging {reference} failed: {last_line(result)} (logs: {directory}/results/logs/)"
        )
    if not dry_run:
        store(reference, directory)
    return result.stdout + result.stderr


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--reference", type=Path, required=True)
    parser.add_argument("--directory", type=Path, required=True, help="the scratch run directory")
    parser.add_argument("--configfile", nargs="+", required=True, help="as `make paper` gives")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--dry-run", action="store_true", help="plan only: print the jobs")
    args = parser.parse_args(argv)
    try:
        output = rejudge(args.reference, args.directory, args.configfile, args.cores, args.dry_run)
    except RejudgeError as error:
        raise SystemExit(str(error)) from None
    print(output if args.dry_run else f"{args.reference} re-judged in {args.directory}")


if __name__ == "__main__":
    main()
