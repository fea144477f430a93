"""The probes' one command line, driven by the registry (`PROBES`):

    python -m softlookup.probes <probe> --out results/probes/<probe>.csv [--seed S] [options]

Each probe module gives `add_arguments(parser)` (its own options) and `measure(args) ->
TidyRows`; this parses --out, --seed and those options, measures and writes the tidy CSV.
`cli_options` turns a probe's config mapping into these options (the workflow's rule `probe`).
The probe modules (and torch) are imported only when the command line is built.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType

from . import PROBES


def probe_module(name: str) -> ModuleType:
    """The module of one probe of `PROBES`."""
    return importlib.import_module(f"{__package__}.{name}")


def cli_options(settings: dict, seed: int) -> list[str]:
    """A probe's config mapping as a CLI option list (the workflow's rule `probe`): n_pairs: 10000
    -> ["--n-pairs", "10000"], lists joined by commas (dims: [4, 16] -> ["--dims", "4,16"]); the
    shared seed first."""
    options = ["--seed", str(seed)]
    for key, value in settings.items():
        text = ",".join(str(v) for v in value) if isinstance(value, list) else str(value)
        options += [f"--{key.replace('_', '-')}", text]
    return options


def build_parser() -> argparse.ArgumentParser:
    """One subcommand per probe: --out, --seed and the probe module's own options."""
    parser = argparse.ArgumentParser(
        prog="python -m softlookup.probes", description="Measure one probe into a tidy CSV."
    )
    probes = parser.add_subparsers(dest="probe", required=True, metavar="PROBE")
    for name in PROBES:
        module = probe_module(name)
        summary = (module.__doc__ or name).strip().splitlines()[0]
        command = probes.add_parser(name, help=summary, description=summary)
        command.add_argument("--out", type=Path, required=True, help="CSV to write")
        command.add_argument("--seed", type=int, default=0, help="seed of every random draw")
        module.add_arguments(command)
    return parser


def main(argv: Sequence[str] | None = None) -> None:
    args = build_parser().parse_args(argv)
    rows = probe_module(args.probe).measure(args)
    rows.write(args.out)
    print(f"{rows.probe}: {len(rows.rows)} rows -> {args.out}")
