"""Build the PDF: copy paper/ sources, the rendered parts and the figures into a build folder,
run latexmk there, and on failure print the first TeX errors (not only "see paper.log").

python -m softlookup.report.build --sources paper/paper.tex paper/refs.bib \
    --generated results/paper/generated/*.tex --figures results/figures/*.pdf \
    --build-dir results/paper/build --out paper/paper.pdf
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..paths import PAPER_MAIN

HINT = (
    "latexmk not found: run `make tex` (TeX Live from apt-get), or install latexmk and"
    " texlive-latex-extra yourself"
)


def first_errors(log: str, count: int = 5, context: int = 6) -> str:
    """The first `count` TeX errors ('! ...' lines) of a .log, each with its next lines."""
    lines = log.splitlines()
    found = []
    for i, line in enumerate(lines):
        if line.startswith("!"):
            found.append("\n".join(lines[i : i + context + 1]))
            if len(found) == count:
                break
    return "\n".join(found)


def build(
    sources: list[Path],
    generated: list[Path],
    figures: list[Path],
    build_dir: Path,
    out: Path,
    main: str = "paper.tex",
) -> int:
    if shutil.which("latexmk") is None:
        print(HINT, file=sys.stderr)
        return 1
    shutil.rmtree(build_dir, ignore_errors=True)
    for folder in ("generated", "figures"):
        (build_dir / folder).mkdir(parents=True)
    for source in sources:
        copy = shutil.copytree if source.is_dir() else shutil.copy
        copy(source, build_dir / source.name)
    for path in generated:
        shutil.copy(path, build_dir / "generated" / path.name)
    for path in figures:
        shutil.copy(path, build_dir / "figures" / path.name)
    run = subprocess.run(
        ["latexmk", "-pdf", "-interaction=nonstopmode", "-halt-on-error", main],
        cwd=build_dir,
        capture_output=True,
        text=True,
        check=False,
    )
    print(run.stdout[-4000:])
    if run.returncode != 0:
        log_path = build_dir / Path(main).with_suffix(".log")
        log = log_path.read_text(errors="replace") if log_path.exists() else ""
        errors = first_errors(log) or "\n".join((run.stdout + run.stderr).splitlines()[-30:])
        print(f"LaTeX failed; the first errors of {log_path}:\n{errors}", file=sys.stderr)
        return run.returncode
    out.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(build_dir / Path(main).with_suffix(".pdf"), out)
    pages = re.findall(r"Output written on \S+ \((\d+) pages?", log_text(build_dir, main))
    print(f"{out}: {pages[-1] if pages else '?'} pages")
    return 0


def log_text(build_dir: Path, main: str) -> str:
    path = build_dir / Path(main).with_suffix(".log")
    return path.read_text(errors="replace") if path.exists() else ""


def float_order(written: dict[str, str], paper: Path = PAPER_MAIN) -> list[str]:
    """Every figure and table label of the rendered sections `written` ({section: LaTeX}) in the
    order LaTeX numbers them: the order in which `paper` inputs its sections, then each
    section's own order."""
    inputs = re.findall(r"\\input\{generated/([^}]+)\.tex\}", paper.read_text())
    return [
        label
        for name in inputs
        for label in re.findall(r"\\label\{((?:fig|tab):[^}]+)\}", written.get(name, ""))
    ]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", type=Path, required=True)
    parser.add_argument("--generated", nargs="*", type=Path, default=[])
    parser.add_argument("--figures", nargs="*", type=Path, default=[])
    parser.add_argument("--build-dir", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    sys.exit(build(args.sources, args.generated, args.figures, args.build_dir, args.out))


if __name__ == "__main__":
    main()
