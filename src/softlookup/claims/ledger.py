"""The claims ledger: every claim of config/claims.yaml, measured and judged, as two CSVs.

python -m softlookup.claims.ledger --claims config/claims.yaml \
    --probes results/probes/a.csv ... --scores results/tables/scores.csv \
    --comparisons results/tables/comparisons.csv --bench results/bench/generation_cpu.csv ... \
    --training results/tables/training.csv --analysis results/analysis/attention_<run>.csv ... \
    --out results/claims/claims.csv --out-checks results/claims/checks.csv

Only the files named on the command line are read (the rule's declared inputs). claims.csv has
one row per claim (COLUMNS, then the environment's columns); checks.csv one row per check
(CHECK_COLUMNS: numbers and codes: status and reason (claims.checks.REASONS), value, interval,
df, the standard error se of a paired check's estimate, p_value of the check's null (one-sided
where the claim is: claims.checks.comparison), p_adjusted the same Holm-adjusted over the
claim's family_size tests, the facts a sentence needs as JSON; `text` is left empty for
softlookup.report.wording, the plain-text rendering of paper/sections/_wording.tex, which alone
words them: the rule runs it next). claims.csv's verdict and reason code follow claims.verdicts.
No LaTeX here: the report renders both tables.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import pandas as pd
import yaml

from ..formats import format_number
from ..provenance import config_hash, environment
from .checks import Evidence, Outcome, allowed_deviation, evaluate
from .multiplicity import adjust
from .spec import GROUPS, Check, Claim, load_claims
from .verdicts import counts, headline, largest_deviation, verdict

COLUMNS = [
    "id",
    "group",
    "short",
    "source",
    "expected",
    "measured",
    "ci_low",
    "ci_high",
    "verdict",
    "reason",
    "where",
    "rule",
    "outputs",
    "config_hash",
    # after the contract's columns: the rest of the claim, for the report and the appendix
    "value",
    "text",
    "group_name",
    "claim",
    "paper",
    "cite",
    "expected_detail",
    "tolerance",
    "note",
    "checks_decisive",
    "checks_passed",
    "checks_failed",
    "checks_inconclusive",
    "checks_pending",
    "largest_deviation",
]
CHECK_COLUMNS = [
    "claim_id",
    "check",
    "kind",
    "label",
    "op",
    "by",
    "expected",
    "allowed",
    "fmt",
    "status",
    "reason",
    "value",
    "value_text",
    "ci_low",
    "ci_high",
    "df",
    "se",
    "p_value",
    "p_adjusted",
    "family_size",
    "deviation",
    "facts",
    "text",
    "rule",
    "output",
    "macro",
    "decisive",
    "headline",
]


def producer(check: Check, producers: dict) -> str:
    """The Snakemake rule that writes the check's evidence, from the claims file's map: a rule
    name per kind of evidence or, where one kind comes from several rules, name -> rule."""
    rule = producers[check.kind]
    return str(rule[check.name]) if isinstance(rule, dict) else str(rule)


def _json_number(value):
    """A number JSON can hold (inf and nan as strings JSON readers take: 'inf', 'nan')."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    return value


def _facts_json(facts: dict) -> str:
    def clean(value):
        if isinstance(value, dict):
            return {str(k): clean(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [clean(v) for v in value]
        return _json_number(value)

    return json.dumps(clean(facts), sort_keys=True)


def check_row(claim: Claim, number: int, check: Check, outcome: Outcome, rule: str) -> dict:
    """One checks.csv row: the check's settings, its outcome's numbers and codes, the facts a
    sentence needs (JSON), and that sentence as the paper's template words it (`text`)."""
    allowed = None
    if check.op == "approx":
        allowed = allowed_deviation(check)
    elif getattr(check, "margin", None) is not None:
        allowed = float(check.margin)
    measured = outcome.value is not None and outcome.status != "pending"
    return {
        "claim_id": claim.id,
        "check": number,
        "kind": check.kind,
        "label": check.label,
        "op": check.op,
        "by": getattr(check, "by", "value"),
        "expected": check.expected
        if check.expected is not None
        else (0.0 if check.op in ("above", "below") else None),
        "allowed": allowed,
        "fmt": check.fmt,
        "status": outcome.status,
        "reason": outcome.reason,
        "value": outcome.value,
        "value_text": format_number(outcome.value, check.fmt) if measured else "",
        "ci_low": outcome.ci_low,
        "ci_high": outcome.ci_high,
        "df": outcome.df,
        "se": outcome.se,
        "p_value": outcome.p_value,
        "p_adjusted": outcome.p_adjusted,
        "family_size": outcome.family_size,
        "deviation": outcome.deviation,
        "facts": _facts_json(outcome.facts),
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
    chosen = headline(list(claim.checks))
    top = None if chosen is None else outcomes[chosen]
    shown = top is not None and top.status != "pending"
    checks = [
        check_row(claim, number, check, outcome, rule) | {"headline": number - 1 == chosen}
        for number, (check, outcome, rule) in enumerate(
            zip(claim.checks, outcomes, rules, strict=True), 1
        )
    ]
    row = {
        "id": claim.id,
        "group": claim.group,
        "short": claim.short,
        "source": " ".join(claim.sources),
        "expected": claim.expected,
        "measured": checks[chosen]["value_text"] if shown else "",
        "ci_low": top.ci_low if shown else None,
        "ci_high": top.ci_high if shown else None,
        "verdict": result,
        "reason": reason,
        "where": claim.section,
        "rule": " ".join(dict.fromkeys(rules)),
        "outputs": " ".join(
            dict.fromkeys(o for outcome in outcomes for o in outcome.output.split())
        ),
        "value": top.value if shown else None,
        "group_name": GROUPS.get(claim.group, ""),
        "claim": claim.text,
        "paper": claim.paper,
        "cite": claim.cite,
        "expected_detail": claim.expected_detail,
        "tolerance": claim.tolerance,
        "note": claim.note,
        **counts(outcomes),
        "largest_deviation": largest_deviation(outcomes),
    }
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
    parser.add_argument(
        "--analysis",
        type=Path,
        nargs="*",
        default=[],
        help="results/analysis/attention_<run>.csv of trained runs",
    )
    parser.add_argument("--out", type=Path, required=True, help="claims.csv to write")
    parser.add_argument("--out-checks", type=Path, required=True, help="checks.csv to write")
    args = parser.parse_args(argv)
    evidence = Evidence(
        args.probes, args.scores, args.comparisons, args.bench, args.training, args.analysis
    )
    ledger, checks = build_ledger(args.claims, evidence)
    for path in (args.out, args.out_checks):
        path.parent.mkdir(parents=True, exist_ok=True)
    ledger.to_csv(args.out, index=False)
    checks.to_csv(args.out_checks, index=False)
    print(ledger[["id", "verdict", "reason", "measured"]].to_string(index=False, max_colwidth=90))


if __name__ == "__main__":
    main()
