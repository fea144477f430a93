"""Read config/claims.yaml: claims, their sources, and the checks that decide them.

The file's shape is validated by workflow/schemas/claims.schema.yaml (jsonschema); what a schema
cannot say (a grid's expected values match its shape, duplicate ids, a producer for every bench,
at least one deciding check per claim) is checked here. Every error names the file, the claim id,
the check and the key.

A check names where its measured number comes from:
- probe: a row of results/probes/<probe>.csv picked by quantity and setting columns (`where`),
  optionally divided by another row (`ratio_to`: the settings that differ); `grid` expands one
  check into a row or matrix of figures;
- bench: a column of a declared results/bench/<bench>_<device>.csv (True/False read as 1/0),
  filtered (a setting's value may be a list: any of them), aggregated (max, min, mean; against
  another column x: the log-log slope, the value at the largest x, or the crossing: the smallest
  x from which every value is below 1) or divided by another filtered selection (`per_setting:
  min`: of several numerator rows per setting, the smallest, e.g. the fastest of several
  kernels); `requires_device: gpu` judges only rows measured on a GPU (others shown, pending);
- comparison: rows of results/tables/comparisons.csv for a named pair (paired tests on the same
  sentences and seeds); a name with {x} is a family (d3_scaled_vs_unscaled_dk{x}), x read from
  the names, judged by its slope against log2 x (its interval from the members' standard
  errors), its largest difference or the one at the largest x; `side` (a or b) judges one
  system's own mean with its interval instead of B - A;
- run_value: a per-run number of results/tables/scores.csv (a column such as tokens_per_s, or a
  metric), mean over seeds: variant a / variant b, or a comparison X_vs_Y's X / Y;
- training: the training logs of two variants (time to reach a validation loss);
- analysis: a quantity of the trained runs' attention maps (results/analysis/attention_<run>.csv)
  for the variant on one side of a comparison: per run the max (or mean) over the maps matching
  a glob, then the mean over the variant's runs.
`by: interval` judges a probe or bench row by its ci_low/ci_high instead of its value (a bench
row that states its `points`, a slope the bench fitted, needs `min_points` of them); `floor`
({metric, bucket, below}) makes a comparison check inconclusive when a system scores below it.
Ops: approx (|measured - expected| <= tolerance, or relative), above, below, equivalent and
non_inferior (a paired interval inside +-margin / above -margin), report (shown, never part of
the verdict). Paired checks are judged on p-values Holm-adjusted within their claim
(claims.multiplicity). The file's `producers` map names the Snakemake rule writing each kind of evidence.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path

import jsonschema
import yaml

from ..data.buckets import ALL
from ..paths import CLAIMS_SCHEMA

# libyaml's parser where PyYAML was built with it: the same documents, read several times faster
SafeLoader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

GROUPS = {"A": "worked arithmetic", "B": "statistical", "C": "counting", "D": "empirical"}


class ClaimsFileError(ValueError):
    """A malformed claims file; the message names the file, claim and key."""


@dataclass(frozen=True)
class CheckBase:
    label: str
    op: str
    expected: float | None = None
    fmt: str = ".4g"
    macro: str | None = None
    headline: bool = False

    @property
    def decisive(self) -> bool:
        return self.op != "report"


@dataclass(frozen=True)
class NumericCheck(CheckBase):
    """A probe or bench number against an expected value."""

    kind: str = "probe"  # "probe" or "bench"
    name: str = ""  # probe name, or bench name (attention, decode, generation)
    quantity: str | None = None  # probe rows
    column: str | None = None  # bench: column holding the number
    over: str | None = None  # bench: divide the column by this column, row by row
    where: dict[str, str | tuple[str, ...]] = field(default_factory=dict)  # a tuple: any of
    ratio_to: dict[str, str] | None = None
    join: tuple[str, ...] = ()  # bench ratio: columns matching numerator and denominator rows
    per_setting: str | None = None  # bench ratio: "min" keeps the smallest numerator per setting
    aggregate: str = "single"
    x: str | None = None  # bench loglog_slope, at_largest, crossing: the x column
    min_points: int = 2  # bench loglog_slope, at_largest, crossing: distinct x values needed;
    # by interval: a row's `points` (the x values of a slope the bench fitted) needed
    device: str = "any"  # bench: cpu, cuda, gpu (any non-CPU) or any (GPU first)
    requires_device: str | None = None  # bench: "gpu": rows of another device stay pending
    tolerance: float | None = None
    rel_tolerance: float | None = None
    by: str = "value"  # "interval": the row's ci_low/ci_high decide (checks.common.judge_number)


@dataclass(frozen=True)
class ComparisonCheck(CheckBase):
    """A paired comparison (or a family of them) of results/tables/comparisons.csv."""

    kind: str = "comparisons"
    comparison: str = ""  # a name, or a family pattern with {x}
    metric: str = "bleu"
    test_set: str | None = None  # None: the comparison's own (its only) test set
    bucket: str = ALL  # a label, or shortest / longest among those present
    statistic: str = "delta"
    margin: float | None = None
    min_points: int = 2  # a family: distinct x values needed
    side: str | None = None  # None: B - A; "a" or "b": that system's own mean
    floor: dict | None = None  # {metric, bucket, below}: a system under it makes it inconclusive

    @property
    def name(self) -> str:
        return self.comparison


@dataclass(frozen=True)
class RunCheck(CheckBase):
    """Per-run numbers of results/tables/scores.csv for two variants, mean over seeds."""

    kind: str = "scores"
    run_value: str = ""  # a column (tokens_per_s, parameters) or a metric (final_train_loss)
    comparison: str | None = None  # the variants come from this comparison's system_a/system_b
    a: str | None = None
    b: str | None = None
    statistic: str = "ratio"  # ratio: A / B; spread: (max - min) / mean over a family's variants
    tolerance: float | None = None
    requires_device: str | None = None

    @property
    def name(self) -> str:
        return self.run_value


@dataclass(frozen=True)
class TrainingCheck(CheckBase):
    """Training time to a validation loss, variant a / variant b, from the training logs."""

    kind: str = "training"
    training: str = "time_to_val_loss"
    a: str = ""
    b: str = ""
    target: float | str = "common"
    requires_device: str | None = None

    @property
    def name(self) -> str:
        return self.training


@dataclass(frozen=True)
class AnalysisCheck(CheckBase):
    """A quantity of the attention maps of a comparison's variant (side a or b), over its runs."""

    kind: str = "analysis"
    analysis: str = ""  # a quantity of analysis/attention_maps.py (next_position_weight_mean)
    comparison: str = ""
    side: str = "b"
    map: str = "*"  # a glob over map names (dec.1.self.h0, cross, ...)
    aggregate: str = "max"  # over a run's matching maps: max or mean
    tolerance: float | None = None

    @property
    def name(self) -> str:
        return self.analysis


Check = NumericCheck | ComparisonCheck | RunCheck | TrainingCheck | AnalysisCheck


@dataclass(frozen=True)
class Claim:
    id: str
    short: str
    text: str
    sources: tuple[str, ...]
    paper: str
    cite: str
    expected: str  # in a few words, for the ledger table
    expected_detail: str  # every figure the source prints
    tolerance: str
    note: str
    section: str  # the paper's label of the section judging it
    checks: tuple[Check, ...]

    @property
    def group(self) -> str:
        return self.id[0]


@cache
@cache
def schema() -> dict:
    return yaml.load(CLAIMS_SCHEMA.read_text(), Loader=SafeLoader)


def _location(document: dict, path: list) -> str:
    """'claim D3, check 2, key margin' for a jsonschema error path."""
    parts = []
    if len(path) >= 2 and path[0] == "claims" and isinstance(path[1], int):
        entry = document["claims"][path[1]]
        parts.append(
            f"claim {entry.get('id', path[1] + 1) if isinstance(entry, dict) else path[1] + 1}"
        )
        rest = path[2:]
        if len(rest) >= 2 and rest[0] == "checks" and isinstance(rest[1], int):
            parts.append(f"check {rest[1] + 1}")
            rest = rest[2:]
    else:
        rest = path
    if rest:
        parts.append("key " + ".".join(str(p) for p in rest))
    return ", ".join(parts) or "top level"


def validate(path: Path, document: object) -> None:
    """Schema errors, each naming the claim id, the check and the key."""
    validator = jsonschema.Draft202012Validator(schema())
    errors = sorted(validator.iter_errors(document), key=lambda e: list(map(str, e.absolute_path)))
    if not errors:
        return
    messages = []
    for error in errors:
        # an if/then failure is reported once, at its most specific cause
        leaves = [error]
        while leaves[0].context:
            leaves = sorted(leaves[0].context, key=lambda e: len(e.absolute_path), reverse=True)
        for leaf in leaves[:1]:
            where = _location(document, list(leaf.absolute_path))
            messages.append(f"{where}: {leaf.message}")
    raise ClaimsFileError(f"{path}: " + "; ".join(dict.fromkeys(messages)))


def load_claims(path: Path) -> tuple[list[Claim], dict]:
    """(claims in file order, the file's `producers` map: which rule writes which evidence).
    A file read once is not read again while it is unchanged (one paper reads it several times)."""
    try:
        stat = Path(path).stat()
    except OSError as error:
        raise ClaimsFileError(f"{path}: cannot read claims file: {error}") from error
    claims, producers = _load_claims(Path(path), stat.st_mtime_ns, stat.st_size)
    return list(claims), dict(producers)


@lru_cache(maxsize=8)
def _load_claims(path: Path, mtime_ns: int, size: int) -> tuple[tuple[Claim, ...], dict]:
    try:
        document = yaml.load(path.read_text(), Loader=SafeLoader)
    except (OSError, yaml.YAMLError) as error:
        raise ClaimsFileError(f"{path}: cannot read claims file: {error}") from error
    if not isinstance(document, dict):
        raise ClaimsFileError(f"{path}: expected a mapping with 'producers' and 'claims'")
    validate(path, document)
    claims = [_claim(path, entry) for entry in document["claims"]]
    ids = [claim.id for claim in claims]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    if duplicates:
        raise ClaimsFileError(f"{path}: duplicate claim ids {duplicates}")
    producers = document["producers"]
    for claim in claims:
        for number, check in enumerate(claim.checks, start=1):
            if check.kind not in producers:
                raise ClaimsFileError(
                    f"{path}: claim {claim.id}, check {number}: producers names"
                    f" no rule for {check.kind} evidence"
                )
            rules = producers[check.kind]
            if isinstance(rules, dict) and check.name not in rules:
                raise ClaimsFileError(
                    f"{path}: claim {claim.id}, check {number}: producers.{check.kind} names no"
                    f" rule for {check.name!r} (it has {sorted(rules)})"
                )
    return tuple(claims), producers


def _claim(path: Path, entry: dict) -> Claim:
    where = f"{path}: claim {entry['id']}"
    checks = tuple(
        check
        for number, raw in enumerate(entry["checks"], start=1)
        for check in _checks(f"{where}, check {number}", raw)
    )
    if not any(check.decisive for check in checks):
        raise ClaimsFileError(f"{where}: every check is 'report'; nothing decides the verdict")
    sources = entry["source"] if isinstance(entry["source"], list) else [entry["source"]]
    return Claim(
        id=entry["id"],
        short=entry["short"].strip(),
        text=" ".join(entry["claim"].split()),
        sources=tuple(str(s) for s in sources),
        paper=entry["paper"],
        cite=entry.get("cite", ""),
        expected=entry["expected"].strip(),
        expected_detail=" ".join(entry.get("expected_detail", "").split()),
        tolerance=entry.get("tolerance", "").strip(),
        note=" ".join(entry.get("note", "").split()),
        section=entry["section"],
        checks=checks,
    )


def _common(raw: dict, default_fmt: str) -> dict:
    return {
        "op": raw.get("op", "approx"),
        "expected": None if raw.get("expected") is None else float(raw["expected"]),
        "fmt": raw.get("fmt", default_fmt),
        "macro": raw.get("macro"),
        "headline": bool(raw.get("headline", False)),
    }


def _checks(where: str, raw: dict) -> list[Check]:
    if "probe" in raw or "bench" in raw:
        return [_numeric_check(where, expanded) for expanded in _expand_grid(where, raw)]
    if "comparison" in raw and "metric" in raw:
        return [
            ComparisonCheck(
                **_common(raw, ".2f"),
                label=raw["label"],
                comparison=raw["comparison"],
                metric=raw["metric"],
                test_set=raw.get("test_set"),
                bucket=str(raw.get("bucket", ALL)),
                statistic=raw.get("statistic", "delta"),
                margin=raw.get("margin"),
                min_points=raw.get("min_points", 2),
                side=raw.get("side"),
                floor=raw.get("floor"),
            )
        ]
    if "analysis" in raw:
        return [
            AnalysisCheck(
                **_common(raw, ".3g"),
                label=raw["label"],
                analysis=raw["analysis"],
                comparison=raw["comparison"],
                side=raw.get("side", "b"),
                map=raw.get("map", "*"),
                aggregate=raw.get("aggregate", "max"),
                tolerance=raw.get("tolerance"),
            )
        ]
    if "run_value" in raw:
        return [
            RunCheck(
                **_common(raw, ".3g"),
                label=raw["label"],
                run_value=raw["run_value"],
                comparison=raw.get("comparison"),
                a=raw.get("a"),
                b=raw.get("b"),
                statistic=raw.get("statistic", "ratio"),
                tolerance=raw.get("tolerance"),
                requires_device=raw.get("requires_device"),
            )
        ]
    return [
        TrainingCheck(
            **_common(raw, ".3g"),
            label=raw["label"],
            training=raw["training"],
            a=raw["a"],
            b=raw["b"],
            target=raw["target"],
            requires_device=raw.get("requires_device"),
        )
    ]


def _expand_grid(where: str, raw: dict) -> list[dict]:
    """`grid: {row: [...], col: [...]}` with a nested `expected` list -> one check per cell."""
    if "grid" not in raw:
        return [raw]
    axes = list(raw["grid"].items())
    cells = []
    for labels in itertools.product(*(values for _, values in axes)):
        value = raw.get("expected")
        for axis_index, label in enumerate(labels):
            position = list(axes[axis_index][1]).index(label)
            if not isinstance(value, list) or position >= len(value):
                raise ClaimsFileError(f"{where}: 'expected' does not match the grid's shape")
            value = value[position]
        if isinstance(value, list):
            raise ClaimsFileError(f"{where}: 'expected' does not match the grid's shape")
        settings = {name: str(label) for (name, _), label in zip(axes, labels, strict=True)}
        cell = {key: v for key, v in raw.items() if key != "grid"}
        cell.update(where={**raw.get("where", {}), **settings}, expected=value)
        cells.append(cell)
    return cells


def _numeric_check(where: str, raw: dict) -> NumericCheck:
    kind = "probe" if "probe" in raw else "bench"
    settings = {
        str(k): tuple(map(str, v)) if isinstance(v, list) else str(v)
        for k, v in raw.get("where", {}).items()
    }
    label = raw.get("label") or _default_label(raw.get("quantity") or raw["column"], settings)
    ratio_to = raw.get("ratio_to")
    if raw.get("by") == "interval" and (ratio_to or raw.get("aggregate", "single") != "single"):
        raise ClaimsFileError(
            f"{where}: 'by: interval' judges one row's ci_low/ci_high; it takes"
            " no ratio_to and no aggregate"
        )
    return NumericCheck(
        **_common(raw, ".4g"),
        label=label,
        kind=kind,
        name=raw.get("probe") or raw.get("bench"),
        quantity=raw.get("quantity"),
        column=raw.get("column"),
        over=raw.get("over"),
        where=settings,
        ratio_to={str(k): str(v) for k, v in ratio_to.items()} if ratio_to else None,
        join=tuple(raw.get("join", ())),
        per_setting=raw.get("per_setting"),
        aggregate=raw.get("aggregate", "single"),
        x=raw.get("x"),
        min_points=raw.get("min_points", 2),
        device=raw.get("device", "any"),
        requires_device=raw.get("requires_device"),
        tolerance=None if raw.get("tolerance") is None else float(raw["tolerance"]),
        rel_tolerance=None if raw.get("rel_tolerance") is None else float(raw["rel_tolerance"]),
        by=raw.get("by", "value"),
    )


def _default_label(quantity: str, settings: dict) -> str:
    shown = ["|".join(v) if isinstance(v, tuple) else v for v in settings.values()]
    return f"{quantity}[{','.join(shown)}]" if settings else quantity
