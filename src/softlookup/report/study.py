"""Everything the report reads from results/, loaded defensively, and the committed reference
builds of longer studies (`convergence.references`), which must be whole.

A file that is missing, empty or lacks a column gives an empty table, and `Study.missing` says
which and why, so that the paper states what is pending instead of failing or printing a
placeholder. Nothing here writes LaTeX or draws.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import yaml

from ..paths import THRESHOLD_HISTORY
from ..rundir import RUN_SEED, RunSettings, run_settings, variant_of
from .labels import corpus_label
from .latex import seeds_phrase

OLD_SCORE_NAMES = {"run_id": "run", "model": "base_model"}  # the scores table of before contract 4


def read_csv(path: Path, problems: dict[str, str] | None = None, sep: str = ",") -> pd.DataFrame:
    """A CSV as a table; a missing or unreadable file gives an empty table (and a problem)."""
    path = Path(path)
    try:
        table = pd.read_csv(path, sep=sep)
    except FileNotFoundError:
        reason = "not written by this build"
    except (pd.errors.EmptyDataError, pd.errors.ParserError, UnicodeDecodeError) as error:
        reason = f"unreadable ({type(error).__name__})"
    else:
        return table
    if problems is not None:
        problems[str(path)] = reason
    return pd.DataFrame()


def read_json(path: Path, problems: dict[str, str] | None = None) -> dict:
    try:
        return json.loads(Path(path).read_text())
    except (FileNotFoundError, json.JSONDecodeError) as error:
        if problems is not None:
            problems[str(path)] = f"not readable ({type(error).__name__})"
        return {}


def normalise_scores(scores: pd.DataFrame) -> pd.DataFrame:
    """Contract-4 column names whatever the producer's vintage; variant and seed always present."""
    if scores.empty:
        return scores
    scores = scores.rename(columns={k: v for k, v in OLD_SCORE_NAMES.items() if v not in scores})
    if "run" not in scores:
        return pd.DataFrame()
    if "variant" not in scores:
        scores["variant"] = scores["run"].map(variant_of)
    if "base_model" not in scores:
        scores["base_model"] = scores["variant"].str.split(".").str[0]
    if "seed" not in scores:
        scores["seed"] = scores["run"].str.extract(RUN_SEED)[0].astype(float)
    if "status" not in scores:
        scores["status"] = "ok"
    for column in ("value", "ci_low", "ci_high"):
        if column in scores:
            scores[column] = pd.to_numeric(scores[column], errors="coerce")
    return scores


@dataclass
class Run:
    name: str
    config: dict = field(default_factory=dict)
    meta: dict = field(default_factory=dict)
    log: pd.DataFrame = field(default_factory=pd.DataFrame)

    @property
    def settings(self) -> RunSettings:
        """Variant, base model, seed, model and train settings, as rundir reads them."""
        return run_settings(self.name, self.config, self.meta)

    @property
    def variant(self) -> str:
        return self.settings.variant

    @property
    def sweep(self) -> dict:
        """{key: value} that this run changes from its base model ({} for a base run)."""
        sweep = self.config.get("sweep")
        if isinstance(sweep, dict):
            return sweep
        # '<model>.<k1>-<v1>.<k2>-<v2>': keys are identifiers, values hold no '.' but numbers
        points = re.findall(r"\.([A-Za-z_]\w*)-([^.]+(?:\.\d+)?)", self.variant)
        return dict(points)

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "missing" if not self.meta else "ok"))


@dataclass
class Study:
    results: Path
    scores: pd.DataFrame
    comparisons: pd.DataFrame
    seed_variance: pd.DataFrame  # tables.SEED_VARIANCE_COLUMNS: each variant's seed SD
    coverage: pd.DataFrame  # evaluate.coverage: the intervals' simulated coverage
    threshold_history: pd.DataFrame  # reference.thresholds: when each threshold took its value
    claims: pd.DataFrame
    checks: pd.DataFrame
    runs: dict[str, Run]
    bench: dict[str, pd.DataFrame]
    probes: dict[str, pd.DataFrame]
    attention: dict[str, pd.DataFrame]
    alignment: dict[str, pd.DataFrame]
    benchmarks: pd.DataFrame
    manifest: dict
    config: dict
    missing: dict[str, str]
    # what per_study worked out from these tables, by function and arguments (none is changed
    # once loaded; dataclasses.replace starts a new memo)
    memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)


def per_study(function):
    """`function(study, *args)` worked out once a study: the sections of a paper ask for the same
    tables many times (the runs table about forty). Each caller gets its own copy to change."""

    @functools.wraps(function)
    def once(study: Study, *args, **kwargs):
        key = (function.__module__, function.__qualname__, args, tuple(sorted(kwargs.items())))
        if key not in study.memo:
            study.memo[key] = function(study, *args, **kwargs)
        return copy.deepcopy(study.memo[key])

    return once


@dataclass
class Reference:
    """One committed reference build: its name (folder), tables and provenance."""

    name: str
    comparisons: pd.DataFrame
    claims: pd.DataFrame
    training: pd.DataFrame
    provenance: dict
    scores: pd.DataFrame  # empty for a reference made before scores were kept
    manifest: dict = field(default_factory=dict)  # its corpus's, {} when it kept none

    @property
    def commit(self) -> str:
        return self.provenance.get("environment", {}).get("commit", "")[:7]

    @property
    def config_name(self) -> str:
        return self.provenance.get("config_name", self.name)

    @property
    def label(self) -> str:
        """The reference as a reader names it: 'Multi30k de-en, heads, seeds 3-5' (the part is
        the folder's first word after 'converged_')."""
        return ", ".join(item for item in self.label_parts() if item)

    def label_parts(self) -> tuple[str, str, str]:
        """(corpus, part, seeds): ('Multi30k de-en', 'heads', 'seeds 3--5')."""
        config = self.provenance.get("config", {})
        part = self.name.removeprefix("converged_").split("_")[0]
        seeds = seeds_phrase([int(seed) for seed in config.get("seeds") or []])
        return corpus_label(config.get("data", {}).get("corpus", "")), part, seeds

    def short_label(self, corpus: str) -> str:
        """The label where the reader knows the build's corpus: that corpus left out ('heads,
        seeds 3--5'), another named instead of the part ('Europarl it-en, seeds 1--2')."""
        own, part, seeds = self.label_parts()
        return ", ".join(item for item in ([part] if own == corpus else [own]) + [seeds] if item)


def read_reference(folder: Path) -> Reference:
    """A reference folder; a clear error naming the file when one is missing."""
    folder = Path(folder)
    needed = ["comparisons.csv", "claims.csv", "training.csv", "provenance.json"]
    missing = [name for name in needed if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(
            f"convergence.references: {folder} lacks {', '.join(missing)} (made by `make reference`)"
        )
    return Reference(
        name=folder.name,
        comparisons=pd.read_csv(folder / "comparisons.csv", dtype={"epoch": str}),
        claims=pd.read_csv(folder / "claims.csv", keep_default_na=False),
        training=pd.read_csv(folder / "training.csv"),
        provenance=json.loads((folder / "provenance.json").read_text()),
        scores=pd.read_csv(folder / "scores.csv", dtype={"epoch": str})
        if (folder / "scores.csv").is_file()
        else pd.DataFrame(),
        manifest=read_json(folder / "manifest.json"),
    )


def read_published(path: Path) -> dict:
    """paper/published.yaml: {claim id: {field: value}} ({} when the file is absent)."""
    return (yaml.safe_load(path.read_text()) or {}).get("claims", {}) if path.exists() else {}


def load_benchmarks(folder: Path) -> pd.DataFrame:
    """Snakemake's benchmark files results/benchmarks/<rule>/<job>.tsv as one table."""
    rows = []
    for path in sorted(Path(folder).glob("**/*.tsv")):
        table = read_csv(path, sep="\t")
        if table.empty or "s" not in table:
            continue
        rule = path.relative_to(folder).parts[0]
        rows.append(
            {
                "rule": rule,
                "job": path.stem,
                "s": float(table["s"].iloc[0]),
                "max_rss": float(table.get("max_rss", pd.Series([float("nan")])).iloc[0]),
            }
        )
    return pd.DataFrame(rows, columns=["rule", "job", "s", "max_rss"])


def load(
    results: Path = Path("results"),
    config_path: Path | None = None,
    runs: list[str] | None = None,
    bench: list[Path] | None = None,
    manifest: Path | None = None,
) -> Study:
    """Read every table the report uses from `results`. `runs` defaults to those on disk and
    `bench` to every results/bench/*.csv; a rule passes the ones it declares as inputs, so a
    leftover file never reaches the paper. `manifest` is the corpus manifest the rule declares
    (results/data/<corpus>-<src>-<tgt>/manifest.json), read as given: a build with several
    corpora (data.extra) has several; without one the study has no corpus facts."""
    results = Path(results)
    problems: dict[str, str] = {}
    config = read_json(config_path, problems) if config_path else {}
    if runs is None:
        runs = sorted(p.name for p in (results / "runs").glob("*") if p.is_dir())
    loaded = {}
    for name in runs:
        folder = results / "runs" / name
        loaded[name] = Run(
            name,
            config=read_json(folder / "config.json"),
            meta=read_json(folder / "meta.json", problems),
            log=read_csv(folder / "log.csv", problems),
        )

    def tables(folder: Path, pattern: str) -> dict[str, pd.DataFrame]:
        found = {}
        for path in sorted((results / folder).glob(pattern)):
            table = read_csv(path, problems)
            if not table.empty:
                found[path.stem] = table
        return found

    attention = {
        k.removeprefix("attention_"): v
        for k, v in tables(Path("analysis"), "attention_*.csv").items()
    }
    alignment = {
        k.removeprefix("alignment_"): v
        for k, v in tables(Path("analysis"), "alignment_*.csv").items()
    }
    return Study(
        results=results,
        scores=normalise_scores(read_csv(results / "tables" / "scores.csv", problems)),
        comparisons=read_csv(results / "tables" / "comparisons.csv", problems),
        seed_variance=read_csv(results / "tables" / "seed_variance.csv", problems),
        coverage=read_csv(results / "tables" / "coverage.csv", problems),
        threshold_history=read_csv(THRESHOLD_HISTORY, problems),
        claims=read_csv(results / "claims" / "claims.csv", problems),
        checks=read_csv(results / "claims" / "checks.csv", problems),
        runs=loaded,
        bench=tables(Path("bench"), "*.csv")
        if bench is None
        else {Path(p).stem: t for p in bench if not (t := read_csv(p, problems)).empty},
        probes=tables(Path("probes"), "*.csv"),
        attention=attention,
        alignment=alignment,
        benchmarks=load_benchmarks(results / "benchmarks"),
        manifest=read_json(manifest, problems) if manifest else {},
        config=config,
        missing=problems,
    )
