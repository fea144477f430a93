"""The claims ledger: every claim of config/claims.yaml, measured and judged, as two CSVs.

python -m softlookup.claims.ledger --claims config/claims.yaml \
    --probes results/probes/a.csv ... --scores results/tables/scores.csv \
    --comparisons results/tables/comparisons.csv --bench results/bench/generation_cpu.csv ... \
    --training results/tables/training.csv --analysis results/analysis/attention_<run>.csv ... \
    --out results/claims/claims.csv --out-checks results/claims/checks.csv

Only the files named on the command line are read (the rule's declared inputs). claims.csv has
one row per claim (COLUMNS, then the environment's columns); checks.csv one row per check
(CHECK_COLUMNS; a paired check's p_value is that of its null, estimate = threshold, in the
two-sided form, p_adjusted the same Holm-adjusted over the claim's family_size tests: a pass needs
p_adjusted < 0.05 and the estimate on the claimed side). No LaTeX here: the report renders both
tables.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import yaml

from ..provenance import config_hash, environment
from .checks import Evidence, Outcome, allowed_deviation, evaluate, format_number
from .multiplicity import adjust
from .spec import GROUPS, Check, Claim, load_claims
from .verdicts import headline, measured_full, verdict

COLUMNS = [
    "id", "group", "short", "source", "expected", "measured", "ci_low", "ci_high", "verdict",
    "reason", "where", "rule", "outputs", "config_hash",
    # after the contract's columns: the rest of the claim, for the report and the appendix
    "value", "group_name", "claim", "paper", "cite", "expected_detail", "tolerance", "note",
    "checks_decisive", "checks_passed", "checks_pending", "measured_detail",
]  # fmt: skip
CHECK_COLUMNS = [
    "claim_id", "check", "kind", "label", "op", "expected", "allowed", "status", "value",
    "value_text", "ci_low", "ci_high", "p_value", "p_adjusted", "family_size", "measured", "detail",
    "rule", "output", "macro", "decisive", "headline",
]  # fmt: skip


def producer(check: Check, producers: dict) -> str:
    """The Snakemake rule that writes the check's evidence, from the claims file's map: a rule
    name per kind of evidence or, where one kind comes from several rules, name -> rule."""
    rule = producers[check.kind]
    return str(rule[check.name]) if isinstance(rule, dict) else str(rule)


def check_row(claim: Claim, number: int, check: Check, outcome: Outcome, rule: str) -> dict:
    allowed = ""
    if getattr(check, "op", "") == "approx":
        allowed = format_number(allowed_deviation(check), ".3g")
    elif getattr(check, "margin", None) is not None:
        allowed = f"{check.margin:g}"
    return {
        "claim_id": claim.id,
        "check": number,
        "kind": check.kind,
        "label": check.label,
        "op": check.op,
        "expected": format_number(check.expected, check.fmt),
        "allowed": allowed,
        "status": outcome.status,
        "value": outcome.value,
        "value_text": ""
        if outcome.value is None or outcome.status == "pending"
        else format_number(outcome.value, check.fmt),
        "ci_low": outcome.ci_low,
        "ci_high": outcome.ci_high,
        "p_value": None if outcome.judged is None else outcome.judged.p_value,
        "p_adjusted": outcome.p_adjusted,
        "family_size": outcome.family_size,
        "measured": outcome.measured,
        "detail": outcome.detail,
        "rule": rule,
        "output": outcome.output,
        "macro": check.macro or "",
        "decisive": check.decisive,
        "headline": check.headline,
    }


def judge(claim: Claim, evidence: Evidence, producers: dict) -> tuple[dict, list[dict]]:
    """One claims.csv row for a claim, and one checks.csv row per check."""
    outcomes = adjust(list(claim.checks), [evaluate(check, evidence) for check in claim.checks])
    rules = [producer(check, producers) for check in claim.checks]
    result, reason = verdict(outcomes)
    text, top = headline(list(claim.checks), outcomes)
    decisive = [o for o in outcomes if o.status != "report"]
    row = {
        "id": claim.id,
        "group": claim.group,
        "short": claim.short,
        "source": " ".join(claim.sources),
        "expected": claim.expected,
        "measured": text,
        "ci_low": None if top is None else top.ci_low,
        "ci_high": None if top is None else top.ci_high,
        "verdict": result,
        "reason": reason,
        "where": claim.section,
        "rule": " ".join(dict.fromkeys(rules)),
        "outputs": " ".join(
            dict.fromkeys(o for outcome in outcomes for o in outcome.output.split())
        ),
        "value": None if top is None else top.value,
        "group_name": GROUPS.get(claim.group, ""),
        "claim": claim.text,
        "paper": claim.paper,
        "cite": claim.cite,
        "expected_detail": claim.expected_detail,
        "tolerance": claim.tolerance,
        "note": claim.note,
        "checks_decisive": len(decisive),
        "checks_passed": sum(o.status == "pass" for o in decisive),
        "checks_pending": sum(o.status == "pending" for o in decisive),
        "measured_detail": measured_full(outcomes),
    }
    checks = [
        check_row(claim, number, check, outcome, rule)
        for number, (check, outcome, rule) in enumerate(zip(claim.checks, outcomes, rules), 1)
    ]
    return row, checks


def build_ledger(claims_path: Path, evidence: Evidence) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(claims table, checks table) for every claim of the file, in file order."""
    claims, producers = load_claims(claims_path)
    settings = config_hash(yaml.safe_load(Path(claims_path).read_text()))
    env = environment()
    rows, checks = [], []
    for claim in claims:
        row, claim_checks = judge(claim, evidence, producers)
        rows.append({**row, "config_hash": settings, **env})
        checks += claim_checks
    columns = COLUMNS + [name for name in env if name not in COLUMNS]
    return pd.DataFrame(rows, columns=columns), pd.DataFrame(checks, columns=CHECK_COLUMNS)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, required=True, help="config/claims.yaml")
    parser.add_argument("--probes", type=Path, nargs="*", default=[], help="probe CSVs")
    parser.add_argument("--scores", type=Path, help="results/tables/scores.csv")
    parser.add_argument("--comparisons", type=Path, help="results/tables/comparisons.csv")
    parser.add_argument("--bench", type=Path, nargs="*", default=[], help="bench CSVs")
    parser.add_argument("--training", type=Path, help="results/tables/training.csv")
    parser.add_argument("--analysis", type=Path, nargs="*", default=[],
                        help="results/analysis/attention_<run>.csv of trained runs")
    parser.add_argument("--out", type=Path, required=True, help="claims.csv to write")
    parser.add_argument("--out-checks", type=Path, required=True, help="checks.csv to write")
    args = parser.parse_args(argv)
    evidence = Evidence(args.probes, args.scores, args.comparisons, args.bench, args.training,
                        args.analysis)
    ledger, checks = build_ledger(args.claims, evidence)
    for path in (args.out, args.out_checks):
        path.parent.mkdir(parents=True, exist_ok=True)
    ledger.to_csv(args.out, index=False)
    checks.to_csv(args.out_checks, index=False)
    print(ledger[["id", "verdict", "measured"]].to_string(index=False, max_colwidth=90))


if __name__ == "__main__":
    main()
