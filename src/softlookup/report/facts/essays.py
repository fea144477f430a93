"""Facts of the section that says what the two essays claim and how each claim is tested: the
essays (their BibTeX keys), and per worked, statistical and counting claim (A-C) what it says,
which essay says it, what was computed, the essay's figure, what came out and the verdict."""

from __future__ import annotations

from pathlib import Path

from ..labels import PROBE_METHODS, probe_method
from ..study import Study
from . import claims, published

# claims.yaml's source codes -> the BibTeX keys of the essays (paper/refs.bib)
ESSAYS = {"E1": "essaylookup", "E2": "essaylearn"}
GROUPS = ("A", "B", "C")  # worked arithmetic, statistical, counting: the claims without training


def essay_keys(source: str) -> list[str]:
    """'E1 E2' -> ['essaylookup', 'essaylearn']; an unknown code is an error naming it."""
    codes = str(source).split()
    unknown = [code for code in codes if code not in ESSAYS]
    if unknown:
        raise ValueError(f"claims.csv: source {unknown} is not an essay of ESSAYS {list(ESSAYS)}")
    return [ESSAYS[code] for code in codes]


def walkthrough(study: Study) -> list[dict]:
    """One row per A-C claim, in ledger order: id, short, essays (cite keys), computed (how it
    was measured, from its evidence file), expected (the essay's figure), the claim itself."""
    found = claims.claims(study)
    rows = []
    for _, row in study.claims.iterrows() if "id" in study.claims else []:
        claim = found[str(row["id"])]
        if not claim.id.startswith(GROUPS):
            continue
        probes = [Path(p).stem for p in str(row.get("outputs", "")).split()]
        rows.append(
            {
                "id": claim.id,
                "short": claim.short,
                "essays": essay_keys(
                    " ".join(published.of(claim.id)["essays"] or []) or row.get("source", "")
                ),
                "computed": probe_method(next((p for p in probes if p in PROBE_METHODS), "")),
                "expected": claim.expected,
                "claim": claim,  # its verdict and headline measurement (_wording.tex words them)
            }
        )
    return rows


def section(study: Study) -> dict:
    probes = study.config.get("probes", {})
    found = claims.claims(study)
    return {
        "total": len(found),
        "trained": sum(not claim_id.startswith(GROUPS) for claim_id in found),
        "essays": list(ESSAYS.values()),
        "rows": walkthrough(study),
        "probe_seed": probes.get("seed"),
        "spread_pairs": probes.get("spread", {}).get("n_pairs"),
    }
