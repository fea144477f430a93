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
SHOWN_IN_FULL = 4  # claims with more decisive checks get a summary line


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


def measured_summary(outcomes: list[Outcome]) -> str:
    """Every measured number for short claims; a count and the largest deviation for long ones."""
    decisive = [o for o in outcomes if o.status != "report"]
    reported = [o.measured for o in outcomes if o.status == "report"]
    if len(decisive) <= SHOWN_IN_FULL:
        return "; ".join([o.measured for o in decisive] + reported)
    passed = sum(o.status == "pass" for o in decisive)
    deviations = [o.deviation for o in decisive if o.deviation is not None]
    parts = [f"{passed}/{len(decisive)} figures agree"]
    if deviations:
        parts.append(f"largest deviation {max(deviations):.2g}")
    parts += [o.measured for o in decisive if o.status != "pass"]
    return "; ".join(parts + reported)


def measured_full(outcomes: list[Outcome]) -> str:
    return "; ".join(o.measured for o in outcomes)
