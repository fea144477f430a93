"""The package's imports run down the layers ARCHITECTURE.md lists, never back up.

ARCHITECTURE.md's "Layers" list is read here: every module of src/softlookup/ sits in one layer,
and an import from one top-level module (or package) to another reaches only a lower layer, at
the top of a file or inside a function alike."""

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "softlookup"


def layers() -> list[list[str]]:
    """ARCHITECTURE.md's layers, lowest first: each a list of top-level module names."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    section = text.split("\nLayers", 1)[1].split("\n\n", 1)[1].split("\n\n", 1)[0]
    items = [
        re.sub(r"\([^)]*\)", "", line)  # a note in parentheses names no layer
        for line in section.splitlines()
        if re.match(r"\d+\. ", line)
    ]
    found = [re.findall(r"`([a-z_]+)(?:\.py|/)`", item) for item in items]
    assert found, "ARCHITECTURE.md: no numbered list under 'Layers'"
    return found


def top_level(path: Path, package: Path = PACKAGE) -> str:
    """softlookup/evaluate/score.py -> 'evaluate'; softlookup/config.py -> 'config'."""
    return path.relative_to(package).parts[0].removesuffix(".py")


def imported(path: Path, root: Path = PACKAGE) -> set[str]:
    """The top-level modules of softlookup that `path` imports (relative or absolute)."""
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]  # ("softlookup", ...)
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = list(package[: len(package) - node.level + 1]) if node.level else []
            parts = [*base, *(node.module or "").split(".")] if node.module else base
            if parts[:1] != ["softlookup"]:
                continue
            if len(parts) > 1:
                names.add(parts[1])
            else:  # from softlookup import x / from .. import x
                names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            names.update(
                alias.name.split(".")[1]
                for alias in node.names
                if alias.name.startswith("softlookup.")
            )
    return names


def test_every_module_sits_in_one_layer():
    placed = [name for layer in layers() for name in layer]
    modules = {top_level(p) for p in PACKAGE.rglob("*.py")} - {"__init__"}
    assert sorted(set(placed)) == sorted(placed), "a module is named in two layers"
    assert modules == set(placed), (
        f"in no layer: {modules - set(placed)}, absent: {set(placed) - modules}"
    )


def test_no_import_runs_back_up_the_layers():
    level = {name: index for index, layer in enumerate(layers()) for name in layer}
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        own = top_level(path)
        if own == "__init__":
            continue
        for name in sorted(imported(path) - {own}):
            if level[name] >= level[own]:
                upward.append(
                    f"{path.relative_to(ROOT)} imports {name} (layer {level[name] + 1}"
                    f" of {own}'s {level[own] + 1})"
                )
    assert not upward, "\n".join(upward)


def test_imports_are_found_relative_absolute_and_inside_functions(tmp_path):
    root = tmp_path / "softlookup"
    source = root / "data" / "prepare.py"
    source.parent.mkdir(parents=True)
    source.write_text(
        "import numpy\nfrom . import bpe\nfrom ..models import PAD\nimport softlookup.paths\n"
        "def f():\n    from ..evaluate.score import final_point\n"
        "from softlookup import config\n"
    )
    assert imported(source, root) == {"data", "models", "paths", "evaluate", "config"}
