"""A test's own working directory: the project's sources only, linked or copied, as the
Makefile's `rundir` links them. Never a build's outputs (paper/paper.pdf, paper/generated/,
results/, .snakemake/, runs/): a checkout where `make paper` has run gives every test the same
outcome as a fresh clone (issue 37)."""

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# what a workflow run reads from the repository (benchmarks/: the committed bench.measured CSVs;
# paper/: its sources, not the folder, where the build writes generated/ and paper.pdf)
SOURCES = [
    "Snakefile",
    "workflow",
    "config",
    "profiles",
    "benchmarks",
    "paper/paper.tex",
    "paper/refs.bib",
    "paper/sections",
    "paper/published.yaml",
]


def project_sources(workdir: Path, copy: bool = False, checkout: Path = ROOT) -> Path:
    """`checkout`'s sources in `workdir`: linked, or copied (a long run, safe from edits
    meanwhile, or a test that edits them)."""
    for source in SOURCES:
        origin, place = checkout / source, workdir / source
        place.parent.mkdir(parents=True, exist_ok=True)
        if not copy:
            place.symlink_to(origin)
        elif origin.is_dir():
            shutil.copytree(origin, place)
        else:
            shutil.copy(origin, place)
    return workdir
