"""The claims ledger as facts: each claim's verdict and the checks behind it, as numbers and
codes, for the templates to word (paper/sections/_wording.tex), the headline table of the
trained-model claims, the ledger and checks tables, and the macros.

Read from results/claims/claims.csv and checks.csv. A claim the ledger lacks is still a fact
(verdict "missing"), so a template can say so instead of failing. The ledger writes checks.csv's
rows through `claim_of` too (report.wording renders their plain text), so the paper and the CSV
word one object the same way.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ...claims.checks.comparison import repeat_chance
from ...claims.verdicts import VERDICTS
from ..latex import Tex, escape, macro_name, missing
from ..study import Study, per_study
from . import published

__all__ = ["VERDICTS", "Check", "Claim", "Claims", "claims", "claim_of", "check_of"]
# the sections of the paper a ledger row may name (`where`): Table 1 and the ledger refer to them
SECTIONS = (
    "setup",
    "results",
    "length",
    "scores",
    "scaling",
    "heads",
    "masking",
    "training",
    "cost",
    "kvcache",
    "kernel",
    "attention",
    "probes",
    "probes-worked",
    "probes-statistical",
    "probes-counting",
    "discussion",
    "claims",
    "threats",
)
# the claims on trained translators and timed kernels (D1-D8), each reported in one of these
HEADLINE_SECTIONS = ("length", "scores", "scaling", "heads", "masking", "cost", "kvcache", "kernel")
NUMBERS = (
    "expected",
    "allowed",
    "value",
    "ci_low",
    "ci_high",
    "df",
    "se",
    "p_value",
    "p_adjusted",
    "deviation",
)


def _text(value) -> str:
    return "" if missing(value) or str(value) == "nan" else str(value).strip()


def _number(value) -> float | None:
    """A CSV cell as a number; None when empty or not a finite-or-infinite number."""
    number = pd.to_numeric(value, errors="coerce")
    return None if missing(number) or math.isnan(number) else float(number)


@dataclass
class Check:
    """One check of checks.csv: numbers, a status and a reason code (claims.checks.REASONS)."""

    check: int
    label: str
    status: str  # pass, fail, inconclusive, pending, report
    reason: str
    op: str = ""
    fmt: str = ".3g"
    expected: float | None = None  # the threshold (approx: the expected figure)
    allowed: float | None = None  # approx: the tolerance; equivalent, non_inferior: the margin
    value: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    df: float | None = None
    se: float | None = None  # a paired check's standard error
    p_value: float | None = None
    p_adjusted: float | None = None  # the judged test's p, Holm-adjusted within the claim
    family_size: int | None = None
    deviation: float | None = None
    facts: dict = field(default_factory=dict)  # systems, test set, bucket, points, floor ...
    headline: bool = False
    output: str = ""
    claim: str = ""  # the id of the claim it belongs to

    @property
    def name(self) -> str:
        """The check as the paper tags what it prints ('D7.3'): one quantity, one number."""
        return f"{self.claim}.{self.check}"

    @property
    def repeat_chance(self) -> float | None:
        """The chance a rerun gives this check its status again, were its difference the one
        measured (claims.checks.comparison.repeat_chance); None where no test decides it."""
        return repeat_chance(
            self.reason,
            self.p_value,
            self.p_adjusted,
            self.df,
            self.se,
            self.facts.get("se_seed"),
            self.facts.get("seed_df"),
        )


@dataclass
class Claim:
    """One ledger row. `verdict` is "missing" when the ledger has no row for the claim."""

    id: str
    verdict: str = "missing"
    reason: str = ""
    short: str = ""
    expected: str = ""
    section: str = ""  # the label of the section that reports it ("sec:length"), or ""
    checks: list[Check] = field(default_factory=list)
    # for a reader (paper/published.yaml): what the essay says, what its source published, what
    # of the claim the checks test, what a pending claim waits for ("" where not given)
    essay: str = ""
    published: str = ""
    scope: str = ""
    waits: str = ""

    @property
    def decisive_checks(self) -> list[Check]:
        return [c for c in self.checks if c.status != "report"]

    @property
    def decisive(self) -> int:
        return len(self.decisive_checks)

    @property
    def passed(self) -> int:
        return sum(c.status == "pass" for c in self.checks)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def inconclusive(self) -> list[Check]:
        return [c for c in self.checks if c.status == "inconclusive"]

    @property
    def largest_deviation(self) -> float | None:
        found = [c.deviation for c in self.decisive_checks if c.deviation is not None]
        return max(found) if found else None

    @property
    def headline_check(self) -> Check | None:
        """The check whose measurement and interval stand for the claim (None: its counts do)."""
        return next((c for c in self.checks if c.headline), None)

    @property
    def measured(self) -> Tex:
        """The headline check's number in its format ('--' when none or pending)."""
        check = self.headline_check
        if check is None or check.value is None or check.status == "pending":
            return Tex("--")
        return escape(format(check.value, check.fmt))

    @property
    def ci_low(self) -> float:
        check = self.headline_check
        return math.nan if check is None or check.ci_low is None else check.ci_low

    @property
    def ci_high(self) -> float:
        check = self.headline_check
        return math.nan if check is None or check.ci_high is None else check.ci_high

    @property
    def has_interval(self) -> bool:
        return not (math.isnan(self.ci_low) or math.isnan(self.ci_high))

    @property
    def p_value(self) -> float:
        """The headline check's judged (Holm-adjusted) p-value (NaN: it tests nothing)."""
        check = self.headline_check
        return math.nan if check is None or check.p_adjusted is None else check.p_adjusted

    @property
    def threshold(self) -> Tex:
        """What the headline check asks: '> 0.50', '< 1', 'within ± 1' ('' without one)."""
        check = self.headline_check
        if check is None or check.op in ("", "report"):
            return Tex("")
        if check.op == "equivalent":
            return escape(f"within ± {check.allowed:g}")
        if check.op == "non_inferior":
            return escape(f"> -{check.allowed:g}")
        sign = {"above": "> ", "below": "< ", "approx": ""}.get(check.op, "")
        return escape(sign + format(check.expected, check.fmt))


class Claims(dict):
    """{id: Claim}; an id the ledger lacks gives a Claim with verdict "missing"."""

    def __missing__(self, claim_id: str) -> Claim:
        return Claim(claim_id)

    def with_verdict(self, verdict: str) -> list[Claim]:
        return [c for c in self.values() if c.verdict == verdict]


def check_of(row) -> Check:
    """A checks.csv row (a dict or a Series) as a Check."""
    facts = row.get("facts")
    size = _number(row.get("family_size"))
    return Check(
        check=int(_number(row.get("check")) or 0),
        label=_text(row.get("label")),
        status=_text(row.get("status")),
        reason=_text(row.get("reason")),
        op=_text(row.get("op")),
        fmt=_text(row.get("fmt")) or ".3g",
        **{name: _number(row.get(name)) for name in NUMBERS},
        family_size=None if size is None else int(size),
        facts=facts if isinstance(facts, dict) else json.loads(_text(facts) or "{}"),
        headline=str(row.get("headline")).lower() == "true",
        output=_text(row.get("output")),
        claim=_text(row.get("claim_id")),
    )


def claim_of(row, checks: list) -> Claim:
    """A claims.csv row and its checks.csv rows as a Claim."""
    where = _text(row.get("where"))
    return Claim(
        id=_text(row.get("id")),
        verdict=_text(row.get("verdict")) or "pending",
        reason=_text(row.get("reason")),
        short=_text(row.get("short")),
        expected=_text(row.get("expected")),
        section=where if where.removeprefix("sec:") in SECTIONS else "",
        checks=[check if isinstance(check, Check) else check_of(check) for check in checks],
    )


@per_study
def claims(study: Study) -> Claims:
    """Every claim of the ledger, with its checks."""
    found = Claims()
    if study.claims.empty or "id" not in study.claims:
        return found
    checks = study.checks
    has_checks = "claim_id" in checks
    for _, row in study.claims.iterrows():
        rows = checks[checks.claim_id == row["id"]] if has_checks else checks.iloc[0:0]
        found[str(row["id"])] = for_reader(claim_of(row, [r for _, r in rows.iterrows()]))
    return found


def for_reader(claim: Claim) -> Claim:
    """The claim with what paper/published.yaml tells a reader about it: the essay's statement,
    the source's figures, and the expectation and section where the file gives its own."""
    told = published.of(claim.id)
    for name in ("essay", "published", "scope", "waits"):
        setattr(claim, name, " ".join((told[name] or "").split()))
    claim.expected = told["expected"] or claim.expected
    claim.section = told["section"] or claim.section
    return claim


def headline(found: Claims) -> list[Claim]:
    """The claims about trained translators (Table 1 of Results), in ledger order."""
    return [c for c in found.values() if c.section.removeprefix("sec:") in HEADLINE_SECTIONS]


def check_rows(found: Claims) -> list[dict]:
    """Every check of every claim, the claim on its first check only, and the file holding its
    evidence."""
    return [
        {
            "claim": claim if number == 0 else None,
            "check": check,
            "evidence": Path(check.output.split()[0]).name if check.output else "--",
        }
        for claim in found.values()
        for number, check in enumerate(claim.checks)
    ]


def macros(study: Study, found: Claims) -> dict[str, Tex]:
    """Verdict counts, each claim's verdict and headline, and every check that names a macro."""
    values = {"ClaimsTotal": Tex(str(len(found)))}
    for verdict in VERDICTS:
        values[f"Claims{macro_name(verdict.title())}"] = Tex(str(len(found.with_verdict(verdict))))
    for claim in found.values():
        values[f"ClaimVerdict{macro_name(claim.id)}"] = escape(claim.verdict)
        values[f"ClaimMeasured{macro_name(claim.id)}"] = claim.measured
    if "macro" in study.checks:
        for _, row in study.checks.iterrows():
            name, value = _text(row.get("macro")), _text(row.get("value_text"))
            if name and value:
                values[macro_name(name)] = escape(value)
    return values
