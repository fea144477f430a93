"""From a claim's check outcomes to one verdict and its reason.

- every decisive check pending -> pending;
- none failed, some pending -> pending (what was measured agrees; the rest is named);
- all passed -> reproduced;
- some passed, some failed -> partly;
- none passed, some failed -> not reproduced.
"""

from __future__ import annotations

from .checks import Outcome

VERDICTS = ("reproduced", "partly", "not reproduced", "pending")


def verdict(outcomes: list[Outcome]) -> tuple[str, str]:
    decisive = [o for o in outcomes if o.status != "report"]
    passed = [o for o in decisive if o.status == "pass"]
    failed = [o for o in decisive if o.status == "fail"]
    waiting = [o for o in decisive if o.status == "pending"]
    count = f"{len(passed)} of {len(decisive)} checks pass"
    pending_reasons = "; ".join(dict.fromkeys(o.detail for o in waiting))
    if not passed and not failed:
        return "pending", f"nothing measured yet: {pending_reasons}"
    if not failed and waiting:
        return "pending", f"{count}, none fails; still pending: {pending_reasons}"
    if not failed:
        return "reproduced", f"{count}"
    failures = "; ".join(f"{o.measured} ({o.detail})" for o in failed)
    if passed:
        reason = f"{count}; fails: {failures}"
        return "partly", reason + (f"; pending: {pending_reasons}" if waiting else "")
    return "not reproduced", f"{count}; fails: {failures}"


def count_summary(outcomes: list[Outcome]) -> str:
    """'25/25 figures agree, largest deviation 0.00045' (figures: approx checks), or
    '3/4 checks pass, 1 pending'."""
    decisive = [o for o in outcomes if o.status != "report"]
    passed = sum(o.status == "pass" for o in decisive)
    waiting = sum(o.status == "pending" for o in decisive)
    deviations = [o.deviation for o in decisive if o.deviation is not None]
    noun = "figures agree" if len(deviations) == len(decisive) else "checks pass"
    text = f"{passed}/{len(decisive)} {noun}"
    if deviations:
        text += f", largest deviation {max(deviations):.2g}"
    return text + (f", {waiting} pending" if waiting else "")


def measured_full(outcomes: list[Outcome]) -> str:
    return "; ".join(o.measured for o in outcomes)


def headline(checks: list, outcomes: list[Outcome]) -> tuple[str, Outcome | None]:
    """The claim's headline: the check marked `headline` (or the only decisive one) as
    "label = value" (its interval, if any, is in the outcome); otherwise a count of agreeing
    figures and the largest deviation.
    Returns the text and the headline outcome (None for a summary)."""
    marked = [i for i, check in enumerate(checks) if check.headline]
    decisive = [i for i, check in enumerate(checks) if check.decisive]
    chosen = marked[0] if marked else (decisive[0] if len(decisive) == 1 else None)
    if chosen is None:
        return count_summary(outcomes), None
    check, outcome = checks[chosen], outcomes[chosen]
    if outcome.value is None or outcome.status == "pending":
        return f"{check.label}: pending", outcome
    return f"{check.label} = {format(outcome.value, check.fmt)}", outcome
