"""The claims ledger: every claim of config/claims.yaml, measured and judged.

python -m softlookup.claims.ledger --claims config/claims.yaml --probes-dir results/probes \
    --scores results/tables/scores.csv --bench-dir results/bench \
    --out results/claims/claims.csv --out-tex results/claims/claims_table.tex \
    --out-macros results/claims/claims_macros.tex
"""

from __future__ import annotations

import argparse
import platform
from pathlib import Path

import pandas as pd
import torch

from .checks import Evidence, evaluate, format_number
from .spec import Claim, NumericCheck, ScoresCheck, load_claims
from ..report.latex import claims_macros, claims_table
from .verdicts import measured_full, measured_summary, verdict

COLUMNS = [
    "id", "claim", "source", "paper", "cite", "expected", "measured", "tolerance", "verdict",
    "reason", "rule", "output", "measured_detail", "python", "torch", "device",
]  # fmt: skip


NOT_MEASURED = "not measured"


def environment() -> dict[str, str]:
    if torch.cuda.is_available():
        device = f"cuda: {torch.cuda.get_device_name(0)}"
    else:
        device = f"cpu: {platform.machine()}"
    return {"python": platform.python_version(), "torch": torch.__version__, "device": device}


def producer(check: NumericCheck | ScoresCheck, producers: dict) -> str:
    """The Snakemake rule that writes the check's evidence, from the claims file's map: a pattern
    ("probe_{name}") or, where rules and outputs do not pair by name, a mapping name -> rule."""
    kind = "scores" if isinstance(check, ScoresCheck) else check.kind
    name = "" if isinstance(check, ScoresCheck) else check.name
    rule = producers.get(kind, kind)
    return str(rule[name]) if isinstance(rule, dict) else str(rule).format(name=name)


def judge(claim: Claim, evidence: Evidence, producers: dict) -> tuple[dict, dict[str, str]]:
    """One ledger row for a claim, and the macros its checks asked for."""
    outcomes = [evaluate(check, evidence) for check in claim.checks]
    result, reason = verdict(outcomes)
    numbers = {
        check.macro: NOT_MEASURED
        if outcome.value is None
        else format_number(outcome.value, check.fmt)
        for check, outcome in zip(claim.checks, outcomes)
        if getattr(check, "macro", None)
    }  # every declared macro exists, so the paper compiles before the evidence does
    row = {
        "id": claim.id,
        "claim": claim.text,
        "source": " ".join(claim.sources),
        "paper": claim.paper,
        "cite": claim.cite,
        "expected": claim.expected,
        "measured": measured_summary(outcomes),
        "tolerance": claim.tolerance,
        "verdict": result,
        "reason": reason + (f". {claim.note}" if claim.note else ""),
        "rule": " ".join(dict.fromkeys(producer(check, producers) for check in claim.checks)),
        "output": " ".join(dict.fromkeys(outcome.output for outcome in outcomes)),
        "measured_detail": measured_full(outcomes),
    }
    return row, numbers


def build_ledger(claims_path: Path, evidence: Evidence) -> tuple[pd.DataFrame, dict[str, str]]:
    claims, producers = load_claims(claims_path)
    rows, numbers = [], {}
    for claim in claims:
        row, claim_numbers = judge(claim, evidence, producers)
        rows.append({**row, **environment()})
        numbers.update(claim_numbers)
    return pd.DataFrame(rows, columns=COLUMNS), numbers


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, required=True, help="config/claims.yaml")
    parser.add_argument("--probes-dir", type=Path, required=True, help="the probes' CSVs")
    parser.add_argument("--scores", type=Path, required=True, help="results/tables/scores.csv")
    parser.add_argument("--bench-dir", type=Path, required=True, help="results/bench")
    parser.add_argument("--out", type=Path, required=True, help="claims.csv to write")
    parser.add_argument("--out-tex", type=Path, required=True, help="LaTeX table fragment")
    parser.add_argument("--out-macros", type=Path, required=True, help="LaTeX macros")
    args = parser.parse_args(argv)
    evidence = Evidence(args.probes_dir, args.scores, args.bench_dir)
    ledger, numbers = build_ledger(args.claims, evidence)
    for path in (args.out, args.out_tex, args.out_macros):
        path.parent.mkdir(parents=True, exist_ok=True)
    ledger.to_csv(args.out, index=False)
    args.out_tex.write_text(claims_table(ledger))
    args.out_macros.write_text(claims_macros(ledger, numbers))
    print(ledger[["id", "verdict", "reason"]].to_string(index=False, max_colwidth=90))


if __name__ == "__main__":
    main()
