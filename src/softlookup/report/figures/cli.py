"""The command line every figure module shares: load the study, draw, save.

python -m softlookup.report.figures.<module> --results results --config results/paper/config.json \
    [--runs R ...] [--bench B.csv ...] [--figure NAME] --out F.pdf
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from ..study import load
from . import style


def run(doc: str, draw: Callable, argv: list[str] | None = None, named: bool = False) -> None:
    """Parse the options, load the study (only the runs and benchmarks named), draw with
    draw(study), or draw(study, figure) for a module of several figures (`named`), and save."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--config", type=Path, help="the merged config as JSON")
    parser.add_argument("--runs", nargs="*", default=[], help="the runs to read (default: none)")
    parser.add_argument("--bench", nargs="*", type=Path, help="benchmark CSVs (default: all)")
    parser.add_argument("--out", required=True, type=Path)
    if named:
        parser.add_argument("--figure", required=True, help="which figure of the module")
    args = parser.parse_args(argv)
    style.setup()
    study = load(args.results, args.config, runs=args.runs, bench=args.bench)
    fig = draw(study, args.figure) if named else draw(study)
    print(style.save(fig, args.out))
