"""Paired-comparison checks: rows of results/tables/comparisons.csv for a named pair, or a family
of them (a name with {x}), judged as compare.py summarises them.

An estimate (the difference B - A, or one system's own mean: `side`) has a standard error over
the draws of seeds and sentences, with `df` degrees of freedom: the row's `df` column for a
difference, `df_a`/`df_b` for one system's mean (its own seeds'), else infinity (the normal
rule). Its interval is the row's (the one every table prints: `ci_low`/`ci_high`, or a side's
`ci_low_a`...); p-values come from softlookup.intervals, in the form the check's claim has:
- above/below t: one-sided, P(T > (estimate - t) / se) (below: t - estimate);
- non-inferior by M: one-sided, P(T > (estimate + M) / se);
- equivalent within M: two one-sided tests, max(P(T > (estimate + M) / se),
  P(T > (M - estimate) / se));
- report: two-sided, of no difference (shown, never judged or adjusted).
Each outcome carries the tests it read (`Test`): the ledger adjusts a claim's decisive ones
together (claims.multiplicity, Holm) and judges on the adjusted p-values (`decide`): a check
passes when its adjusted p < 0.05. It fails only when the evidence contradicts the claim: the
whole 95% interval lies on the other side of the threshold (outside the margin). Anything between
is inconclusive, with, for an equivalence or non-inferiority check, its power at the design's
seeds (the chance to pass were the true difference 0, at this standard error). A check with a
`floor` is inconclusive when either system of its comparison scores below the floor on the
floor's metric and bucket: a model that does not work cannot show the effect.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import replace

import numpy as np
import pandas as pd
from scipy import special, stats

from ... import intervals
from ...data.buckets import ALL, bucket_order
from ...tables import COMPARISON_COLUMNS
from ..spec import ClaimsFileError, ComparisonCheck
from .common import ALPHA, REASONS, Evidence, Outcome, Test, pending


def buckets(rows: pd.DataFrame) -> list[str]:
    """The length buckets present (not 'all'), shortest first."""
    return [b for b in bucket_order(rows.bucket.unique()) if b not in ("", ALL)]


def family(pattern: str) -> re.Pattern | None:
    """'d3_scaled_vs_unscaled_dk{x}' -> a regex with a numeric group x; None for a plain name."""
    if "{x}" not in pattern:
        return None
    head, tail = pattern.split("{x}", 1)
    return re.compile(f"^{re.escape(head)}(?P<x>\\d+(?:\\.\\d+)?){re.escape(tail)}$")


def comparison_rows(check, evidence: Evidence, metric: str | None):
    """(rows of comparisons.csv for the check's name or family, output, (reason, facts) if none)."""
    frame, why = evidence.table(evidence.comparisons_path, "comparisons table")
    output = str(evidence.comparisons_path or "results/tables/comparisons.csv")
    if frame is None:
        return None, output, why
    absent = sorted(set(COMPARISON_COLUMNS) - set(frame.columns))
    if absent:
        raise ValueError(f"{output}: the comparisons table lacks columns {absent}")
    pattern = family(check.comparison)
    names = frame.comparison.astype(str)
    rows = frame[names.str.match(pattern) if pattern else names == check.comparison]
    if metric is not None:
        rows = rows[rows.metric == metric]
    if getattr(check, "test_set", None):
        rows = rows[rows.test_set == check.test_set]
    if rows.empty:
        return (
            None,
            output,
            (
                "not_run",
                {
                    "comparison": check.comparison,
                    "metric": metric,
                    "test_set": getattr(check, "test_set", None),
                },
            ),
        )
    if pattern:
        rows = rows.assign(x=[float(pattern.match(n).group("x")) for n in rows.comparison])
    return rows, output, ()


def one_bucket(rows: pd.DataFrame, bucket: str) -> pd.DataFrame | dict:
    """The rows of a bucket (shortest / longest: among those present), or the facts of none."""
    if bucket in ("shortest", "longest"):
        labels = buckets(rows)
        if not labels:
            return {"bucket": bucket, "buckets": []}
        bucket = labels[0] if bucket == "shortest" else labels[-1]
    picked = rows[rows.bucket == bucket]
    if picked.empty:
        return {"bucket": bucket, "buckets": list(rows.bucket.unique())}
    return picked


def degrees(row: pd.Series, side: str | None = None) -> float:
    """The degrees of freedom of the difference (`df`) or of a side's mean (`df_a`, `df_b`);
    inf (normal) where the row has none."""
    df = pd.to_numeric(row.get(f"df_{side}" if side else "df", math.nan), errors="coerce")
    return float(df) if np.isfinite(df) and df > 0 else math.inf


def estimate(row: pd.Series, side: str | None) -> tuple[float, float]:
    """(estimate, standard error): the difference B - A, or system `side`'s own mean."""
    if side is None:
        return float(row.delta), float(row.se)
    return float(row[f"mean_{side}"]), float(row[f"se_{side}"])


def row_interval(row: pd.Series, side: str | None) -> tuple[float, float]:
    """The row's 95% interval of the difference, or of a side's mean (comparisons.csv's own)."""
    suffix = f"_{side}" if side else ""
    return float(row[f"ci_low{suffix}"]), float(row[f"ci_high{suffix}"])


def null(check: ComparisonCheck) -> tuple[str, float]:
    """The check's null hypothesis: (kind, threshold); a report tests 'no difference'."""
    if check.op in ("equivalent", "non_inferior"):
        return check.op, float(check.margin)
    if check.op == "report":
        return "point", 0.0
    return check.op, float(check.expected or 0.0)


def null_p(hypothesis: tuple[str, float], value: float, se: float, df: float = math.inf) -> float:
    """The null's p-value in the form of its claim (module docstring); NaN without a standard
    error."""
    kind, threshold = hypothesis
    if kind == "point":
        return intervals.two_sided_p(value - threshold, se, df)
    clearances = {
        "above": [value - threshold],
        "below": [threshold - value],
        "non_inferior": [value + threshold],
        "equivalent": [value + threshold, threshold - value],
    }[kind]
    return max(intervals.one_sided_p(clearance, se, df) for clearance in clearances)


def contradicted(check: ComparisonCheck, low: float, high: float) -> bool:
    """Whether the whole 95% interval lies where the claim says the estimate is not: on the
    other side of the threshold, or (equivalence, non-inferiority) beyond the margin."""
    if check.op == "above":
        return high < check.expected
    if check.op == "below":
        return low > check.expected
    if check.op == "non_inferior":
        return high < -check.margin
    if check.op == "equivalent":
        return high < -check.margin or low > check.margin
    return False


def power(check: ComparisonCheck, se: float, df: float) -> float | None:
    """An equivalence or non-inferiority check's chance to pass at this standard error were the
    true difference 0 (one-sided 5% tests, before the claim's adjustment); None for others."""
    if check.op not in ("equivalent", "non_inferior") or not math.isfinite(se):
        return None
    if se == 0:
        return 1.0
    reach = check.margin / se - intervals.critical(df, 1 - 2 * ALPHA)  # t(0.95, df)
    if check.op == "non_inferior":
        return 1 - intervals.upper_tail(reach, df)
    return max(0.0, 1 - 2 * intervals.upper_tail(reach, df))


def decide(
    check: ComparisonCheck, p_raw: float, p_adjusted: float, interval: tuple[float, float]
) -> tuple[str, str]:
    """(status, reason) of a paired check from its raw and Holm-adjusted p-values and its 95%
    interval (module docstring)."""
    if check.op == "report":
        return "report", "reported"
    margin = check.op in ("equivalent", "non_inferior")
    if p_adjusted < ALPHA:
        return "pass", "inside_margin" if margin else "beyond_threshold"
    if contradicted(check, *interval):
        return "fail", "equivalence_failed" if margin else "wrong_side"
    if p_raw < ALPHA:
        return "inconclusive", "adjusted_straddles"
    return "inconclusive", "margin_undecided" if margin else "interval_straddles"


RERUN_DRAWS = 200  # equal-probability draws of a rerun's seed variance (repeat_chance)
# the reasons `decide` gives: their status follows from the test's p-values and interval alone
DECIDED = ("beyond_threshold", "inside_margin", "wrong_side", "equivalence_failed",
           "interval_straddles", "margin_undecided", "adjusted_straddles")  # fmt: skip


def repeat_chance(
    reason: str,
    p_value: float,
    p_adjusted: float,
    df: float,
    se: float,
    se_seed: float | None = None,
    seed_df: float | None = None,
) -> float | None:
    """The chance that a rerun gives a paired check the status `decide` gave it, were the true
    difference on these test sentences the one measured. A rerun (another processor: other last
    digits) draws the seed part anew and keeps the sentences: its estimate moves about this one
    with sd se_seed, its seed variance is se_seed^2 chi^2_k / k (k = seed_df), the sentence part
    sqrt(se^2 - se_seed^2) stays; it is then judged as decide() judges, on its own calibrated
    df, with the claim's Holm factor p_adjusted / p_value: it passes when its one-sided p times
    the factor is below ALPHA, fails when its whole 95% interval lies on the wrong side. Where the
    seed part is not known (one system's mean, a slope) the whole se is taken for it, on df
    (the chance then errs low). 1 for an estimate with no variance (se 0: a rerun gives the same
    numbers); None for a status the test does not decide alone (a floor), without the numbers,
    or with no seed variance at all (one seed: how a rerun moves is not known)."""
    numbers = (p_value, p_adjusted, df, se)
    if reason not in DECIDED or any(n is None or math.isnan(n) for n in numbers):
        return None
    if se == 0:
        return 1.0
    known = se_seed is not None and se_seed > 0 and seed_df is not None and seed_df > 0
    seed, k = (se_seed, seed_df) if known else (se, df)
    if math.isinf(k):
        return None
    clearance = se * intervals.upper_quantile(p_value, df)  # beyond the null, the claim's way
    sentence = max(0.0, se**2 - seed**2)
    factor = p_adjusted / p_value if p_value > 0 else 1.0
    passes = fails = 0.0
    for ratio in stats.chi2.ppf((np.arange(RERUN_DRAWS) + 0.5) / RERUN_DRAWS, k) / k:
        seed_variance = seed**2 * ratio
        se_rerun = math.sqrt(seed_variance + sentence)
        df_rerun = intervals.calibrated_df([(seed_variance, k)], sentence)
        bar = intervals.upper_quantile(ALPHA / factor, df_rerun) * se_rerun
        passes += special.ndtr((clearance - bar) / seed)
        fails += special.ndtr((-intervals.critical(df_rerun) * se_rerun - clearance) / seed)
    passes, fails = passes / RERUN_DRAWS, fails / RERUN_DRAWS
    return float({"pass": passes, "fail": fails}.get(REASONS[reason], 1 - passes - fails))


def row_test(check: ComparisonCheck, row: pd.Series) -> Test:
    """The check's null hypothesis on one row, its p-value and degrees of freedom."""
    value, se = estimate(row, check.side)
    df = degrees(row, check.side)
    hypothesis = null(check)
    key = (row.comparison, row.test_set, row.bucket, row.metric, check.side or "b-a", *hypothesis)
    return Test(key, null_p(hypothesis, value, se, df), df)


def row_facts(row: pd.Series) -> dict:
    """What a sentence about a comparison row needs: its systems, set, bucket, means, seeds."""
    cell = row.seed_deltas if isinstance(row.seed_deltas, str) else ""
    return {
        "comparison": row.comparison,
        "metric": row.metric,
        "test_set": row.test_set,
        "bucket": row.bucket,
        "system_a": row.system_a,
        "system_b": row.system_b,
        "mean_a": float(row.mean_a),
        "mean_b": float(row.mean_b),
        "delta": float(row.delta),
        "seeds": int(float(row.seeds)) if str(row.seeds).strip() else None,
        "seed_deltas": json.loads(cell or "{}"),
        "n_sentences": int(float(row.n_sentences)),
    }


def seed_part(row: pd.Series) -> dict:
    """A difference's seed standard error and its df (None where it has none: one seed)."""
    found = {name: pd.to_numeric(row.get(name), errors="coerce") for name in ("se_seed", "seed_df")}
    return {name: float(v) if np.isfinite(v) else None for name, v in found.items()}


def judged(
    check: ComparisonCheck,
    value: float,
    se: float,
    interval: tuple[float, float],
    test: Test,
    output: str,
    facts: dict,
    also_read: tuple[Test, ...] = (),
) -> Outcome:
    """An estimate with its standard error and 95% interval judged by the p-value of `test`, its
    null (before the claim's family adjusts it). A report tests nothing: it is shown."""
    status, reason = decide(check, test.p_value, test.p_value, interval)
    shown = check.op == "report"
    found = power(check, se, test.df)
    return Outcome(
        status,
        reason,
        output,
        value=value,
        ci_low=interval[0],
        ci_high=interval[1],
        df=test.df,
        se=se,
        facts={**facts, **({"power": found} if found is not None else {})},
        judged=None if shown else test,
        tests=() if shown else (test, *also_read),
    )


def evaluate_comparison(check: ComparisonCheck, evidence: Evidence) -> Outcome:
    rows, output, why = comparison_rows(check, evidence, check.metric)
    if rows is None:
        return pending(why[0], output, **why[1])
    picked = one_bucket(rows, check.bucket)
    if isinstance(picked, dict):
        return pending("missing_rows", output, comparison=check.comparison, **picked)
    if check.statistic == "delta":
        if len(picked) > 1:
            raise ClaimsFileError(
                f"check {check.label!r}: {len(picked)} rows of {output} match"
                f" {check.comparison}/{check.bucket}; name its test_set"
            )
        outcome = interval_test(check, picked.iloc[0], output)
    else:
        outcome = family_statistic(check, picked, output)
    return at_floor(check, outcome, evidence) if check.floor else outcome


def interval_test(
    check: ComparisonCheck, row: pd.Series, output: str, also_read: tuple[Test, ...] = (), **facts
) -> Outcome:
    """A paired difference (or one side's mean) judged by its interval."""
    value, se = estimate(row, check.side)
    facts = {**row_facts(row), "side": check.side, **facts}
    if check.side is None:  # the difference's seed part (repeat_chance); a side's is not kept
        facts.update(seed_part(row))
    interval = row_interval(row, check.side)
    return judged(check, value, se, interval, row_test(check, row), output, facts, also_read)


def doubling_slope(picked: pd.DataFrame) -> tuple[float, float, float]:
    """The least-squares slope of delta against log2 x, its standard error and their degrees of
    freedom.

    The slope is a weighted sum of the deltas, w_i = (u_i - mean u) / sum (u_j - mean u)^2 with
    u = log2 x, so its variance is sum w_i^2 se_i^2 when the deltas are independent. Their seed
    parts are (each x has its own runs); their sentence parts share the test sentences, but a
    part common to every delta cancels in a sum whose weights add up to zero, so for it the
    independent form errs wide. Its degrees of freedom: calibrated (intervals.calibrated_df), each
    member's seed part on its own df, the sentence parts known.
    """
    u = np.log2(picked.x.to_numpy(float))
    u = u - u.mean()
    weights = u / (u @ u)
    squared = weights**2
    seed = np.nan_to_num(pd.to_numeric(picked.se_seed, errors="coerce").to_numpy(float) ** 2)
    seed_df = pd.to_numeric(picked.seed_df, errors="coerce").fillna(0).to_numpy(float)
    total = squared * picked.se.to_numpy(float) ** 2
    components = [
        (part, int(df)) for part, df in zip(squared * seed, seed_df, strict=True) if df > 0
    ]
    known = float(total.sum() - sum(part for part, _ in components))
    df = intervals.calibrated_df(components, max(0.0, known))
    return float(weights @ picked.delta.to_numpy(float)), float(np.sqrt(total.sum())), df


def family_statistic(check: ComparisonCheck, picked: pd.DataFrame, output: str) -> Outcome:
    """A family of comparisons against x (d_k, heads): slope of delta against log2 x, its largest
    delta, or the delta at the largest x."""
    picked = picked.sort_values("x")
    points = [
        [float(r.x), float(r.delta), float(r.ci_low), float(r.ci_high)] for r in picked.itertuples()
    ]
    named = {"comparison": check.comparison, "statistic": check.statistic, "points": points}
    if picked.x.nunique() < check.min_points:
        return pending("too_few_points", output, needed=check.min_points, **named)
    if check.statistic == "slope":
        slope, se, df = doubling_slope(picked)
        first = picked.iloc[0]
        hypothesis = null(check)
        test = Test(
            (check.comparison, first.test_set, first.bucket, first.metric, "slope", *hypothesis),
            null_p(hypothesis, slope, se, df),
            df,
        )
        facts = {
            **named,
            "metric": first.metric,
            "test_set": first.test_set,
            "bucket": first.bucket,
        }
        interval = intervals.interval(slope, se, df) if math.isfinite(se) else (math.nan,) * 2
        return judged(check, slope, se, interval, test, output, facts)
    row = picked.loc[picked.delta.idxmax()] if check.statistic == "max" else picked.iloc[-1]
    members = tuple(row_test(check, member) for _, member in picked.iterrows())
    searched = members if check.statistic == "max" else ()  # the largest of several: all count
    return interval_test(
        check, row, output, searched, statistic=check.statistic, points=points, x=float(row.x)
    )


def at_floor(check: ComparisonCheck, outcome: Outcome, evidence: Evidence) -> Outcome:
    """Inconclusive (`floor`) when a system of the comparison scores below the check's floor
    ({metric, bucket, below}) on the same test set; the measurement is kept. Without the floor's
    rows the check stays pending (missing_rows)."""
    if outcome.status not in ("pass", "fail", "inconclusive"):
        return outcome
    floor = check.floor
    rows, output, why = comparison_rows(check, evidence, floor["metric"])
    if rows is not None:
        test_set = outcome.facts.get("test_set")
        rows = rows[rows.test_set == test_set] if test_set else rows
        rows = one_bucket(rows, floor["bucket"])
    if rows is None or isinstance(rows, dict) or rows.empty:
        return replace(
            outcome,
            status="pending",
            reason="missing_rows",
            facts={**outcome.facts, "floor": dict(floor)},
        )
    scores = {}
    for row in rows.itertuples():
        scores.update({row.system_a: float(row.mean_a), row.system_b: float(row.mean_b)})
    low = {system: score for system, score in scores.items() if score < floor["below"]}
    if not low:
        return outcome
    facts = {
        **outcome.facts,
        "floor": {**floor, "bucket_label": rows.bucket.iloc[0]},
        "below_floor": low,
    }
    return replace(outcome, status="inconclusive", reason="floor", facts=facts)
