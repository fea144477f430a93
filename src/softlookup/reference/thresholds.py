"""When each threshold of config/claims.yaml got its value, and whether the claim had results then.

python -m softlookup.reference.thresholds [--out config/threshold_history.csv]

A threshold is what a decisive check holds its measured number against:
- bar: the `expected` of an above or below check;
- margin: the `margin` of an equivalent or non_inferior check;
- floor: the `below` of a comparison check's `floor` (with its metric and bucket);
- tolerance, rel_tolerance: of an approx check, when not 0 (an exact figure has none to move).
A grid check gives one row per cell, numbered as the ledger numbers its checks (checks.csv).

The history is read from git, each version of claims.yaml parsed once. A check is known across
versions by what it measures (every key but its label, format, macro, headline and thresholds),
so a threshold whose check starts measuring something else counts as set anew. A threshold's
commit is the latest one of the file's history that holds it at its current value while none of
its parents does (on a branch: the branch's commit, not the merge); its date is the commit's.
Results existed then when a committed results/reference/<config>/claims.csv gives the claim a
verdict other than pending, committed at or before that date; the first such reference is named.
The table is committed, so that a clone without history (or a tarball) still builds the paper;
a test regenerates it from git and compares.
"""

from __future__ import annotations

import argparse
import csv
import io
import itertools
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from ..atomic import atomic_file
from ..paths import CLAIMS_FILE, ROOT, THRESHOLD_HISTORY

COLUMNS = [
    "claim",
    "check",
    "key",
    "value",
    "commit",
    "date",
    "results_then",
    "reference",
    "reference_commit",
    "reference_date",
]
NOT_IDENTITY = {"label", "fmt", "macro", "headline", "expected", "margin", "floor", "tolerance"}
NOT_IDENTITY |= {"rel_tolerance"}
REFERENCE_CLAIMS = "results/reference/*/claims.csv"
Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Version:
    """One commit of the file's history: its parents within that history, and its date."""

    commit: str
    parents: tuple[str, ...]
    date: str


UTC_DATE = "--date=format-local:%Y-%m-%dT%H:%M:%SZ"  # with TZ=UTC: dates compare as text


def git(*args: str, root: Path = ROOT) -> str:
    return subprocess.run(
        ["git", "-C", str(root), *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "TZ": "UTC"},
    ).stdout


def is_full_history(root: Path = ROOT) -> bool:
    """A git checkout whose history is whole (not a tarball, not a shallow clone)."""
    try:
        return git("rev-parse", "--is-shallow-repository", root=root).strip() == "false"
    except (OSError, subprocess.CalledProcessError):
        return False


def versions(path: str, root: Path = ROOT) -> list[Version]:
    """The commits that changed `path`, newest first, each with its parents among them."""
    lines = git("log", "--parents", UTC_DATE, "--format=%H%x09%P%x09%cd", "--", path, root=root)
    found = []
    for line in lines.splitlines():
        commit, parents, date = line.split("\t")
        found.append(Version(commit, tuple(parents.split()), date))
    return found


def blobs(paths: list[str], root: Path = ROOT) -> list[str | None]:
    """The text of each `<commit>:<path>` in one git process (None where there is no such file)."""
    if not paths:
        return []
    out = subprocess.run(
        ["git", "-C", str(root), "cat-file", "--batch"],
        input="".join(f"{p}\n" for p in paths).encode(),
        capture_output=True,
        check=True,
    ).stdout
    texts, at = [], 0
    for _ in paths:
        end = out.index(b"\n", at)
        header = out[at:end].split()
        if header[-1] == b"missing":
            texts.append(None)
            at = end + 1
            continue
        size = int(header[2])
        texts.append(out[end + 1 : end + 1 + size].decode())
        at = end + 1 + size + 1
    return texts


def cells(raw: dict) -> list[dict]:
    """A check as the ledger counts it: a `grid` check is one check per cell of its grid (not
    claims.spec's expansion: an old version of the file need not pass today's checks)."""
    if "grid" not in raw:
        return [raw]
    axes = list(raw["grid"].items())
    found = []
    for labels in itertools.product(*(values for _, values in axes)):
        settings = {name: str(label) for (name, _), label in zip(axes, labels, strict=True)}
        cell = {key: value for key, value in raw.items() if key != "grid"}
        cell["where"] = {**raw.get("where", {}), **settings}
        found.append(cell)
    return found


def thresholds_of(check: dict) -> dict[str, object]:
    """{key: value} of a check's thresholds (module docstring); a report check has none."""
    op = check.get("op", "approx")
    found: dict[str, object] = {}
    if op in ("above", "below") and check.get("expected") is not None:
        found["bar"] = float(check["expected"])
    if op in ("equivalent", "non_inferior") and check.get("margin") is not None:
        found["margin"] = float(check["margin"])
    if op == "approx":
        for key in ("tolerance", "rel_tolerance"):
            if check.get(key):
                found[key] = float(check[key])
    if op != "report" and isinstance(check.get("floor"), dict):
        found["floor"] = json.dumps(check["floor"], sort_keys=True)
    return found


def identity(check: dict) -> str:
    """What a check measures, as text: every key but its label, format and thresholds."""
    return json.dumps(
        {k: v for k, v in check.items() if k not in NOT_IDENTITY}, sort_keys=True, default=str
    )


def parse(text: str | None) -> dict[tuple, tuple[int, object]]:
    """{(claim, check identity, key): (the ledger's check number, value)} of one version."""
    try:
        document = yaml.load(text or "", Loader=Loader)
    except yaml.YAMLError:
        return {}
    claims = document.get("claims", []) if isinstance(document, dict) else []
    found = {}
    for claim in claims:
        if not isinstance(claim, dict) or not isinstance(claim.get("checks"), list):
            continue
        checks = [cell for raw in claim["checks"] if isinstance(raw, dict) for cell in cells(raw)]
        seen: dict[str, int] = {}
        for number, check in enumerate(checks, start=1):
            name = identity(check)
            seen[name] = seen.get(name, 0) + 1  # two checks measuring alike stay apart
            for key, value in thresholds_of(check).items():
                found[(claim.get("id"), name, seen[name], key)] = (number, value)
    return found


def first_results(root: Path = ROOT) -> dict[str, tuple[str, str, str]]:
    """{claim: (date, reference, commit)} of the first committed reference that judged it."""
    lines = git(
        "log", UTC_DATE, "--format=@%H%x09%cd", "--name-only", "--", REFERENCE_CLAIMS, root=root
    )
    files, commit, date = [], "", ""
    for line in lines.splitlines():
        if line.startswith("@"):
            commit, date = line[1:].split("\t")
        elif line:
            files.append((date, commit, line))
    first: dict[str, tuple[str, str, str]] = {}
    texts = blobs([f"{commit}:{path}" for _, commit, path in files], root)
    for (date, commit, path), text in sorted(zip(files, texts, strict=True)):
        for row in csv.DictReader(io.StringIO(text or "")):
            claim, verdict = row.get("id"), (row.get("verdict") or "").strip()
            if claim and verdict and verdict != "pending" and claim not in first:
                first[claim] = (date, Path(path).parent.name, commit)
    return first


def history(root: Path = ROOT, path: Path = CLAIMS_FILE) -> list[dict]:
    """The rows of the threshold history (COLUMNS) of the file as committed at HEAD."""
    relative = path.relative_to(root).as_posix() if path.is_absolute() else str(path)
    changes = versions(relative, root)
    texts = blobs([f"{version.commit}:{relative}" for version in changes], root)
    parsed = {version.commit: parse(text) for version, text in zip(changes, texts, strict=True)}
    if not changes:
        return []
    current = parsed[changes[0].commit]
    results = first_results(root)
    rows = []
    for threshold, (number, value) in current.items():
        origin = next(
            version
            for version in changes  # newest first: the latest origin of the current value
            if parsed[version.commit].get(threshold, (0, None))[1] == value
            and all(
                parsed.get(parent, {}).get(threshold, (0, None))[1] != value
                for parent in version.parents
            )
        )
        claim, key = threshold[0], threshold[3]
        seen = results.get(claim)
        then = seen is not None and seen[0] <= origin.date
        rows.append(
            {
                "claim": claim,
                "check": number,
                "key": key,
                "value": json.loads(value)["below"] if key == "floor" else value,
                "commit": origin.commit,
                "date": origin.date,
                "results_then": "yes" if then else "no",
                "reference": seen[1] if then else "",
                "reference_commit": seen[2] if then else "",
                "reference_date": seen[0] if then else "",
            }
        )
    return sorted(rows, key=lambda row: (claim_order(current, row["claim"]), row["check"]))


def claim_order(current: dict, claim: str) -> int:
    """A claim's position in the file."""
    return list(dict.fromkeys(key[0] for key in current)).index(claim)


def write(rows: list[dict], out: Path) -> None:
    with atomic_file(out) as partial, open(partial, "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=THRESHOLD_HISTORY)
    args = parser.parse_args(argv)
    write(history(), args.out)


if __name__ == "__main__":
    main()
