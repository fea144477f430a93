"""The docs are tested where they can be (issue 35): every make target and variable, config file,
repository path and module that a command or code span of README.md, ARCHITECTURE.md and docs/
(and the READMEs beside the references and benchmarks) names exists; every
relative link resolves; README.md stays a newcomer's page; and its two commands are the ones CI
(.ci/run) calls."""

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from .project import ROOT

README = ROOT / "README.md"
DOCS = [
    README,
    ROOT / "ARCHITECTURE.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "results" / "reference" / "CHANGELOG.md",
    ROOT / "benchmarks" / "README.md",
]
MAKEFILE = (ROOT / "Makefile").read_text()

# A reader's own config, shown being passed, and a misspelt one in a quoted error message: the
# config paths the docs may name without them being in the repository.
EXAMPLE_CONFIGS = {"config/mine.yaml", "config/tset.yaml"}
# Where a build writes (git-ignored): the docs name these outputs before they exist.
GENERATED = (
    "results/",
    "runs/",
    "resources/",
    ".venv/",
    ".snakemake/",
    "paper/paper.pdf",
    "paper/generated/",
)
COMMITTED_RESULTS = "results/reference/"
# Repository paths are told from other code by their first component.
TOP_DIRS = (
    "src",
    "workflow",
    "config",
    "tests",
    "scripts",
    "paper",
    "profiles",
    "benchmarks",
    "docs",
    "results",
    "runs",
    "resources",
    ".ci",
)
TOP_FILES = (
    "Makefile",
    "Snakefile",
    "ARCHITECTURE.md",
    "README.md",
    "environment.yml",
    "pyproject.toml",
)
PLACEHOLDER = re.compile(r"[<*{]|\.\.\.")

FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
INLINE = re.compile(r"`([^`\n]+)`")
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
DIRS = "|".join(re.escape(top) for top in TOP_DIRS)
FILES = "|".join(re.escape(name) for name in TOP_FILES)
PATH = re.compile(rf"(?<![\w/.$-])((?:{DIRS})/[\w./<>*{{}}-]*|(?:{FILES})(?![\w.]))")
CONFIG_FILE = re.compile(r"(?<![\w/])config/[\w.-]+\.yaml")
MODULE = re.compile(r"-m\s+(softlookup(?:\.\w+)+)")


def code_of(text: str) -> list[str]:
    """The code of a Markdown text: each line of its fenced blocks, then its inline spans."""
    blocks = FENCE.findall(text)
    lines = [line for block in blocks for line in block.splitlines() if line.strip()]
    return lines + INLINE.findall(FENCE.sub("", text))


# --- make invocations: `VAR=value make [VAR=value] target...` -----------------------------------


@dataclass
class MakeCall:
    targets: tuple[str, ...]
    env: dict = field(default_factory=dict)  # assignments before `make`
    variables: dict = field(default_factory=dict)  # assignments after it


SEPARATORS = {";", "&&", "||", "|", "(", ")", "then", "do", "else", "!"}
ASSIGNMENT = re.compile(r"^([A-Z_][A-Z0-9_]*)=(.*)$", re.DOTALL)


def make_calls(script: str) -> list[MakeCall]:
    """Every make invocation of a shell text, with the assignments before and after `make`."""
    calls = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=";&|()")
        lexer.whitespace_split, lexer.commenters = True, "#"
        try:
            tokens = list(lexer)
        except ValueError:  # an unfinished quote: prose, not a command
            continue
        command: list[str] = []
        for token in [*tokens, ";"]:
            if token not in SEPARATORS:
                command.append(token)
                continue
            call = make_call(command)
            if call:
                calls.append(call)
            command = []
    return calls


def make_call(command: list[str]) -> MakeCall | None:
    """`A=1 make B=2 target` as a MakeCall; None for a command that is not make."""
    leading = 0
    while leading < len(command) and ASSIGNMENT.match(command[leading]):
        leading += 1
    env = dict(ASSIGNMENT.match(word).groups() for word in command[:leading])
    words = command[leading:]
    if not words or words[0] != "make":
        return None
    variables, targets = {}, []
    for word in words[1:]:
        assignment = ASSIGNMENT.match(word)
        if assignment:
            variables[assignment.group(1)] = assignment.group(2)
        elif not word.startswith("-"):
            targets.append(word)
    return MakeCall(tuple(targets), env, variables)


def makefile_targets() -> set[str]:
    return set(re.findall(r"^([a-z][a-z-]*)\s*:(?!=)", MAKEFILE, re.MULTILINE))


def makefile_variables() -> set[str]:
    assigned = re.findall(r"^([A-Z_]+)\s*[?:]?=", MAKEFILE, re.MULTILINE)
    return set(assigned) | set(re.findall(r"\$\(([A-Z_]+)\)", MAKEFILE))


def readme_two_commands() -> list[MakeCall]:
    """The commands of the first code block under README.md's "## The two commands"."""
    text = README.read_text()
    section = text.split("## The two commands", 1)[1].split("\n## ", 1)[0]
    block = FENCE.search(section)
    assert block, "README.md: no code block under '## The two commands'"
    lines = [line for line in block.group(1).splitlines() if line.strip()]
    calls = [call for line in lines for call in make_calls(line)]
    assert len(lines) == len(calls) == 2, f"README.md: two make commands expected, got {lines}"
    return calls


# --- the docs' commands, paths and links exist ----------------------------------------------


def doc_id(path: Path) -> str:
    return str(path.relative_to(ROOT))


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_make_target_and_variable_a_doc_names_is_in_the_makefile(doc):
    targets, variables = makefile_targets(), makefile_variables()
    calls = [call for code in code_of(doc.read_text()) for call in make_calls(code)]
    named_targets = {target for call in calls for target in call.targets}
    unknown_targets = sorted(
        target
        for target in named_targets
        if re.fullmatch(r"[a-z][a-z-]*", target) and target not in targets
    )
    unknown_variables = sorted(
        {name for call in calls for name in call.variables if name not in variables}
    )
    assert not unknown_targets, (
        f"{doc_id(doc)}: make targets not in the Makefile: {unknown_targets}"
    )
    assert not unknown_variables, (
        f"{doc_id(doc)}: make variables the Makefile does not read: {unknown_variables}"
    )


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_config_file_a_doc_names_exists(doc):
    named = {match for code in code_of(doc.read_text()) for match in CONFIG_FILE.findall(code)}
    missing = sorted(name for name in named - EXAMPLE_CONFIGS if not (ROOT / name).is_file())
    assert not missing, f"{doc_id(doc)} names config files that do not exist: {missing}"


def existing_part(path: str) -> Path:
    """The part of a named path that must exist: all of it, or the folder before a placeholder
    (`results/reference/<config>/` -> results/reference/)."""
    placeholder = PLACEHOLDER.search(path)
    if placeholder:
        path = path[: placeholder.start()].rsplit("/", 1)[0]
    return ROOT / path.rstrip("/.")


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_repository_path_a_doc_names_exists(doc):
    named = {match for code in code_of(doc.read_text()) for match in PATH.findall(code)}
    checked = {
        path
        for path in named - EXAMPLE_CONFIGS
        if path.startswith(COMMITTED_RESULTS) or not path.startswith(GENERATED)
    }
    missing = sorted(path for path in checked if not existing_part(path).exists())
    assert not missing, f"{doc_id(doc)} names paths that are not in the repository: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_module_a_doc_runs_exists(doc):
    modules = {m for code in code_of(doc.read_text()) for m in MODULE.findall(code)}
    missing = sorted(
        module
        for module in modules
        if not (ROOT / "src" / f"{module.replace('.', '/')}.py").is_file()
        and not (ROOT / "src" / module.replace(".", "/") / "__main__.py").is_file()
    )
    assert not missing, f"{doc_id(doc)}: `python -m` of modules that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=doc_id)
def test_every_relative_link_of_a_doc_resolves(doc):
    targets = [
        target.split("#")[0]
        for target in LINK.findall(doc.read_text())
        if not re.match(r"[a-z]+:|#", target)
    ]
    missing = [target for target in targets if not (doc.parent / target).exists()]
    assert not missing, f"{doc_id(doc)}: links to nothing: {missing}"


# --- README.md: a newcomer's page, its two commands CI's ------------------------------------


def test_the_readme_is_a_newcomers_page():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    hashes = [
        word
        for word in re.findall(r"\b[0-9a-f]{7,40}\b", text)
        if re.search(r"[a-f]", word) and re.search(r"[0-9]", word)
    ]
    assert not hashes, f"README.md cites commits ({hashes}): the dated log is docs/measurements.md"


def test_the_readmes_rule_graph_draws_the_workflows_rules():
    assert "docs/rulegraph.svg" in README.read_text()
    rule_files = (ROOT / "workflow" / "rules").glob("*.smk")
    rules = {
        rule
        for path in [ROOT / "Snakefile", *rule_files]
        for rule in re.findall(r"^\s*rule (\w+):", path.read_text(), re.MULTILINE)
    }
    drawn = set(
        re.findall(
            r"<title>[^<]*</title>\s*<[^>]*>\s*<text[^>]*>(\w+)</text>",
            (ROOT / "docs" / "rulegraph.svg").read_text(),
        )
    )
    assert drawn == rules, (
        f"docs/rulegraph.svg is out of date (drawn, not rules: "
        f"{drawn - rules}; rules, not drawn: {rules - drawn}); redraw it as "
        "docs/README.md says"
    )


def test_the_readmes_two_commands_are_the_ones_ci_runs():
    """`.ci/run` may add make variables (CONFIG=config/test.yaml), never change the target or the
    environment a reader is told to use."""
    readme = readme_two_commands()
    assert sorted(call.targets for call in readme) == [("paper",), ("test",)]
    ci = make_calls((ROOT / ".ci" / "run").read_text())
    for command in readme:
        matches = [
            call
            for call in ci
            if call.targets == command.targets
            and call.env == command.env
            and command.variables.items() <= call.variables.items()
        ]
        assert matches, (
            f"README.md's `make {' '.join(command.targets)}` (environment "
            f"{command.env}) is not among .ci/run's make calls: {ci}"
        )


def test_make_calls_are_read_from_a_script_as_the_shell_reads_them():
    script = (
        "# make paper (a comment)\n"
        "export X=1\n"
        "SOFTLOOKUP_MIRROR=../shared/corpora make paper CONFIG=config/test.yaml && \\\n"
        "cd . ; SOFTLOOKUP_MIRROR=../shared/corpora make -k test  # then the tests\n"
        "echo 'make paper'\n"
    )
    assert make_calls(script) == [
        MakeCall(
            ("paper",), {"SOFTLOOKUP_MIRROR": "../shared/corpora"}, {"CONFIG": "config/test.yaml"}
        ),
        MakeCall(("test",), {"SOFTLOOKUP_MIRROR": "../shared/corpora"}, {}),
    ]


def test_a_missing_path_is_found():
    """The path check fails where it should: a folder before a placeholder must exist too."""
    assert existing_part("results/reference/<config>/") == ROOT / "results" / "reference"
    assert not existing_part("src/softlookup/nowhere/<x>.py").exists()
    assert PATH.findall("see `docs/gone.md` and Makefile") == ["docs/gone.md", "Makefile"]
