"""From a claim's check outcomes to one verdict and a reason code.

Only decisive checks count (a `report` check is shown, never judged). In this order:
1. every decisive check pending -> pending (reason: the first check's pending code);
2. a decisive check fails and another passes -> partly (reason: the first failure's code);
3. a decisive check fails and none passes -> not reproduced (the first failure's code);
4. none fails, one is inconclusive -> inconclusive (the first inconclusive check's code:
   interval_straddles, adjusted_straddles or floor), whatever passes or is pending beside it:
   the measured evidence cannot decide the claim, and nothing contradicts it;
5. none fails or is inconclusive, one is pending -> pending (what was measured agrees; the
   first pending check's code);
6. every decisive check passes -> reproduced (reason all_pass).
So a failure always lowers the verdict to at most partly, an inconclusive check keeps a claim
from being reproduced, and a pending check never counts as a pass or a failure.
"""

from __future__ import annotations

from .checks import Outcome

VERDICTS = ("reproduced", "partly", "not reproduced", "inconclusive", "pending")
ALL_PASS = "all_pass"  # the reason of a reproduced claim


def verdict(outcomes: list[Outcome]) -> tuple[str, str]:
    """(verdict, reason code) by the rule of the module docstring."""
    decisive = [o for o in outcomes if o.status != "report"]
    by_status = {
        status: [o for o in decisive if o.status == status]
        for status in ("pass", "fail", "inconclusive", "pending")
    }
    if len(by_status["pending"]) == len(decisive):
        return "pending", by_status["pending"][0].reason
    if by_status["fail"]:
        return ("partly" if by_status["pass"] else "not reproduced"), by_status["fail"][0].reason
    if by_status["inconclusive"]:
        return "inconclusive", by_status["inconclusive"][0].reason
    if by_status["pending"]:
        return "pending", by_status["pending"][0].reason
    return "reproduced", ALL_PASS


def counts(outcomes: list[Outcome]) -> dict[str, int]:
    """The number of decisive checks, and of those that pass, fail, are inconclusive, pending."""
    decisive = [o for o in outcomes if o.status != "report"]
    found = {"checks_decisive": len(decisive)}
    for status, column in (
        ("pass", "checks_passed"),
        ("fail", "checks_failed"),
        ("inconclusive", "checks_inconclusive"),
        ("pending", "checks_pending"),
    ):
        found[column] = sum(o.status == status for o in decisive)
    return found


def largest_deviation(outcomes: list[Outcome]) -> float | None:
    """The largest deviation of a claim's approx figures (None: it has none)."""
    deviations = [o.deviation for o in outcomes if o.status != "report" and o.deviation is not None]
    return max(deviations) if deviations else None


def headline(checks: list) -> int | None:
    """The index of the claim's headline check: the one marked `headline`, or the only decisive
    one; None when the claim is summed up by its counts instead."""
    marked = [i for i, check in enumerate(checks) if check.headline]
    decisive = [i for i, check in enumerate(checks) if check.decisive]
    return marked[0] if marked else (decisive[0] if len(decisive) == 1 else None)
