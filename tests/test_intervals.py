"""The t rule (softlookup.intervals), its calibrated degrees of freedom, and the statistics of
one cell of comparisons (evaluate.paired) on hand-made scores; the coverage the paper promises
is tests/test_coverage.py's."""

import json
import math

import numpy as np
import pytest
from scipy import stats

from softlookup import intervals
from softlookup.evaluate.compare import in_range
from softlookup.evaluate.paired import SeedScores, cell_comparisons


def test_t_critical_values_and_p_values():
    assert intervals.critical(1) == pytest.approx(12.706, abs=1e-3)
    assert intervals.critical(4) == pytest.approx(2.776, abs=1e-3)
    assert intervals.critical(math.inf) == pytest.approx(1.960, abs=1e-3)
    assert intervals.interval(1.0, 0.5, 4) == pytest.approx((1 - 1.388, 1 + 1.388), abs=1e-3)
    assert intervals.two_sided_p(1.96, 1.0, math.inf) == pytest.approx(0.05, abs=1e-4)
    assert intervals.two_sided_p(2.776, 1.0, 4) == pytest.approx(0.05, abs=1e-4)
    assert intervals.two_sided_p(0.0, 0.0, 4) == 1 and math.isnan(
        intervals.two_sided_p(1, math.nan, 4)
    )
    with pytest.raises(ValueError, match="degrees of freedom"):
        intervals.critical(0)


def test_one_sided_p_is_half_the_two_sided_on_the_claimed_side():
    assert intervals.one_sided_p(1.645, 1.0, math.inf) == pytest.approx(0.05, abs=1e-4)
    assert intervals.one_sided_p(2.132, 1.0, 4) == pytest.approx(0.05, abs=1e-3)
    assert intervals.one_sided_p(-2.132, 1.0, 4) == pytest.approx(0.95, abs=1e-3)
    assert intervals.one_sided_p(0.3, 0.0, 4) == 0 and intervals.one_sided_p(-0.3, 0.0, 4) == 1


def test_an_interval_is_cut_to_its_quantity_s_range():
    assert intervals.within((-0.99, 0.99), (0, 100)) == (0, 0.99)
    assert intervals.within((-5, 120), (0, 100)) == (0, 100)
    assert intervals.within((2, 3), (0, math.inf)) == (2, 3)


def test_calibrated_df_is_t_without_a_sentence_part_and_normal_without_a_seed_part():
    assert intervals.calibrated_df([(1.0, 1)], 0.0) == pytest.approx(1, rel=1e-3)
    assert intervals.calibrated_df([(2.0, 4)], 0.0) == pytest.approx(4, rel=1e-3)
    assert intervals.calibrated_df([], 1.0) == math.inf
    assert intervals.calibrated_df([(0.0, 1)], 1.0) == math.inf  # seeds that agree exactly


def test_calibrated_df_moves_smoothly_with_the_seed_share():
    """No cliff: the critical value grows steadily from z to t(k) as the seed share grows."""
    shares = np.linspace(0.01, 0.99, 99)
    values = [intervals.critical(intervals.calibrated_df([(s, 1)], 1 - s)) for s in shares]
    assert values[0] == pytest.approx(1.96, abs=0.05) and values[-1] < 12.71
    assert np.all(np.diff(values) > 0) and np.max(np.diff(values)) < 0.25


def calibrated_coverage(k: int, exponent: float, share: float) -> float:
    """Exact coverage (quadrature over the chi-square law of a k-df seed variance) of the
    calibrated interval when the seed part is `share` of the true variance."""
    u = (np.arange(4000) + 0.5) / 4000
    seed = share * stats.chi2.ppf(u, k) / k
    estimated_share = seed / (seed + 1 - share)
    z, t = stats.norm.ppf(0.975), stats.t.ppf(0.975, k)
    critical = z + (t - z) * estimated_share**exponent
    return float(np.mean(2 * stats.norm.cdf(critical * np.sqrt(seed + 1 - share)) - 1))


@pytest.mark.parametrize("k", [1, 2, 4, 10])
def test_the_calibration_table_is_the_exponent_that_covers_95_percent_best(k):
    """intervals.CALIBRATION[k] minimises the largest distance of the coverage from 95% over
    seed shares of 1-99% (a nearby exponent does worse), and what it reaches is stated."""
    shares = np.linspace(0.01, 0.99, 50)

    def worst(exponent):
        covered = [calibrated_coverage(k, exponent, share) for share in shares]
        return max(abs(c - 0.95) for c in covered)

    exponent = intervals.CALIBRATION[k]
    assert worst(exponent) <= min(worst(exponent - 0.05), worst(exponent + 0.05))
    assert worst(exponent) < {1: 0.021, 2: 0.0085, 4: 0.003, 10: 0.001}[k]


# ---- one cell of comparisons on hand-made scores --------------------------------------------------


def scores(observed, seeds=None, spread=0.0, draws=50, rng=None):
    """SeedScores with the given whole-set scores and draws around them (a shared sentence
    effect of SD `spread`, the same for every seed)."""
    observed = np.asarray(observed, float)
    shared = (rng or np.random.default_rng(0)).normal(0, spread, draws)
    return SeedScores(
        tuple(seeds or range(1, len(observed) + 1)), observed, observed[:, None] + shared[None, :]
    )


def test_a_paired_comparison_takes_its_seed_variance_from_its_own_per_seed_deltas():
    family = {"a": scores([10, 11]), "b": scores([12, 13.5]), "c": scores([20, 29])}
    rows = cell_comparisons(family, [("b_vs_a", "a", "b"), ("c_vs_a", "a", "c")])
    row = rows[0]
    own = np.var([2.0, 2.5], ddof=1) / 2
    assert row["seed_df"] == 1 and row["se_seed"] == pytest.approx(math.sqrt(own))
    assert row["se_sentence"] == 0 and row["df"] == pytest.approx(1, rel=1e-3)
    half = intervals.critical(row["df"]) * row["se"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((2.25 - half, 2.25 + half))
    assert json.loads(row["seed_deltas"]) == {"1": 2.0, "2": 2.5}
    assert "per-seed differences" in row["method"]
    # c's seeds disagree widely: only its own comparison widens, b's is not touched by it
    assert rows[1]["se"] > 5 * row["se"]


def test_a_system_whose_every_score_is_zero_gets_zero_as_its_interval():
    family = {"empty": scores([0.0, 0.0]), "b": scores([20, 21.4], spread=0.5)}
    (row,) = cell_comparisons(family, [("b_vs_empty", "empty", "b")])
    row = in_range(row, "bleu")
    assert (row["mean_a"], row["ci_low_a"], row["ci_high_a"]) == (0, 0, 0)
    assert row["se_a"] == 0 and row["df_a"] == math.inf
    assert 0 <= row["ci_low_b"] < row["mean_b"] < row["ci_high_b"] <= 100


def test_a_system_s_interval_uses_its_own_seeds_and_stays_in_range():
    family = {"low": scores([0.2, 1.9], spread=0.3), "b": scores([5, 5.1])}
    (row,) = cell_comparisons(family, [("b_vs_low", "low", "b")])
    row = in_range(row, "bleu")
    assert row["df_a"] < 2 and row["ci_low_a"] == 0  # t on its own 1 df reaches below 0: cut
    assert row["df_b"] == pytest.approx(1, rel=1e-3)  # b's own seeds, not a's or the pair's


def test_one_seed_has_no_seed_variance_and_a_normal_interval():
    family = {
        "a": scores([10.0], spread=0.5),
        "b": scores([11.0], spread=0.8, rng=np.random.default_rng(2)),
    }
    (row,) = cell_comparisons(family, [("b_vs_a", "a", "b")])
    assert math.isnan(row["se_seed"]) and row["seed_df"] == 0
    assert row["df"] == math.inf and row["se"] == pytest.approx(row["se_sentence"])
    assert row["se"] > 0
    assert "no seed variance" in row["method"]


def test_a_side_without_any_finite_score_leaves_its_comparison_undefined():
    # a share of a bucket whose shortest-bucket BLEU is 0 for every seed: NaN, not a crash
    family = {"a": scores([math.nan, math.nan]), "b": scores([0.81, 0.85]), "c": scores([1, 2])}
    undefined, defined = cell_comparisons(family, [("b_vs_a", "a", "b"), ("c_vs_b", "b", "c")])
    assert all(math.isnan(undefined[k]) for k in ("delta", "ci_low", "ci_high", "p_value"))
    assert defined["ci_low"] < defined["delta"] < defined["ci_high"]


def test_systems_trained_on_different_seeds_are_compared_by_welch():
    family = {"a": scores([10, 10.2], seeds=[1, 2]), "b": scores([30, 33], seeds=[3, 4])}
    (row,) = cell_comparisons(family, [("b_vs_a", "a", "b")])
    parts = [np.var([10, 10.2], ddof=1) / 2, np.var([30, 33], ddof=1) / 2]
    assert row["se_seed"] ** 2 == pytest.approx(sum(parts))
    assert row["seed_df"] == 2 and json.loads(row["seed_deltas"]) == {}
    assert 1 <= row["df"] <= 2 and "Welch" in row["method"]


def test_a_nudge_of_one_seed_moves_every_interval_a_little():
    """No cliff: 0.1 BLEU more on one seed of one variant (seed SDs about 1, as in the default
    study) changes no interval's width by more than a few percent."""
    rng = np.random.default_rng(3)
    family = {
        name: scores(rng.normal(mean, 1.0, 3), spread=0.6, rng=rng)
        for name, mean in (("a", 30), ("b", 31), ("c", 28), ("d", 0.5))
    }
    pairs = [("b_vs_a", "a", "b"), ("c_vs_a", "a", "c"), ("d_vs_b", "b", "d")]
    before = cell_comparisons(family, pairs)
    observed = family["a"].observed.copy()
    observed[0] += 0.1
    family["a"] = SeedScores(family["a"].seeds, observed, family["a"].drawn + [[0.1], [0], [0]])
    after = cell_comparisons(family, pairs)

    def width(row, side):
        return intervals.critical(row[f"df{side}"]) * row[f"se{side}"]

    for old, new in zip(before, after, strict=True):
        for side in ("", "_a", "_b"):
            assert width(new, side) == pytest.approx(width(old, side), rel=0.08), (
                old["comparison"],
                side,
            )
