"""The t rule (softlookup.intervals) and the promise of the comparisons' 95% intervals: simulated
studies from a known truth, run through the code that writes comparisons.csv, cover the true
difference 93-97% of the time at 2, 3 and 5 seeds, where the two-level bootstrap with 1.96 that it
replaced falls short at 2 seeds."""

import json
import math

import numpy as np
import pytest

from softlookup import intervals
from softlookup.evaluate.compare import COVERAGE, draw_counts, share
from softlookup.evaluate.paired import SeedScores, cell_comparisons, seed_scores


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


def test_satterthwaite_degrees_of_freedom():
    assert intervals.satterthwaite([(1.0, 1), (1.0, 1)]) == pytest.approx(2)
    assert intervals.satterthwaite([(1.0, 4), (1.0, math.inf)]) == pytest.approx(16)
    assert intervals.satterthwaite([(2.0, 3)]) == pytest.approx(3)
    assert intervals.satterthwaite([(0.0, 3), (0.0, math.inf)]) == math.inf
    assert intervals.satterthwaite([(1.0, math.inf)]) == math.inf


# ---- the family core on hand-made scores ----------------------------------------------------------


def scores(observed, seeds=None, spread=0.0, draws=50, rng=None):
    """SeedScores with the given whole-set scores and draws around them (a shared sentence
    effect of SD `spread`, the same for every seed)."""
    observed = np.asarray(observed, float)
    shared = (rng or np.random.default_rng(0)).normal(0, spread, draws)
    return SeedScores(
        tuple(seeds or range(1, len(observed) + 1)), observed, observed[:, None] + shared[None, :]
    )


def one(scores: dict, name: str = "gru") -> dict[str, str]:
    """Every variant of `scores` in one family, `name`."""
    return dict.fromkeys(scores, name)


def test_pooled_seed_variance_has_the_family_s_degrees_of_freedom():
    family = {"a": scores([10, 11]), "b": scores([12, 13]), "c": scores([20, 21.5])}
    rows, pools = cell_comparisons(
        family, [("b_vs_a", "a", "b"), ("c_vs_a", "a", "c")], one(family)
    )
    pool = pools["gru"]
    assert pool.df == 3 and pool.variance == pytest.approx((0.5 + 0.5 + 1.125) / 3)
    row = rows[0]
    assert row["seed_df"] == 3 and row["se_seed"] == pytest.approx(math.sqrt(pool.variance))
    assert row["se_sentence"] == 0 and row["df"] == pytest.approx(3)
    half = intervals.critical(3) * row["se"]
    assert (row["ci_low"], row["ci_high"]) == pytest.approx((2 - half, 2 + half))
    assert json.loads(row["seed_deltas"]) == {"1": 2.0, "2": 2.0}
    assert "pooled over family gru (3 variants, df 3" in row["method"]


def test_unequal_seed_variances_fall_back_to_each_comparison_s_own_seeds():
    family = {
        "a": scores([10, 10.01, 9.99, 10.0, 10.02]),
        "b": scores([12, 15, 9, 14, 8]),
        "c": scores([11, 11.02, 10.98, 11.01, 11.0]),
    }
    rows, pools = cell_comparisons(
        family, [("b_vs_a", "a", "b"), ("c_vs_a", "a", "c")], one(family)
    )
    pool = pools["gru"]
    assert pool.rejected and pool.p_value < 0.05
    own = np.var(family["b"].observed - family["a"].observed, ddof=1) / 5
    assert rows[0]["se_seed"] == pytest.approx(math.sqrt(own)) and rows[0]["seed_df"] == 4
    assert "own seeds" in rows[0]["method"] and "rejected" in rows[0]["method"]
    assert rows[1]["se"] < rows[0]["se"] / 10  # c's seeds agree: its own interval stays narrow


def test_one_seed_has_no_seed_variance_and_a_normal_interval():
    family = {
        "a": scores([10.0], spread=0.5),
        "b": scores([11.0], spread=0.8, rng=np.random.default_rng(2)),
    }
    (row,), pools = cell_comparisons(family, [("b_vs_a", "a", "b")], one(family))
    assert pools["gru"].df == 0 and math.isnan(row["se_seed"]) and row["seed_df"] == 0
    assert row["df"] == math.inf and row["se"] == pytest.approx(row["se_sentence"])
    assert row["se"] > 0
    assert "no seed variance" in row["method"]


def test_a_side_without_any_finite_score_leaves_its_comparison_undefined():
    # a share of a bucket whose shortest-bucket BLEU is 0 for every seed: NaN, not a crash
    family = {"a": scores([math.nan, math.nan]), "b": scores([0.81, 0.85]), "c": scores([1, 2])}
    rows, pools = cell_comparisons(
        family, [("b_vs_a", "a", "b"), ("c_vs_b", "b", "c")], one(family)
    )
    undefined, defined = rows
    assert all(math.isnan(undefined[k]) for k in ("delta", "ci_low", "ci_high", "p_value"))
    assert pools["gru"].df == 2 and defined["ci_low"] < defined["delta"] < defined["ci_high"]


def test_a_comparison_across_families_takes_each_side_s_seed_variance_from_its_own_family():
    # the GRUs' seeds agree (pooled over three variants); the one Transformer's disagree: its
    # side keeps its own seed variance on its 1 df, not a pool of the two sides' seeds
    scores_ = {
        "gru_none": scores([10, 10.2]),
        "gru_additive": scores([20, 20.4]),
        "gru_dot": scores([18, 17.8]),
        "transformer": scores([30, 33]),
    }
    families = {**one(scores_), "transformer": "transformer"}
    pairs = [("tr_vs_none", "gru_none", "transformer"), ("add_vs_none", "gru_none", "gru_additive")]
    (across, within), pools = cell_comparisons(scores_, pairs, families)
    gru = (0.02 + 0.08 + 0.02) / 3
    assert pools["gru"].df == 3 and pools["gru"].variance == pytest.approx(gru)
    assert pools["transformer"].df == 1 and pools["transformer"].variance == pytest.approx(4.5)
    parts = [(gru / 2, 3), (4.5 / 2, 1)]  # each side's seed variance of its mean, its df
    assert across["se_seed"] ** 2 == pytest.approx(gru / 2 + 4.5 / 2)
    assert across["seed_df"] == pytest.approx(intervals.satterthwaite(parts))
    assert across["se_a"] == pytest.approx(math.sqrt(gru / 2))  # gru_none's own family
    assert "summed by Welch" in across["method"] and "transformer: pooled over" in across["method"]
    assert within["se_seed"] ** 2 == pytest.approx(gru) and within["seed_df"] == 3


# ---- coverage: simulated studies from a known truth ------------------------------------------------

MEANS = {"v0": 30.0, "v1": 31.0, "v2": 29.5, "v3": 32.0}  # the variants' true mean scores
PAIRS = [
    ("v1_vs_v0", "v0", "v1"),
    ("v2_vs_v0", "v0", "v2"),
    ("v3_vs_v0", "v0", "v3"),
    ("v3_vs_v1", "v1", "v3"),
]
SENTENCES = 60
# Sentence-level noise of Multi30k's 1,000-sentence test set, scaled to SENTENCES so that each
# variance component has the share it has there: per-sentence SDs of sentence difficulty (shared
# by every system), a system's own per-sentence effect, and a run's own (seed-by-sentence) noise;
# then the seed SD of a run's whole-set score. Whole-set scale: a run's score moves by
# sqrt(0.5^2 + 15^2 / 1000) = 0.69 BLEU from seed to seed, the paired sentence se is ~0.45.
SCALE = math.sqrt(SENTENCES / 1000)
DIFFICULTY, SYSTEM, RUN, SEED_SD = 20 * SCALE, 10 * SCALE, 5 * SCALE, 0.7
STUDIES, DRAWS = COVERAGE["studies"], 100


def simulated_family(rng, seeds: int, counts) -> dict[str, SeedScores]:
    """One study: every variant's runs scored per sentence (a mean of sentence scores, as the
    sufficient statistics (score, 1)), through the scoring path of compare."""
    difficulty = rng.normal(0, DIFFICULTY, SENTENCES)
    family = {}
    for variant, mean in MEANS.items():
        system = difficulty + rng.normal(0, SYSTEM, SENTENCES)
        runs = [
            mean + rng.normal(0, SEED_SD) + system + rng.normal(0, RUN, SENTENCES)
            for _ in range(seeds)
        ]
        stats = [np.column_stack([run, np.ones(SENTENCES)]) for run in runs]
        family[variant] = seed_scores(list(range(1, seeds + 1)), stats, counts, share)
    return family


def two_level_bootstrap(a: SeedScores, b: SeedScores, rng) -> tuple[float, float]:
    """The replaced method: each draw resamples the seeds (the same for both systems) then takes
    the sentences' draw; interval delta +- 1.96 sd of the drawn deltas."""
    picks = rng.integers(0, len(a.seeds), size=(a.drawn.shape[1], len(a.seeds)))  # (R, S)
    columns = np.arange(a.drawn.shape[1])[:, None]
    drawn = (b.drawn[picks, columns] - a.drawn[picks, columns]).mean(1)
    delta, half = b.observed.mean() - a.observed.mean(), 1.96 * drawn.std(ddof=1)
    return delta - half, delta + half


def coverage(seeds: int) -> tuple[float, float]:
    """(new method's, old method's) share of intervals covering the true delta (the old method
    at 2 seeds only, where it must fall short)."""
    rng = np.random.default_rng(seeds)
    covered = np.zeros(2)
    for _ in range(STUDIES):
        family = simulated_family(rng, seeds, draw_counts(SENTENCES, DRAWS, int(rng.integers(1e9))))
        rows, _ = cell_comparisons(family, PAIRS, one(family, "simulated"))
        for (_, a, b), row in zip(PAIRS, rows, strict=True):
            truth = MEANS[b] - MEANS[a]
            low, high = two_level_bootstrap(family[a], family[b], rng) if seeds == 2 else (0, 0)
            covered += [row["ci_low"] <= truth <= row["ci_high"], low <= truth <= high]
    return tuple(covered / (STUDIES * len(PAIRS)))


def test_the_coverage_the_paper_states_is_the_one_tested_here():
    """The paper's Statistics paragraph prints evaluate.compare.COVERAGE; the test below keeps it
    (pinned here, so that loosening the promise is a visible change of this test)."""
    assert COVERAGE == {
        "studies": 1000,
        "seeds": (2, 3, 5),
        "band": (0.93, 0.97),
        "replaced_below": 0.90,
    }


@pytest.mark.parametrize("seeds", COVERAGE["seeds"])
def test_the_95_percent_interval_covers_the_true_difference_95_percent_of_the_time(seeds):
    new, old = coverage(seeds)
    print(
        f"{seeds} seeds: coverage {new:.3f} (pooled seed variance, t)"
        + (f", {old:.3f} (two-level bootstrap, 1.96)" if seeds == 2 else "")
    )
    low, high = COVERAGE["band"]
    assert low <= new <= high
    if seeds == 2:
        assert old < COVERAGE["replaced_below"]
