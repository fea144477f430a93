"""Read and check config/claims.yaml: claims, their sources, and the checks that decide them.

A check names where its measured number comes from:
- probe: a row of results/probes/<probe>.csv picked by quantity and setting columns (`where`),
  optionally divided by another row of the same quantity (`ratio_to`: settings that differ);
  `grid` expands one check into a row or matrix of figures;
- scores: two selections of results/tables/scores.csv compared with their bootstrap intervals;
- bench: a column of results/bench/<bench>_<device>.csv (True/False read as 1/0), filtered,
  aggregated (max, min, mean, the log-log slope against another column) or divided by another
  filtered selection.
Numeric checks use op approx (|measured - expected| <= tolerance, or relative), above, below,
or report (shown, never part of the verdict).
The file's `producers` map names the Snakemake rule writing each kind of evidence: a pattern
("probe_{name}"), or a mapping from evidence name to rule where the two do not pair by name.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml

NUMERIC_OPS = ("approx", "above", "below", "report")
SCORES_OPS = ("above", "below", "not_below", "equal")
AGGREGATES = ("single", "max", "min", "mean", "loglog_slope")
CLAIM_KEYS = {"id", "claim", "source", "paper", "cite", "expected", "tolerance", "note", "checks"}
MACRO_NAME = re.compile(r"^[A-Za-z]+$")


class ClaimsFileError(ValueError):
    """A malformed claims file; the message names the file, claim and key."""


@dataclass(frozen=True)
class NumericCheck:
    """A probe or bench number against an expected value."""

    kind: str  # "probe" or "bench"
    name: str  # probe name, or bench name (attention, decode)
    op: str
    label: str
    quantity: str | None = None  # probe rows
    column: str | None = None  # bench: column holding the number
    where: dict[str, str] = field(default_factory=dict)
    ratio_to: dict[str, str] | None = None
    join: tuple[str, ...] = ()  # bench ratio: columns matching numerator and denominator rows
    aggregate: str = "single"
    x: str | None = None  # bench loglog_slope: the x column
    device: str = "any"  # bench: cpu, gpu or any
    expected: float | None = None
    tolerance: float | None = None
    rel_tolerance: float | None = None
    fmt: str = ".4g"
    macro: str | None = None


@dataclass(frozen=True)
class Selection:
    """Rows of the scores table: a base model, optionally one sweep value, a bucket."""

    model: str
    sweep: str = ""
    sweep_value: str = ""  # a value, or smallest / largest among those present
    bucket: str = "all"  # a label, or shortest / longest among those both sides share
    test_set: str | None = None  # None: every evaluated test set
    ratio_to: Selection | None = None  # divide by another selection (interval quotient)


@dataclass(frozen=True)
class ScoresCheck:
    metric: str
    left: Selection
    right: Selection
    op: str
    label: str
    requires_device: str | None = None  # "gpu": needs a device column saying so
    tolerance: float = 0.0  # op equal: relative tolerance
    fmt: str = ".2f"


Check = NumericCheck | ScoresCheck


@dataclass(frozen=True)
class Claim:
    id: str
    text: str
    sources: tuple[str, ...]
    paper: str
    cite: str
    expected: str
    tolerance: str
    note: str
    checks: tuple[Check, ...]


def load_claims(path: Path) -> tuple[list[Claim], dict]:
    """(claims in file order, the file's `producers` map: which rule writes which output)."""
    try:
        document = yaml.safe_load(Path(path).read_text())
    except (OSError, yaml.YAMLError) as error:
        raise ClaimsFileError(f"{path}: cannot read claims file: {error}") from error
    if not isinstance(document, dict) or not isinstance(document.get("claims"), list):
        raise ClaimsFileError(f"{path}: expected a mapping with a 'claims' list")
    producers = document.get("producers", {})
    claims = [_claim(path, entry) for entry in document["claims"]]
    ids = [claim.id for claim in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ClaimsFileError(f"{path}: duplicate claim ids {duplicates}")
    _check_producers(path, producers, claims)
    return claims, producers


def _check_producers(path: Path, producers: dict, claims: list[Claim]) -> None:
    """A producer is a rule pattern ("probe_{name}") or a mapping name -> rule naming every name
    the checks use."""
    for claim in claims:
        for check in claim.checks:
            rules = producers.get(getattr(check, "kind", "scores"))
            if isinstance(rules, dict) and check.name not in rules:
                raise ClaimsFileError(
                    f"{path}: claim {claim.id}: producers.{check.kind} names no rule for"
                    f" {check.name!r} (it has {sorted(rules)})"
                )


def _claim(path: Path, entry: dict) -> Claim:
    where = f"{path}: claim {entry.get('id', '?') if isinstance(entry, dict) else repr(entry)}"
    if not isinstance(entry, dict):
        raise ClaimsFileError(f"{where}: expected a mapping")
    missing = sorted({"id", "claim", "source", "paper", "expected", "checks"} - entry.keys())
    unknown = sorted(entry.keys() - CLAIM_KEYS)
    if missing or unknown:
        raise ClaimsFileError(f"{where}: missing keys {missing}, unknown keys {unknown}")
    if not isinstance(entry["checks"], list) or not entry["checks"]:
        raise ClaimsFileError(f"{where}: 'checks' must be a non-empty list")
    checks = tuple(
        check
        for number, raw in enumerate(entry["checks"], start=1)
        for check in _checks(f"{where}, check {number}", raw)
    )
    if all(getattr(check, "op", None) == "report" for check in checks):
        raise ClaimsFileError(f"{where}: every check is 'report'; nothing decides the verdict")
    sources = entry["source"] if isinstance(entry["source"], list) else [entry["source"]]
    return Claim(
        id=str(entry["id"]),
        text=str(entry["claim"]).strip(),
        sources=tuple(str(s) for s in sources),
        paper=str(entry["paper"]),
        cite=str(entry.get("cite", "")),
        expected=str(entry["expected"]).strip(),
        tolerance=str(entry.get("tolerance", "")).strip(),
        note=str(entry.get("note", "")).strip(),
        checks=checks,
    )


def _checks(where: str, raw: dict) -> list[Check]:
    if not isinstance(raw, dict):
        raise ClaimsFileError(f"{where}: expected a mapping, got {raw!r}")
    if "scores" in raw:
        return [_scores_check(where, raw)]
    if "probe" in raw or "bench" in raw:
        return [_numeric_check(where, expanded) for expanded in _expand_grid(where, raw)]
    raise ClaimsFileError(f"{where}: a check needs one of the keys probe, bench, scores")


def _expand_grid(where: str, raw: dict) -> list[dict]:
    """`grid: {row: [...], col: [...]}` with a nested `expected` list -> one check per cell."""
    if "grid" not in raw:
        return [raw]
    axes = list(raw["grid"].items())
    expected = raw.get("expected")
    cells = []
    for labels in itertools.product(*(values for _, values in axes)):
        value = expected
        for axis_index, label in enumerate(labels):
            position = list(axes[axis_index][1]).index(label)
            if not isinstance(value, list) or position >= len(value):
                raise ClaimsFileError(f"{where}: 'expected' does not match the grid's shape")
            value = value[position]
        settings = {name: str(label) for (name, _), label in zip(axes, labels)}
        cell = {key: v for key, v in raw.items() if key != "grid"}
        cell.update(where={**raw.get("where", {}), **settings}, expected=value)
        cells.append(cell)
    return cells


def _numeric_check(where: str, raw: dict) -> NumericCheck:
    kind = "probe" if "probe" in raw else "bench"
    known = {
        "probe", "bench", "quantity", "column", "where", "ratio_to", "join", "aggregate", "x",
        "device", "op", "expected", "tolerance", "rel_tolerance", "label", "fmt", "macro",
    }  # fmt: skip
    unknown = sorted(raw.keys() - known)
    if unknown:
        raise ClaimsFileError(f"{where}: unknown keys {unknown}")
    op = raw.get("op", "approx")
    if op not in NUMERIC_OPS:
        raise ClaimsFileError(f"{where}: op {op!r} is not one of {NUMERIC_OPS}")
    if kind == "probe" and "quantity" not in raw:
        raise ClaimsFileError(f"{where}: a probe check needs 'quantity'")
    if kind == "bench" and "column" not in raw:
        raise ClaimsFileError(f"{where}: a bench check needs 'column'")
    if op != "report" and raw.get("expected") is None:
        raise ClaimsFileError(f"{where}: op {op!r} needs 'expected'")
    if op == "approx" and raw.get("tolerance") is None and raw.get("rel_tolerance") is None:
        raise ClaimsFileError(f"{where}: op approx needs 'tolerance' or 'rel_tolerance'")
    aggregate = raw.get("aggregate", "single")
    if aggregate not in AGGREGATES or (aggregate == "loglog_slope" and "x" not in raw):
        raise ClaimsFileError(f"{where}: aggregate {aggregate!r} must be one of {AGGREGATES}"
                              " (loglog_slope also needs 'x')")  # fmt: skip
    macro = raw.get("macro")
    if macro is not None and not MACRO_NAME.match(str(macro)):
        raise ClaimsFileError(f"{where}: macro name {macro!r} must be letters only")
    settings = {str(k): str(v) for k, v in raw.get("where", {}).items()}
    label = raw.get("label") or _default_label(raw.get("quantity") or raw["column"], settings)
    name = raw.get("probe") or raw.get("bench")
    ratio_to = raw.get("ratio_to")
    return NumericCheck(
        kind=kind,
        name=str(name),
        op=op,
        label=str(label),
        quantity=raw.get("quantity"),
        column=raw.get("column"),
        where=settings,
        ratio_to={str(k): str(v) for k, v in ratio_to.items()} if ratio_to else None,
        join=tuple(raw.get("join", ())),
        aggregate=aggregate,
        x=raw.get("x"),
        device=str(raw.get("device", "any")),
        expected=None if raw.get("expected") is None else float(raw["expected"]),
        tolerance=None if raw.get("tolerance") is None else float(raw["tolerance"]),
        rel_tolerance=None if raw.get("rel_tolerance") is None else float(raw["rel_tolerance"]),
        fmt=str(raw.get("fmt", ".4g")),
        macro=macro,
    )


def _default_label(quantity: str, settings: dict[str, str]) -> str:
    return f"{quantity}[{','.join(settings.values())}]" if settings else quantity


def _selection(where: str, raw: dict) -> Selection:
    if not isinstance(raw, dict) or "model" not in raw:
        raise ClaimsFileError(f"{where}: a selection needs 'model', got {raw!r}")
    unknown = sorted(raw.keys() - {"model", "sweep", "sweep_value", "bucket", "test_set",
                                   "ratio_to"})  # fmt: skip
    if unknown:
        raise ClaimsFileError(f"{where}: unknown selection keys {unknown}")
    return Selection(
        model=str(raw["model"]),
        sweep=str(raw.get("sweep", "")),
        sweep_value=str(raw.get("sweep_value", "")).lower(),
        bucket=str(raw.get("bucket", "all")),
        test_set=None if raw.get("test_set") is None else str(raw["test_set"]),
        ratio_to=_selection(where, raw["ratio_to"]) if "ratio_to" in raw else None,
    )


def _scores_check(where: str, raw: dict) -> ScoresCheck:
    unknown = sorted(raw.keys() - {"scores", "metric", "left", "right", "op", "label",
                                   "requires_device", "tolerance", "fmt"})  # fmt: skip
    if unknown:
        raise ClaimsFileError(f"{where}: unknown keys {unknown}")
    op = raw.get("op", "above")
    if op not in SCORES_OPS:
        raise ClaimsFileError(f"{where}: op {op!r} is not one of {SCORES_OPS}")
    for key in ("metric", "left", "right", "label"):
        if key not in raw:
            raise ClaimsFileError(f"{where}: a scores check needs {key!r}")
    return ScoresCheck(
        metric=str(raw["metric"]),
        left=_selection(where, raw["left"]),
        right=_selection(where, raw["right"]),
        op=op,
        label=str(raw["label"]),
        requires_device=raw.get("requires_device"),
        tolerance=float(raw.get("tolerance", 0.0)),
        fmt=str(raw.get("fmt", ".2f")),
    )
