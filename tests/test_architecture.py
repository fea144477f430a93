"""ARCHITECTURE.md checked against the sources: the package's imports run down the layers it
lists, never back up; every path it names exists; the report reads files only through
report/study.py; the bucket label "all" is typed only in data/buckets.py; every rule logs and
times itself in its own folder.

ARCHITECTURE.md's "Layers" list is read here: every module of src/softlookup/ sits in one layer,
and an import from one top-level module (or package) to another reaches only a lower layer, at
the top of a file or inside a function alike."""

import ast
import fnmatch
import os
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


# What several stages write and read, each defined in one module of the lowest layer: how a number
# is written as text, the tidy tables' columns and values, the intervals' promised coverage
ONE_PLACE = {
    **dict.fromkeys(["format_number", "unsigned_zero", "p_text", "stated_p"], "formats.py"),
    **dict.fromkeys(
        [
            "SETTING_COLUMNS",
            "SCORE_FIELDS",
            "SCORES_COLUMNS",
            "COMPARISON_COLUMNS",
            "SEED_VARIANCE_COLUMNS",
            "FINAL",
            "final_point",
            "RANGES",
        ],
        "tables.py",
    ),
    "COVERAGE": "intervals.py",
}


def top_level_names(path: Path) -> set[str]:
    """The functions, classes and variables `path` defines at its top level."""
    names = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(target.id for target in targets if isinstance(target, ast.Name))
    return names


def test_formats_and_table_schemas_are_defined_once_in_the_lowest_layer():
    lowest = set(layers()[0])
    defined = {name: [] for name in ONE_PLACE}
    for path in sorted(PACKAGE.rglob("*.py")):
        for name in top_level_names(path) & set(ONE_PLACE):
            defined[name].append(path.relative_to(PACKAGE).as_posix())
    assert defined == {name: [where] for name, where in ONE_PLACE.items()}
    assert {where.removesuffix(".py") for where in ONE_PLACE.values()} <= lowest


# --- ARCHITECTURE.md's other statements, where a reading of the sources can check them ----------


def named_paths() -> list[str]:
    """The checkout's files and folders ARCHITECTURE.md names in backticks (`train.py`,
    `report/facts/`, `config/claims.yaml`): what the build writes (the table's last column,
    results/, ../) and patterns (`<run>`) left out."""
    text = (ROOT / "ARCHITECTURE.md").read_text()
    for line in text.splitlines():
        cells = line.split("|")
        if line.startswith("| ") and len(cells) > 4:
            text = text.replace(cells[4], "")
    names = re.findall(r"`([\w./*-]+(?:/|\.py|\.smk|\.yaml|\.sh|\.md|\.tex))`", text)
    return sorted(
        {name for name in names if not name.startswith(("results/", "../")) and "<" not in name}
    )


def checkout_paths() -> list[Path]:
    """Every file and folder of the checkout, relative to it (no build, venv or cache)."""
    skip = {".git", ".venv", "results", "resources", "runs", ".snakemake", "__pycache__"}
    found = []
    for folder, folders, files in os.walk(ROOT):
        folders[:] = [name for name in folders if name not in skip and not name.endswith("-info")]
        base = Path(folder).relative_to(ROOT)
        found += [base / name for name in folders + files]
    return found


def test_every_path_architecture_names_exists():
    """A name may be the end of a longer path (`buckets.py` is src/softlookup/data/buckets.py)
    and a pattern (`converged*.yaml`)."""
    paths = [path.as_posix() for path in checkout_paths()]
    missing = [
        name
        for name in named_paths()
        if not any(fnmatch.fnmatch(path, f"*{name.rstrip('/')}") for path in paths)
    ]
    assert named_paths() and not missing, f"ARCHITECTURE.md names what is not there: {missing}"


FILE_READS = {"open", "read_csv", "read_text", "read_bytes", "read_parquet"}
LOADERS = {"json", "yaml", "torch", "np", "pickle"}  # their .load() reads a file
# report/ modules that read files, and what: facts and figures read only through study
REPORT_READERS = {
    "study.py": "results/ and the committed references, for facts and figures",
    "build.py": "the LaTeX log of the build it runs",
    "wording.py": "the ledger's claims.csv and checks.csv, worded for the claims stage",
}


def file_reads(path: Path) -> list[int]:
    """Lines of `path` that call a file reader (open(), pd.read_csv, Path.read_text, json.load)."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "attr", getattr(node.func, "id", None))
        owner = getattr(getattr(node.func, "value", None), "id", None)
        if name in FILE_READS or (name == "load" and owner in LOADERS):
            lines.append(node.lineno)
    return lines


def test_the_report_reads_files_only_through_study():
    report = PACKAGE / "report"
    readers = {
        f"{path.relative_to(report)}:{line}"
        for path in sorted(report.rglob("*.py"))
        if path.relative_to(report).as_posix() not in REPORT_READERS
        for line in file_reads(path)
    }
    assert not readers, f"report/ modules reading files besides {sorted(REPORT_READERS)}"
    assert file_reads(report / "study.py")  # the check sees a reader


# "all" meaning something else than a whole test set
OTHER_ALLS = {
    "analysis/attention_maps.py": "the row counting every map's sentences",
    "bench/kernels.py": "a benchmark pass: forward and backward together",
    "bench/train_step.py": "the estimate's row summing every variant",
    "bench/summary.py": 'pandas\' dropna(how="all")',
}


def string_constants(path: Path) -> list[tuple[int, str]]:
    """(line, value) of every string literal of `path` but its docstrings."""
    tree = ast.parse(path.read_text(), str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        if id(node) not in docstrings
    ]


def test_the_whole_test_set_bucket_is_named_only_in_buckets():
    typed = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() not in {"data/buckets.py", *OTHER_ALLS}
        for line, value in string_constants(path)
        if value == "all"
    ]
    assert not typed, f'"all" typed outside data/buckets.py (use buckets.ALL): {typed}'


def test_run_names_are_parsed_only_in_rundir():
    """A run is <variant>-s<seed>: only rundir.py (variant_of, split_run, RUN_SEED) takes one
    apart; a "-s" split elsewhere disagrees with it on a name it does not expect."""
    parsing = [
        f"{path.relative_to(PACKAGE)}:{line}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE).as_posix() != "rundir.py"
        for line, value in string_constants(path)
        if value == "-s" or re.search(r"-s\(|-s\\d", value)
    ]
    assert not parsing, f"run names parsed outside rundir.py (use variant_of, split_run): {parsing}"
    assert any("-s(" in value for _, value in string_constants(PACKAGE / "rundir.py"))


RULE = re.compile(
    r"^(?:rule (\w+):|use rule \w+ as (\w+) with:|\s+rule:\n\s+name:\n\s+f?\"(\S+)\")"
)


def rule_blocks() -> dict[str, str]:
    """Rule name -> its text, for every rule in workflow/rules/ (a rule made in a loop is named
    as written: `prepare_{_name}`)."""
    blocks = {}
    for path in sorted((ROOT / "workflow" / "rules").glob("*.smk")):
        text = path.read_text()
        starts = [
            (match.start(), next(group for group in match.groups() if group))
            for match in re.finditer(RULE.pattern, text, re.MULTILINE)
        ]
        ends = [start for start, _ in starts[1:]] + [len(text)] if starts else []
        for (start, name), end in zip(starts, ends, strict=True):
            blocks[name] = text[start:end]
    return blocks


def test_every_rule_logs_and_times_itself_in_its_own_folder():
    """ARCHITECTURE.md: every job logs to results/logs/ and times itself to
    results/benchmarks/<rule>/ (`use rule ... with:` would inherit the parent's folder)."""
    blocks = rule_blocks()
    assert {"train", "translate_point", "prepare_{_name}"} <= set(blocks)
    wrong = []
    for name, block in blocks.items():
        logged = re.search(r"\n\s+log:\n\s+\w*=?f?\"results/logs/", block)
        timed = re.search(r"\n\s+benchmark:\n\s+f?\"results/benchmarks/([^/]+)/", block)
        if not logged or not timed or timed.group(1) != name:
            wrong.append(name)
    assert not wrong, f"rules without their log, or timed in another folder: {wrong}"
