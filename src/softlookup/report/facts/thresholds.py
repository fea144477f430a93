"""Facts of the thresholds appendix: when each threshold of the claims took its value, and how
each one set after its claim's first results would read a fifth lower and a fifth higher.

The history is config/threshold_history.csv (reference.thresholds, from git; committed, so that a
clone without history builds the paper too); the checks and their measurements are this build's
(results/claims/checks.csv). A moved threshold is re-read from the check's measured number and
its 95% interval as the ledger reads one test: a paired comparison by its one-sided test (two for
an equivalence) at the moved threshold, failing only when the whole interval lies on the wrong
side (beyond the margin); any other interval (or, without one, the number) wholly on the claimed
side passes, wholly on the other side fails, one that holds the bar is inconclusive; an approx
figure passes within its tolerance; a floor leaves the check inconclusive when a system of its
comparison scores below it. The ledger itself also adjusts a claim's tests for their number
(Holm), so a re-reading at the threshold as set can differ from its verdict: `adjusted` says so.
"""

from __future__ import annotations

from types import SimpleNamespace

import pandas as pd

from ...claims.checks.common import judge_number
from ...claims.checks.comparison import decide, null, null_p, one_bucket
from ...claims.spec import load_claims
from ...paths import CLAIMS_FILE
from ..study import Study
from . import claims, tables

FACTOR = 0.2  # a threshold moved by a fifth either way
KEYS = {  # a threshold's kind as the appendix words it
    "bar": "bar",
    "margin": "margin",
    "floor": "floor",
    "tolerance": "tolerance",
    "rel_tolerance": "relative tolerance",
}


def reread(check: claims.Check, key: str, factor: float, floor: dict | None = None) -> str:
    """The check's status with its threshold `key` times `factor` (module docstring); `floor`:
    the check's floor, if it has one, with `scores`, its systems' scores on the floor's metric and
    bucket (moved too when `key` is "floor")."""
    if check.status == "pending" or check.value is None:
        return "pending"
    if floor is not None:
        below = floor["below"] * (factor if key == "floor" else 1.0)
        if any(score < below for score in floor["scores"].values()):
            return "inconclusive"
    if key == "floor":
        key = "margin" if check.op in ("equivalent", "non_inferior") else "bar"
        factor = 1.0
    interval = None
    if check.ci_low is not None and check.ci_high is not None:
        interval = (check.ci_low, check.ci_high)
    if check.se is not None and interval is not None and key in ("bar", "margin"):
        return reread_paired(check, key, factor, interval)
    if key == "margin":
        low, high = interval or (check.value, check.value)
        margin = check.allowed * factor
        return "pass" if low > -margin and (check.op == "non_inferior" or high < margin) else "fail"
    if key in ("tolerance", "rel_tolerance"):
        moved = SimpleNamespace(
            op="approx", expected=check.expected, tolerance=check.allowed * factor
        )
        return judge_number(moved, check.value, "").status
    moved = SimpleNamespace(
        op=check.op, expected=check.expected * factor, by="interval" if interval else "value"
    )
    return judge_number(moved, check.value, "", interval).status


def reread_paired(check: claims.Check, key: str, factor: float, interval: tuple) -> str:
    """A paired comparison's status at its bar or margin times `factor`, by the ledger's own
    one-sided tests (claims.checks.comparison.null_p and decide, before Holm's adjustment)."""
    margin = check.allowed * factor if key == "margin" and check.allowed is not None else None
    expected = check.expected * factor if key == "bar" and check.expected is not None else None
    moved = SimpleNamespace(
        op=check.op,
        expected=check.expected if expected is None else expected,
        margin=check.allowed if margin is None else margin,
    )
    df = check.df if check.df is not None else float("inf")
    p_value = null_p(null(moved), check.value, check.se, df)
    return decide(moved, p_value, p_value, interval)[0]


def floor_scores(study: Study, check: claims.Check, floor: dict) -> dict[str, float]:
    """{system: score} of the check's comparison on its floor's metric and bucket (final
    models, the check's test set)."""
    table = tables.final(study.comparisons)
    name, test_set = check.facts.get("comparison"), check.facts.get("test_set")
    if table.empty or name is None or not {"comparison", "metric", "bucket"} <= set(table):
        return {}
    rows = table[(table["comparison"] == name) & (table["metric"] == floor["metric"])]
    rows = rows[rows["test_set"] == test_set] if test_set else rows
    rows = one_bucket(rows.assign(bucket=rows["bucket"].astype(str)), str(floor["bucket"]))
    if isinstance(rows, dict):
        return {}
    scores = {}
    for row in rows.itertuples():
        scores.update({row.system_a: float(row.mean_a), row.system_b: float(row.mean_b)})
    return scores


def floors() -> dict[tuple[str, int], dict]:
    """{(claim, check number): its floor} of the claims file the ledger judged."""
    found, _ = load_claims(CLAIMS_FILE)
    return {
        (claim.id, number): check.floor
        for claim in found
        for number, check in enumerate(claim.checks, start=1)
        if getattr(check, "floor", None)
    }


def readings(study: Study, row: dict, floor: dict | None) -> dict:
    """A threshold at a fifth less, as set and a fifth more: the check's status at each, and
    whether the ledger's own verdict differs from the reading as set (`adjusted`)."""
    check = row["check_row"]
    if floor:
        floor = {**floor, "scores": floor_scores(study, check, floor)}
    lower, same, higher = (
        reread(check, row["key"], factor, floor) for factor in (1 - FACTOR, 1.0, 1 + FACTOR)
    )
    return {"lower": lower, "as_set": same, "higher": higher, "adjusted": same != check.status}


def rows_of(history: pd.DataFrame, found: claims.Claims, floors_of: dict) -> list[dict]:
    """The history's rows, each with its check (`check_row`, None when this build's ledger lacks
    it), its floor (a floor row) and its days."""
    checks = {(c.id, k.check): k for c in found.values() for k in c.checks}
    rows = []
    for row in history.fillna("").to_dict("records"):
        place = (row["claim"], int(row["check"]))
        check = checks.get(place)
        rows.append(
            {
                **row,
                "value": float(row["value"]),
                "kind": KEYS[row["key"]],
                "after": row["results_then"] == "yes",
                "check_row": check,
                "checks": [] if check is None else [check],
                "floor": floors_of.get(place),
                "day": str(row["date"])[:10],
                "reference_day": str(row["reference_date"])[:10],
            }
        )
    return rows


def numbers(checks: list[claims.Check]) -> str:
    """Check numbers as runs: '1-6, 8-12'."""
    runs: list[list[int]] = []
    for number in sorted(check.check for check in checks):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return ", ".join(f"{run[0]}" if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def grouped(rows: list[dict]) -> list[dict]:
    """One table row per claim, kind, value and commit: the checks that share a threshold."""
    groups: dict[tuple, dict] = {}
    for row in rows:
        key = (row["claim"], row["key"], row["value"], row["commit"])
        group = groups.setdefault(key, {**row, "checks": []})
        group["checks"] = group["checks"] + row["checks"]
    return [{**group, "numbers": numbers(group["checks"])} for group in groups.values()]


def facts(study: Study, history: pd.DataFrame, floors_of: dict) -> dict:
    """The appendix's facts: `rows`, one per shared threshold (grouped); `moved`, every threshold
    set after results that is not zero, with its readings; the counts the prose gives."""
    rows = rows_of(history, claims.claims(study), floors_of) if len(history) else []
    moved = [
        {**row, **readings(study, row, row["floor"])}
        for row in rows
        if row["after"] and row["value"] != 0 and row["check_row"] is not None
    ]
    groups = grouped(rows)
    return {
        "rows": groups,
        "moved": moved,
        "before": sum(not group["after"] for group in groups),
        "after": sum(group["after"] for group in groups),
        "zero_after": sum(row["after"] and row["value"] == 0 for row in rows),
    }


def section(study: Study) -> dict:
    return facts(study, study.threshold_history, floors())
