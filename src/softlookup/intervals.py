"""Student-t intervals and p-values for an estimate whose standard error has finite degrees of
freedom, and the calibrated degrees of freedom of a standard error built from a seed part and a
sentence part: the one rule every interval, p-value and threshold test of the project reads.

An estimate `value` with standard error `se` on `df` degrees of freedom has the 95% interval
value +- t(0.975, df) se, the two-sided p-value 2 P(T_df > |value| / se) and, against a one-sided
null, the one-sided p-value P(T_df > clearance / se). `df` may be `math.inf` (a standard error
known): then these are the normal rules.

A variance that is a sum of estimated components (sample variances on their own degrees of
freedom: the seeds') and a known part (the test sentences', from a thousand bootstrap draws) has
no exact t. Welch-Satterthwaite's plug-in df undercovers at 2 seeds (to 87% when the seed part
dominates: a 1-df variance that happens to be small makes the df balloon), the seed part's own df
overcovers (to 100% when the sentence part dominates), and so does the generalized pivot (98%).
`calibrated_df` takes the critical value z + (t(k) - z) r^a, r the estimated seed share of the
variance and k the seed part's df, with `a` chosen for each k so that the interval covers 95% as
nearly as can be, whatever the true share (`CALIBRATION`; tests/test_intervals.py recomputes it
by quadrature over the chi-square law): within 92.9-97.1% at k = 1, 94.2-95.8% at 2, 94.7-95.3%
at 4. It moves smoothly with the data (no pre-test, no cliff), and is Student's t(k) when there
is no sentence part, the normal rule when there is no seed part.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

LEVEL = 0.95
MIN_DF = 0.2  # the smallest df df_of_critical gives (t(0.975, 0.2) is about 10^8)
# The promise of comparisons.csv's 95% intervals (evaluate/compare.py), kept by
# tests/test_coverage.py and stated by the paper's Statistics paragraph (report.facts.front): of
# `studies` simulated studies from a known truth per number of seeds in `seeds`, run through
# evaluate.paired.cell_comparisons, a share within `band` covers the true value, for every pair
# and system of every scenario, up to `simulation_se` binomial standard errors of the
# simulation's own; a variance pooled over variants of unequal seed variance (the rule these
# intervals replaced) covers less than `replaced_below`.
COVERAGE = {
    "studies": 1000,
    "seeds": (2, 3, 4, 5, 12),
    "band": (0.93, 0.97),
    "simulation_se": 2.6,
    "replaced_below": 0.90,
}


def critical(df: float, level: float = LEVEL) -> float:
    """t(1 - (1 - level) / 2, df): 12.71 at df 1, 2.78 at 4, 1.96 at infinity (95%)."""
    if not df > 0:
        raise ValueError(f"degrees of freedom must be positive, got {df}")
    quantile = (1 + level) / 2
    return float(special.ndtri(quantile) if math.isinf(df) else special.stdtrit(df, quantile))


def interval(value: float, se: float, df: float, level: float = LEVEL) -> tuple[float, float]:
    """(low, high) = value -+ critical(df) se."""
    half = critical(df, level) * se
    return value - half, value + half


def within(bounds: tuple[float, float], limits: tuple[float, float]) -> tuple[float, float]:
    """An interval cut to the range its quantity can take (a BLEU in [0, 100]): it covers the
    true value at least as often as before, as the true value lies in that range."""
    low, high = limits
    return min(max(bounds[0], low), high), max(min(bounds[1], high), low)


def upper_tail(ratio: float, df: float) -> float:
    """P(T_df > ratio)."""
    return float(special.ndtr(-ratio) if math.isinf(df) else special.stdtr(df, -ratio))


def upper_quantile(tail: float, df: float) -> float:
    """The t with P(T_df > t) = tail (upper_tail's inverse): inf at 0, -inf at 1."""
    return float(-special.ndtri(tail) if math.isinf(df) else -special.stdtrit(df, tail))


def doubled_tail(ratio: float, df: float) -> float:
    """2 P(T_df > ratio), at most 1 (ratio may be negative: then more than 1 before the cap)."""
    return min(1.0, 2 * upper_tail(ratio, df))


def two_sided_p(value: float, se: float, df: float) -> float:
    """2 P(T_df > |value| / se); NaN without a finite value and se; se 0: 1 for an exact 0, else 0."""
    if not (math.isfinite(value) and math.isfinite(se)):
        return math.nan
    if se == 0:
        return 1.0 if value == 0 else 0.0
    return doubled_tail(abs(value) / se, df)


def one_sided_p(clearance: float, se: float, df: float) -> float:
    """P(T_df > clearance / se): the p-value of a one-sided null the estimate lies `clearance`
    beyond (negative: on the null's side). NaN without finite numbers; se 0: 0 when the estimate
    clears the null, else 1."""
    if not (math.isfinite(clearance) and math.isfinite(se)):
        return math.nan
    if se == 0:
        return 0.0 if clearance > 0 else 1.0
    return upper_tail(clearance / se, df)


# k -> a: the exponent of the calibrated critical value at seed df k (module docstring); a tends
# to 2 as k grows (then t(k) - z shrinks like 1/k and the rule is Satterthwaite's to first order).
CALIBRATION = {
    1: 1.263,
    2: 1.573,
    3: 1.701,
    4: 1.770,
    5: 1.813,
    6: 1.843,
    8: 1.881,
    10: 1.905,
    15: 1.936,
    20: 1.952,
    30: 1.968,
    60: 1.984,
}
LIMIT_EXPONENT = 2.0  # beyond the table's largest k


def calibration_exponent(k: float) -> float:
    """`a` at seed df k: the table's, interpolated in log k; 2 beyond it."""
    ks = sorted(CALIBRATION)
    if k > ks[-1]:
        return LIMIT_EXPONENT
    return float(np.interp(math.log(k), np.log(ks), [CALIBRATION[key] for key in ks]))


def welch_df(components: list[tuple[float, float]]) -> float:
    """Welch-Satterthwaite df of a sum of sample variances [(v, k), ...]: (sum v)^2 / sum v^2/k."""
    total = sum(v for v, _ in components)
    return total**2 / sum(v**2 / k for v, k in components)


def calibrated_df(components: list[tuple[float, float]], known: float) -> float:
    """The degrees of freedom of a standard error sqrt(sum v_j + known) whose components
    [(v_j, k_j), ...] are sample variances on k_j degrees of freedom and `known` a known
    variance: the df whose t quantile is the calibrated critical value (module docstring). inf
    without an estimated component (or when every one is 0)."""
    estimated = [(v, k) for v, k in components if v > 0 and k > 0]
    if not estimated:
        return math.inf
    k = welch_df(estimated)
    seed = sum(v for v, _ in estimated)
    share = seed / (seed + known)
    value = critical(math.inf) + (critical(k) - critical(math.inf)) * share ** (
        calibration_exponent(k)
    )
    return df_of_critical(value)


def df_of_critical(value: float) -> float:
    """The df whose t(0.975, df) is `value`: inf at or below the normal's, at least MIN_DF."""
    if value <= critical(math.inf):
        return math.inf
    log_df, log_critical = _critical_table()
    return float(np.exp(np.interp(math.log(value), log_critical, log_df)))


@functools.cache
def _critical_table() -> tuple[np.ndarray, np.ndarray]:
    """log df from MIN_DF to 10^7 and log t(0.975, df), ascending in the latter (t's quantile
    falls with df), for df_of_critical: log-log interpolation, exact to about 10^-5."""
    log_df = np.linspace(math.log(MIN_DF), math.log(1e7), 4000)
    log_critical = np.log(special.stdtrit(np.exp(log_df), (1 + LEVEL) / 2))
    return log_df[::-1], log_critical[::-1]
