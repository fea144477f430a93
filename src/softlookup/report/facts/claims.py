"""The claims ledger as facts: each claim's verdict, headline and the checks behind it, the
headline table of the trained-model claims, the ledger and checks tables, and the macros.

Read from results/claims/claims.csv and checks.csv. A claim the ledger lacks is still a fact
(verdict "missing"), so a template can say so instead of failing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from ..latex import Tex, escape, macro_name, missing
from ..study import Study

VERDICTS = ("reproduced", "partly", "not reproduced", "pending")
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
    "attention",
    "probes",
    "probes-worked",
    "probes-statistical",
    "probes-counting",
    "discussion",
    "claims",
    "threats",
)
HEADLINE_SECTIONS = ("length", "scores", "scaling", "heads", "masking")  # trained translators
PENDING_PREFIX = re.compile(
    r"^(?:(?:nothing measured yet|not measured in this configuration|[^:;]*still pending|"
    r"pending)\s*:\s*)+"
)
CELL_CHARS = 110  # a ledger cell longer than this is cut; the appendix and claims.csv hold it all
SHORT_WORDS = 12


def text(row, *columns: str, default: str = "") -> str:
    """The first of `columns` that the row has and fills."""
    for column in columns:
        value = row.get(column)
        if not missing(value) and str(value).strip() and str(value) != "nan":
            return str(value).strip()
    return default


def shorten(value: str, limit: int = CELL_CHARS) -> str:
    """A cell cut at a word before `limit` characters, ending in an ellipsis."""
    value = value.replace("not measured", "pending")
    if len(value) <= limit:
        return value
    return value[: value.rfind(" ", 0, limit - 1) or limit - 1].rstrip(" ,;:") + " …"


@dataclass
class Check:
    label: str
    status: str  # pass, fail, pending, report
    measured: str
    detail: str
    headline: bool = False  # the check whose measurement is the claim's headline
    p_adjusted: float = float("nan")  # its test's p, Holm-adjusted within the claim, as judged
    expected: str = ""  # what it asks of the measurement ('> 0.50', 'within ± 1.0')


@dataclass
class Claim:
    """One ledger row. `verdict` is "missing" when the ledger has no row for the claim."""

    id: str
    verdict: str = "missing"
    short: str = ""
    expected: str = ""
    measured: str = ""  # the headline, "label = value"
    ci_low: float = float("nan")
    ci_high: float = float("nan")
    passed: int = 0
    decisive: int = 0
    section: str = ""  # the label of the section that reports it ("sec:length"), or ""
    why_pending: str = ""
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        return [c for c in self.checks if c.status == "fail"]

    @property
    def headline_check(self) -> Check:
        """The check whose measurement and interval the headline gives (an empty one if none)."""
        return next((c for c in self.checks if c.headline), Check("", "", "", ""))

    @property
    def p_value(self) -> float:
        """The headline check's judged (Holm-adjusted) p-value (NaN: it tests nothing)."""
        return self.headline_check.p_adjusted

    @property
    def threshold(self) -> str:
        """What the headline check asks of the headline measurement ('': no headline check)."""
        return self.headline_check.expected

    @property
    def has_interval(self) -> bool:
        return not (missing(self.ci_low) or missing(self.ci_high))


class Claims(dict):
    """{id: Claim}; an id the ledger lacks gives a Claim with verdict "missing"."""

    def __missing__(self, claim_id: str) -> Claim:
        return Claim(claim_id)

    def with_verdict(self, verdict: str) -> list[Claim]:
        return [c for c in self.values() if c.verdict == verdict]


def counts(row) -> tuple[int, int]:
    """(passed, decisive) from claims.csv's columns, else from the reason ('2 of 3 checks')."""
    if not missing(row.get("checks_decisive")):
        return int(row.get("checks_passed", 0)), int(row["checks_decisive"])
    found = re.search(r"(\d+) of (\d+) checks", text(row, "reason"))
    return (int(found[1]), int(found[2])) if found else (0, 0)


def why_pending(reason: str) -> str:
    """The ledger's reason of a pending claim without its leading 'nothing measured yet:'."""
    why = PENDING_PREFIX.sub("", reason)
    return why if len(why) < 220 else why[:217].rsplit(" ", 1)[0] + " ..."


def claims(study: Study) -> Claims:
    """Every claim of the ledger, with its checks."""
    found = Claims()
    if study.claims.empty or "id" not in study.claims:
        return found
    checks = study.checks
    owner = next((c for c in ("claim_id", "id") if c in checks), None)
    for _, row in study.claims.iterrows():
        claim_id = text(row, "id")
        passed, decisive = counts(row)
        rows = checks[checks[owner] == claim_id] if owner else checks
        where = text(row, "where")
        found[claim_id] = Claim(
            id=claim_id,
            verdict=text(row, "verdict", default="pending"),
            short=short_claim(row),
            expected=text(row, "expected"),
            measured=text(row, "measured"),
            ci_low=pd.to_numeric(row.get("ci_low"), errors="coerce"),
            ci_high=pd.to_numeric(row.get("ci_high"), errors="coerce"),
            passed=passed,
            decisive=decisive,
            section=where if where.removeprefix("sec:") in SECTIONS else "",
            why_pending=why_pending(text(row, "reason")),
            checks=[
                Check(
                    label=text(check, "label", "check", "name", default="--"),
                    status=text(check, "status", "outcome", default="--"),
                    measured=text(check, "measured", "value_text", "value"),
                    detail=text(check, "detail"),
                    headline=text(check, "headline").lower() == "true",
                    p_adjusted=pd.to_numeric(check.get("p_adjusted"), errors="coerce"),
                    expected=expectation(check),
                )
                for _, check in (rows.iterrows() if owner else [])
            ],
        )
    return found


def short_claim(row) -> str:
    """The claim in a few words: the `short` column, else the first words of `claim`."""
    short = text(row, "short")
    if short:
        return short
    words = text(row, "claim").split()
    return " ".join(words[:SHORT_WORDS]) + (" …" if len(words) > SHORT_WORDS else "")


def headline(found: Claims) -> list[Claim]:
    """The claims about trained translators (Table 1 of Results), in ledger order."""
    return [c for c in found.values() if c.section.removeprefix("sec:") in HEADLINE_SECTIONS]


def measured_cell(claim: Claim) -> Tex:
    """The headline measurement with its interval, cut to a cell ('' when nothing was
    measured)."""
    cell = escape(shorten(claim.measured))
    if claim.has_interval:
        cell += " " + escape(f"[{claim.ci_low:.3g}, {claim.ci_high:.3g}]")
    return Tex(cell)


def expectation(row) -> str:
    """What a check asks of its measurement: '> 0.50', '3 ± 0', 'within ± 1.0' (equivalence),
    '> -1.0' (non-inferiority), 'reported only'."""
    op, allowed = text(row, "op"), text(row, "allowed")
    expected = text(row, "expected", default="--")
    if op == "report":
        return "reported only"
    if op == "equivalent":
        return f"within ± {allowed}"
    if op == "non_inferior":
        return f"> -{allowed}"
    ops = {"approx": "", "above": "> ", "below": "< ", "equal": "= "}
    expected = ops.get(op, f"{op} " if op else "") + expected
    return expected + (f" ± {allowed}" if allowed and allowed not in ("0", "0.0") else "")


def check_cells(row) -> dict:
    """One check of the appendix: claim, label, expected (with its tolerance), measured (or why
    it is pending), outcome, and the file that holds the evidence."""
    status = text(row, "status", "outcome", default="--")
    if status == "pending":
        measured = "pending: " + text(row, "detail", default="no evidence in this build")
    else:
        measured = text(row, "value_text", "measured", "value", default="--")
        if status == "fail" and text(row, "detail"):
            measured += f" ({text(row, 'detail')})"
    return {
        "claim": text(row, "claim_id", "id", "claim", default="--"),
        "label": shorten(text(row, "label", "check", "name", default="--"), 160),
        "expected": expectation(row),
        "measured": shorten(measured, 160),
        "status": status,
        "evidence": Path(text(row, "output", "outputs", "rule", default="--")).name,
    }


def check_rows(study: Study) -> list[dict]:
    """Every check of every claim, the claim's id on its first check only."""
    rows, previous = [], None
    for _, row in study.checks.iterrows():
        cells = check_cells(row)
        if cells["claim"] == previous:
            cells["claim"] = ""
        else:
            previous = cells["claim"]
        rows.append(cells)
    return rows


def macros(study: Study, found: Claims) -> dict[str, Tex]:
    """Verdict counts, each claim's verdict and headline, and every check that names a macro."""
    values = {"ClaimsTotal": Tex(str(len(found)))}
    for verdict in VERDICTS:
        values[f"Claims{macro_name(verdict.title())}"] = Tex(str(len(found.with_verdict(verdict))))
    for claim in found.values():
        values[f"ClaimVerdict{macro_name(claim.id)}"] = escape(claim.verdict)
        values[f"ClaimMeasured{macro_name(claim.id)}"] = measured_cell(claim)
    if "macro" in study.checks:
        for _, row in study.checks.iterrows():
            name, value = text(row, "macro"), text(row, "text", "value_text", "measured")
            if name and value:
                values[macro_name(name)] = escape(value)
    return values
