"""Facts of the probes, the discussion, the claims ledger, the threats to validity and the
appendices (every paired comparison, every check, reproducibility), and the ledger's macros."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from ...claims.checks import ALPHA
from ...claims.spec import load_claims
from ...config import convergence_references
from ...data.buckets import ALL
from ...paths import CLAIMS_FILE
from ...tables import FINAL
from ..families import FAMILIES, family_keys, other_keys
from ..labels import corpus_label
from ..study import Study
from . import claims, convergence, front, tables, training

PROBE_GROUPS = [  # claim group, what its claims are, the label of its paragraph
    ("A", "worked examples", "worked"),
    ("B", "statistical claims", "statistical"),
    ("C", "counting claims", "counting"),
]
MISSING_SHOWN = 8  # unreadable inputs named in the threats; the rest are counted
DIGEST_CHARS = 24  # of each corpus file's sha256 in the appendix
REPEAT_BAR = 0.95  # a check a rerun keeps less often than this is named in the threats
# Vaswani et al.'s Table 3 (A): the most heads trained there, and their width (d_model 512 / 32)
PUBLISHED_MOST_HEADS, PUBLISHED_NARROWEST_HEAD = 32, 16


def probe_curves(study: Study, probe: str, quantity: str, x: str) -> pd.DataFrame:
    """The rows of one probe quantity, x numeric (what the probe figure draws)."""
    frame = study.probes.get(probe, pd.DataFrame())
    if frame.empty or "quantity" not in frame:
        return pd.DataFrame()
    rows = frame[frame["quantity"] == quantity].copy()
    rows[x] = pd.to_numeric(rows[x])
    return rows


def probes(study: Study) -> dict:
    """Per claim group of the probes: its claims, the verdict counts, and the claims the text
    names (those not reproduced: Table 1 gives every claim's result), less those the ledger
    places in another section, which prints their sentence (`elsewhere`: claim id -> its
    section's label)."""
    found = claims.claims(study)
    groups = []
    for group, name, label in PROBE_GROUPS:
        members = [c for c in found.values() if c.id.startswith(group)]
        counts = pd.Series([c.verdict for c in members], dtype=str).value_counts().to_dict()
        named = [c for c in members if c.verdict != "reproduced"]
        elsewhere = {
            c.id: c.section
            for c in named
            if c.section and not c.section.removeprefix("sec:").startswith("probes")
        }
        groups.append(
            {
                "name": name,
                "label": label,
                "claims": members,
                "counts": counts,
                "named": [c for c in named if c.id not in elsewhere],
                "elsewhere": elsewhere,
            }
        )
    return {"groups": groups, "ledger": bool(len(found))}


def discussion(study: Study) -> dict:
    """What held, what did not (partly, not reproduced or inconclusive, by id) and why, what is
    still pending: the ledger's claims by verdict."""
    found = claims.claims(study)
    not_held = ("partly", "not reproduced", "inconclusive")
    return {
        "total": len(found),
        "held": found.with_verdict("reproduced"),
        "not_held": sorted(
            (c for verdict in not_held for c in found.with_verdict(verdict)), key=lambda c: c.id
        ),
        "pending": found.with_verdict("pending"),
        "trained": claims.headline(found),
        "surprises": surprises(study),
    }


def floors() -> list[dict]:
    """Each floor the claims file states (a compared model under it makes a check
    inconclusive): {metric, bucket, below, claims: [ids]}, one per distinct floor."""
    found: dict[tuple, list[str]] = {}
    for claim in load_claims(CLAIMS_FILE)[0]:
        for check in claim.checks:
            floor = getattr(check, "floor", None)
            if floor:
                key = (floor.get("metric", "bleu"), floor.get("bucket", ALL), floor["below"])
                if claim.id not in found.setdefault(key, []):
                    found[key].append(claim.id)
    return [
        {"metric": metric, "bucket": bucket, "below": below, "claims": ids}
        for (metric, bucket, below), ids in found.items()
    ]


def ledger(study: Study) -> dict:
    found = claims.claims(study)
    return {
        "floors": floors(),
        "rows": list(found.values()),
        "counts": {v: len(found.with_verdict(v)) for v in claims.VERDICTS},
        "total": len(found),
        "alpha": ALPHA,  # a paired test passes below this Holm-adjusted p (claims/checks)
    }


def most_heads(runs: pd.DataFrame) -> dict | None:
    """The most heads a Transformer of this build has, and their width d_k (None: none ran)."""
    if not {"arch", "heads", "d_k"} <= set(runs):
        return None
    transformers = runs[runs["arch"] == "transformer"].dropna(subset=["heads", "d_k"])
    if transformers.empty:
        return None
    row = transformers.loc[pd.to_numeric(transformers["heads"]).idxmax()]
    return {
        "heads": int(row["heads"]),
        "d_k": int(row["d_k"]),
        "published": PUBLISHED_MOST_HEADS,
        "published_d_k": PUBLISHED_NARROWEST_HEAD,
    }


def narrow_margins(found: claims.Claims) -> dict:
    """The decisive checks a test decides, and those a rerun would give their status again less
    often than REPEAT_BAR, were each difference the one measured (Check.repeat_chance)."""
    every = [(check, check.repeat_chance) for c in found.values() for check in c.decisive_checks]
    chances = [(check, chance) for check, chance in every if chance is not None]
    return {
        "judged": len(chances),
        "bar": REPEAT_BAR,
        "narrow": [
            {"claim": check.claim, "check": check, "chance": chance}
            for check, chance in chances
            if chance < REPEAT_BAR
        ],
    }


def threats(study: Study) -> dict:
    runs = tables.runs(study)
    seeds, more_seeds = front.seed_sets(runs)
    data = study.config.get("data", {})
    env = front.run_environment(study)
    epochs = runs["epochs"].dropna() if "epochs" in runs else pd.Series(dtype=float)
    return {
        "still_improving": len(training.still_improving(study)),
        "converged_references": len(convergence_references(study.config)),
        "at_convergence": converged_verdicts(study),
        "most_heads": most_heads(runs),
        "runs": len(runs),
        "max_epochs": epochs.max() if len(epochs) else None,
        "seeds": len(seeds),  # most variants'
        "more_seeded": sum(len(more["labels"]) for more in more_seeds),
        "repeat": narrow_margins(claims.claims(study)),
        "corpora": [corpus_label(data.get("corpus", "one corpus"))]
        + [
            corpus_label(extra.get("corpus", name)) for name, extra in data.get("extra", {}).items()
        ],
        "cpu": env.get("device", "cpu") == "cpu",
        "measured_elsewhere": bool(study.config.get("bench", {}).get("measured")),
        "failed_runs": training.training(study)["failed"],
        "missing": [
            {"file": Path(p).name, "why": why}
            for p, why in list(study.missing.items())[:MISSING_SHOWN]
        ],
        "more_missing": max(0, len(study.missing) - MISSING_SHOWN),
    }


def converged_verdicts(study: Study) -> dict[str, list[str]]:
    """The trained-model claims by what longer training did to their verdict (the convergence
    section's table): held, moved, or not trained by any committed reference."""
    if not convergence_references(study.config) or not study.config.get("convergence"):
        return {"held": [], "moved": [], "not_run": []}
    facts = convergence.section(study)
    return {"held": facts["held"], "moved": facts["moved_claims"], "not_run": facts["not_run"]}


def comparisons(study: Study) -> dict:
    """Every configured paired comparison on whole test sets (BLEU)."""
    table = tables.comparisons(study)
    return {"rows": table.to_dict("records") if len(table) else []}


def checks(study: Study) -> dict:
    return {"rows": claims.check_rows(claims.claims(study))}


def reproducibility(study: Study) -> dict:
    # provenance imports torch: only here, so that the workflow's rule files (figures.smk reads
    # sweeps.figure_families) import the facts without it
    from ...provenance import config_hash, git_state

    commit, dirty = git_state()
    env = front.run_environment(study)
    bench = study.benchmarks
    per_rule = (
        bench.groupby("rule")
        .agg(jobs=("s", "size"), total=("s", "sum"), longest=("s", "max"))
        .reset_index()
        .sort_values("total", ascending=False)
        .to_dict("records")
        if not bench.empty
        else []
    )
    packages = ("python", "torch", "triton", "sacrebleu", "sentencepiece", "snakemake")
    return {
        "commit": None if commit == "unknown" else commit,
        "dirty": dirty,
        "config_hash": config_hash(study.config) if study.config else None,
        "inputs": [
            (name, digest[:DIGEST_CHARS])
            for name, digest in sorted(study.manifest.get("inputs", {}).items())
        ],
        "digest_chars": DIGEST_CHARS,
        "versions": [{"package": k, "version": str(env[k])} for k in packages if k in env],
        "environment": env,
        "per_rule": per_rule,
        "signatures": sorted(set(study.scores.get("signature", pd.Series(dtype=str)).dropna())),
    }


def macros(study: Study) -> dict:
    return {"macros": claims.macros(study, claims.claims(study))}


# The findings the Discussion explains, by where their numbers live: a check of a claim (its
# `macro` in checks.csv) or a paired comparison (comparisons.csv, BLEU on the whole test set).
SURPRISE_CHECKS = {
    "relu": ("B4", "CollapseResidualRelu"),  # attention + ReLU stack: residual at depth
    "attention_only": ("B4", "CollapseResidualAttention"),
    "linear": ("B4", "CollapseResidualLinear"),
    "skip": ("B4", "CollapseResidualSkip"),
    "superposition": ("B4", "SuperpositionErrorLayer"),
    "big_key_rise": ("B5", "BigKeyRiseFracRandom"),
    "big_key_positive": ("B5", "BigKeyPositiveFracRandom"),
}
SURPRISE_COMPARISONS = {
    "scaled_vs_dot": "d2_scaled_dot_vs_dot",
    "dot_vs_additive": "d2_dot_vs_additive",
}
TIE_CLAIM = (
    "A3"  # its failing check counts rows peaking on one token alone; a reported one with ties
)


def check_value(study: Study, claim: str, macro: str) -> float | None:
    """The value of the check of `claim` that names `macro` (None when the ledger lacks it)."""
    checks = study.checks
    if checks.empty or not {"claim_id", "macro", "value"} <= set(checks):
        return None
    rows = checks[(checks["claim_id"] == claim) & (checks["macro"] == macro)]
    value = pd.to_numeric(rows["value"], errors="coerce").dropna()
    return float(value.iloc[0]) if len(value) else None


def whole_test_bleu(comparisons: pd.DataFrame, name: str) -> dict | None:
    """A comparison's BLEU row on the whole test set, final models (None when not run)."""
    if comparisons.empty or "comparison" not in comparisons:
        return None
    rows = comparisons[
        (comparisons["comparison"] == name)
        & (comparisons["metric"] == "bleu")
        & (comparisons["bucket"].astype(str) == ALL)
    ]
    if "epoch" in rows:
        rows = rows[rows["epoch"].astype(str) == FINAL]
    return rows.iloc[0].to_dict() if len(rows) else None


def tie_counts(study: Study) -> dict | None:
    """A3's tie: rows peaking on token 3 alone (the failing check) and with ties counted."""
    checks = study.checks
    if checks.empty or "claim_id" not in checks:
        return None
    own = checks[checks["claim_id"] == TIE_CLAIM]
    failed = own[own["status"] == "fail"]
    reported = own[own["status"] == "report"]
    if failed.empty or reported.empty:
        return None
    return {
        "alone": float(failed["value"].iloc[0]),
        "expected": failed["expected"].iloc[0],
        "with_ties": float(reported["value"].iloc[0]),
    }


def surprises(study: Study) -> dict:
    """The numbers behind the findings the Discussion explains; a missing one is None."""
    found = {key: check_value(study, *where) for key, where in SURPRISE_CHECKS.items()}
    for key, name in SURPRISE_COMPARISONS.items():
        found[key] = whole_test_bleu(study.comparisons, name)
    converged = [
        whole_test_bleu(ref.comparisons, SURPRISE_COMPARISONS["dot_vs_additive"])
        for ref in convergence.committed_references(study)
        if study.config.get("convergence")
    ]
    found["dot_vs_additive_converged"] = next((row for row in converged if row), None)
    found["tie"] = tie_counts(study)
    return found


# Each table of the paper: the rule that writes its evidence and the files it reads (a sweep
# family's table, tab:sweep-<family>, is added per family the study sweeps)
TABLE_SOURCES = [
    ("tab:essays", "claims_ledger", "results/claims/claims.csv"),
    ("tab:models", "paper_sections", "config, results/runs/*/meta.json"),
    ("tab:headline", "claims_ledger", "results/claims/claims.csv, committed references"),
    ("tab:variants", "collect_scores", "results/tables/scores.csv"),
    ("tab:length-shares", "collect_scores", "results/tables/scores.csv"),
    ("tab:scores", "collect_scores", "results/tables/scores.csv, results/runs/*/meta.json"),
    ("tab:convergence", "claims_ledger", "results/claims/claims.csv, committed references"),
    ("tab:references", "paper_sections", "committed references"),
    ("tab:attention", "attention_maps", "results/analysis/attention_*.csv"),
    ("tab:comparisons", "compare", "results/tables/comparisons.csv"),
    ("tab:checks", "claims_ledger", "results/claims/checks.csv"),
    ("tab:convergence-paths", "compare", "results/tables/comparisons.csv, committed references"),
    ("tab:budget", "train", "results/runs/*/log.csv, meta.json"),
    ("tab:thresholds", "paper_sections", "config/threshold_history.csv (git history)"),
    ("tab:thresholds-moved", "claims_ledger", "results/claims/checks.csv"),
]


def sweep_tables(study: Study) -> list[tuple[str, str, str]]:
    """The table of each sweep family the study trains (report.families), as TABLE_SOURCES."""
    keys = {k for sweep in tables.runs(study).get("sweep", []) for k in sweep}
    names = [name for name in FAMILIES if family_keys(name, keys)] + other_keys(keys)
    files = "results/tables/comparisons.csv, scores.csv"
    return [(f"tab:sweep-{name.replace('_', '-')}", "compare", files) for name in names]


def sources(study: Study) -> dict:
    """Where every figure and table comes from: rule, file(s), and the commit of this build."""
    from ...provenance import git_state

    commit, _ = git_state()
    return {
        "commit": None if commit == "unknown" else commit[:12],
        "tables": [
            {"label": label, "rule": rule, "files": files}
            for label, rule, files in TABLE_SOURCES + sweep_tables(study)
        ],
    }
