"""Student-t intervals and p-values for an estimate whose standard error has finite degrees of
freedom: the one rule every interval, p-value and threshold test of the project reads.

An estimate `value` with standard error `se` estimated on `df` degrees of freedom has the 95%
interval value +- t(0.975, df) se and the two-sided p-value 2 P(T_df > |value| / se). `df` may be
`math.inf` (a standard error known, or estimated from so many draws that t is the normal): then
these are the normal rules. A standard error built from several independent variance components,
each with its own degrees of freedom, gets the Welch-Satterthwaite degrees of freedom
(`satterthwaite`).
"""

from __future__ import annotations

import math

from scipy import stats

LEVEL = 0.95


def critical(df: float, level: float = LEVEL) -> float:
    """t(1 - (1 - level) / 2, df): 12.71 at df 1, 2.78 at 4, 1.96 at infinity (95%)."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    quantile = (1 + level) / 2
    return float(stats.norm.ppf(quantile) if math.isinf(df) else stats.t.ppf(quantile, df))


def interval(value: float, se: float, df: float, level: float = LEVEL) -> tuple[float, float]:
    """(low, high) = value -+ critical(df) se."""
    half = critical(df, level) * se
    return value - half, value + half


def doubled_tail(ratio: float, df: float) -> float:
    """2 P(T_df > ratio), at most 1 (ratio may be negative: then more than 1 before the cap)."""
    tail = stats.norm.sf(ratio) if math.isinf(df) else stats.t.sf(ratio, df)
    return float(min(1.0, 2 * tail))


def two_sided_p(value: float, se: float, df: float) -> float:
    """2 P(T_df > |value| / se); NaN without a finite value and se; se 0: 1 for an exact 0, else 0."""
    if not (math.isfinite(value) and math.isfinite(se)):
        return math.nan
    if se == 0:
        return 1.0 if value == 0 else 0.0
    return doubled_tail(abs(value) / se, df)


def satterthwaite(components: list[tuple[float, float]]) -> float:
    """Welch-Satterthwaite degrees of freedom of a sum of variances [(variance, df), ...]:
    (sum v)^2 / sum(v^2 / df). A component with df inf adds no uncertainty about the variance;
    all-zero variances give inf."""
    total = sum(variance for variance, _ in components)
    denominator = sum(variance**2 / df for variance, df in components if not math.isinf(df))
    if total == 0 or denominator == 0:
        return math.inf
    return total**2 / denominator
