"""Several paired tests behind one claim: Holm's adjustment within the claim's family.

A claim's family is every null hypothesis its decisive paired-comparison checks read
(checks.Test): the difference (or one system's mean) each one judges, and every member of a
family a check searches for its largest difference (statistic max); a check shown for context
(`report`) tests nothing and does not enlarge the family. Holm's step-down method (Holm 1979) adjusts their p-values together:
the i-th smallest of m is multiplied by m - i + 1, and adjusted values never decrease in that
order. A decisive check passes when its adjusted p-value (one-sided where the claim is) is below
checks.ALPHA; one whose raw p-value clears ALPHA but whose adjusted one does not is inconclusive
(adjusted_straddles).

Holm controls the chance of any false "difference shown" within the claim at 5% whatever the
dependence between the tests; the tests of one claim share test sentences and often a baseline
system, so they are positively dependent and the control is conservative. Each p-value uses its
comparison row's degrees of freedom (checks.comparison).
"""

from __future__ import annotations

import math
from dataclasses import replace

from .checks import Outcome, decide
from .spec import Check


def holm(p_values: dict) -> dict:
    """key -> p-value, to key -> Holm-adjusted p-value (a NaN p stays NaN, ranked as 1)."""
    ranked = sorted(p_values, key=lambda key: _or_one(p_values[key]))
    adjusted, running = {}, 0.0
    for rank, key in enumerate(ranked):
        running = max(running, min(1.0, (len(ranked) - rank) * _or_one(p_values[key])))
        adjusted[key] = running if math.isfinite(p_values[key]) else math.nan
    return adjusted


def _or_one(p_value: float) -> float:
    return p_value if math.isfinite(p_value) else 1.0


def adjust(checks: list[Check], outcomes: list[Outcome]) -> list[Outcome]:
    """The claim's outcomes, each paired one judged on its Holm-adjusted p-value (a check
    already inconclusive at its floor keeps that status)."""
    family = {test.key: test.p_value for outcome in outcomes for test in outcome.tests}
    adjusted = holm(family)
    judged = []
    for check, outcome in zip(checks, outcomes, strict=True):
        if outcome.judged is None:
            judged.append(outcome)
            continue
        p_adjusted = adjusted[outcome.judged.key]
        outcome = replace(outcome, p_adjusted=p_adjusted, family_size=len(family))
        if outcome.status in ("pass", "fail", "inconclusive") and outcome.reason != "floor":
            interval = (outcome.ci_low, outcome.ci_high)
            status, reason = decide(check, outcome.judged.p_value, p_adjusted, interval)
            outcome = replace(outcome, status=status, reason=reason)
        judged.append(outcome)
    return judged
