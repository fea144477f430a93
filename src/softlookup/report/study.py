"""Everything the report reads from results/, loaded defensively.

A file that is missing, empty or lacks a column gives an empty table, and `Study.missing` says
which and why, so that the paper states what is pending instead of failing or printing a
placeholder. Nothing here writes LaTeX or draws.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..evaluate.score import SETTING_COLUMNS, final_point

OLD_SCORE_NAMES = {"run_id": "run", "model": "base_model"}  # the scores table of before contract 4
RUN_SEED = re.compile(r"-s(\d+)$")


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


def variant_of(run: str) -> str:
    return RUN_SEED.sub("", str(run))


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
    def variant(self) -> str:
        return self.config.get("variant") or variant_of(self.name)

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

    def claim(self, claim_id: str) -> dict:
        """One claim's ledger row as a dict ({} when the ledger lacks it)."""
        if self.claims.empty or "id" not in self.claims:
            return {}
        rows = self.claims[self.claims["id"] == claim_id]
        return {} if rows.empty else rows.iloc[0].to_dict()

    def test_sets(self) -> list[str]:
        configured = self.config.get("evaluate", {}).get("test_sets")
        if configured:
            return list(configured)
        return (
            sorted(self.scores["test_set"].dropna().unique()) if "test_set" in self.scores else []
        )


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
) -> Study:
    """Read every table the report uses from `results`. `runs` defaults to those on disk and
    `bench` to every results/bench/*.csv; a rule passes the ones it declares as inputs, so a
    leftover file never reaches the paper."""
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
        scores=final_point(normalise_scores(read_csv(results / "tables" / "scores.csv", problems))),
        comparisons=final_point(read_csv(results / "tables" / "comparisons.csv", problems)),
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
        manifest=read_json(results / "data" / "manifest.json") or find_manifest(results),
        config=config,
        missing=problems,
    )


def find_manifest(results: Path) -> dict:
    for path in sorted((results / "data").glob("*/manifest.json")):
        return read_json(path)
    return {}


# the model and training settings a run differs by (the scores table's own columns)
SETTINGS = SETTING_COLUMNS[SETTING_COLUMNS.index("arch") : SETTING_COLUMNS.index("epochs")]


def model_settings(run: Run) -> dict:
    """The run's model settings: config.json's `model`, else meta.json's run.model."""
    model = run.config.get("model") or run.meta.get("run", {}).get("model") or {}
    return {key: model.get(key) for key in SETTINGS if key in model}


def value_text(value) -> str:
    """A setting as the config spells it: 2.0 -> '2', True -> 'true'."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def sweep_label(sweep: dict) -> str:
    """{'d_k': 8, 'scale': False} -> 'd_k = 8, scale = false'; {} -> ''."""
    return ", ".join(f"{key} = {value_text(value)}" for key, value in sweep.items())


def run_facts(study: Study) -> pd.DataFrame:
    """One row per run: variant, base model, seed, status, sweep, settings, training budget."""
    rows = []
    for name, run in study.runs.items():
        meta, log = run.meta, run.log
        sweep = run.sweep
        row = {
            "run": name,
            "variant": run.variant,
            "seed": run.config.get("seed", meta.get("run", {}).get("seed")),
            "base_model": run.config.get("base_model") or run.variant.split(".")[0],
            "status": run.status,
            "sweep": sweep,
            "sweep_key": "+".join(sweep),  # "" for a base run
            "sweep_label": sweep_label(sweep),
            "parameters": meta.get("parameters"),
            "epochs": meta.get("epochs", len(log) or None),
            "steps": log["steps"].iloc[-1] if "steps" in log and len(log) else None,
            "tokens": log["target_tokens"].sum() if "target_tokens" in log else None,
            "train_seconds": meta.get(
                "train_wall_s", log["wall_s"].sum() if "wall_s" in log else None
            ),
            "tokens_per_s": meta.get("train_tokens_per_s"),
            "final_train_loss": meta.get("final_train_loss"),
            "best_val_loss": meta.get("best_val_loss"),
        }
        row.update(scored_settings(study.scores, name))
        row.update(model_settings(run))
        rows.append(row)
    return pd.DataFrame(rows)


def scored_settings(scores: pd.DataFrame, run: str) -> dict:
    """The run's resolved settings as the scores table records them (contract item 4)."""
    if scores.empty or "run" not in scores:
        return {}
    rows = scores[scores["run"] == run]
    if rows.empty:
        return {}
    first = rows.iloc[0]
    return {key: first[key] for key in SETTINGS if key in rows and not pd.isna(first[key])}


def metric_rows(
    study: Study, test_set: str | None = None, bucket: str | None = "all", metric: str = "bleu"
) -> pd.DataFrame:
    """Score rows of one metric (and test set, bucket), one per run x test set x bucket."""
    scores = study.scores
    if scores.empty or not {"metric", "value"} <= set(scores):
        return pd.DataFrame()
    rows = scores[scores["metric"] == metric]
    if test_set is not None and "test_set" in rows:
        rows = rows[rows["test_set"] == test_set]
    if bucket is not None and "bucket" in rows:
        rows = rows[rows["bucket"].astype(str) == bucket]
    return rows


def pooled(rows: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Seeds pooled as the ledger pools them: the mean, and the union of the 95% intervals."""
    if rows.empty:
        return rows
    ok = rows[rows["status"].fillna("ok") == "ok"] if "status" in rows else rows
    grouped = ok.groupby(by, dropna=False)
    table = grouped.agg(
        value=("value", "mean"),
        ci_low=("ci_low", "min"),
        ci_high=("ci_high", "max"),
        seeds=("seed", "nunique"),
    )
    return table.reset_index()
