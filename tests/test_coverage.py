"""The promise of the comparisons' 95% intervals (intervals.COVERAGE), kept: simulated
studies from a known truth (evaluate.coverage) run through the code that writes comparisons.csv,
every pair and every system of every scenario covering its true value 93-97% of the time at 2,
3, 4, 5 and 12 seeds (the workflow's coverage rule adds each seed count its study trains: the
paper prints what it measures there); and the test fails when a known fault is put back: the
own-noise subtraction left out, z for t, a variance pooled over the variants (the rule these
intervals replaced), and such a pool with its zero-variance variant in it."""

from __future__ import annotations

import math

import pytest

from softlookup import intervals
from softlookup.evaluate import coverage as simulated
from softlookup.evaluate import paired
from softlookup.intervals import COVERAGE

STUDIES = COVERAGE["studies"]
# A simulated coverage is itself a binomial estimate: it is held to the band widened by
# COVERAGE["simulation_se"] of its standard errors (sqrt(0.95 x 0.05 / 1000) = 0.0069), so that
# 100 numbers whose true coverage lies in the band all pass with 99% probability.
SLACK = COVERAGE["simulation_se"] * math.sqrt(0.95 * 0.05 / STUDIES)
LOW, HIGH = COVERAGE["band"][0] - SLACK, COVERAGE["band"][1] + SLACK


@pytest.mark.parametrize("scenario", simulated.SCENARIOS, ids=lambda s: s.name)
@pytest.mark.parametrize("n_seeds", COVERAGE["seeds"])
def test_every_interval_covers_its_truth_95_percent_of_the_time(scenario, n_seeds):
    shares = simulated.coverage(scenario, n_seeds, STUDIES)
    print(scenario.name, n_seeds, {key: round(covered, 3) for key, covered in shares.items()})
    assert all(LOW <= covered <= HIGH for covered in shares.values()), shares


def test_a_variant_with_no_variance_gets_its_one_value_as_interval():
    rows = simulated.run_studies(simulated.SCENARIOS[0], 2, studies=20)["mean: none"]
    assert (rows == 0).all()


def first_out_of_band() -> str | None:
    """The first pair or system, over the seeds and scenarios, whose coverage leaves the band."""
    for n_seeds in COVERAGE["seeds"]:
        for scenario in simulated.SCENARIOS:
            for key, covered in simulated.coverage(scenario, n_seeds, STUDIES).items():
                if not LOW <= covered <= HIGH:
                    return f"{scenario.name}, {n_seeds} seeds, {key}: {covered:.3f}"
    return None


def pooled_seed_components(with_zero_variance: bool):
    """The rule these intervals replaced: every variant's seed variance pooled (a pair's seed
    part pooled sigma^2 (1/n_a + 1/n_b) on the pool's df), the variants of no variance left in
    the pool or not. Returns the cell it reads (filled by the patched cell_comparisons) and the
    seed_components to patch in."""
    cell: dict = {}

    def components(a, b, is_paired):
        variants = [
            s.observed
            for s in cell["scores"].values()
            if with_zero_variance or s.observed.var() > 0
        ]
        df = sum(len(v) - 1 for v in variants)
        pooled = sum((len(v) - 1) * v.var(ddof=1) for v in variants) / df
        return [paired.Component(pooled * (1 / len(a.seeds) + 1 / len(b.seeds)), df)]

    return cell, components


FAULTS = ["no own-noise subtraction", "z instead of t", "pooled", "pooled with zero variance"]


@pytest.mark.parametrize("fault", FAULTS)
def test_the_coverage_test_fails_with_a_known_fault(fault, monkeypatch):
    """Each fault drives some pair or system out of the band; a pool over variants of unequal
    seed SDs covers less than COVERAGE["replaced_below"] (the paper says so)."""
    if fault == "no own-noise subtraction":
        monkeypatch.setattr(paired, "seed_own_share", lambda drawn: 0.0)
    elif fault == "z instead of t":
        monkeypatch.setattr(intervals, "calibrated_df", lambda components, known: math.inf)
    else:
        cell, components = pooled_seed_components(with_zero_variance=fault.endswith("variance"))
        real = paired.cell_comparisons

        def remembering(scores, pairs):
            cell["scores"] = scores
            return real(scores, pairs)

        monkeypatch.setattr(paired, "seed_components", components)
        monkeypatch.setattr(paired, "cell_comparisons", remembering)
    if fault.startswith("pooled"):  # the unequal pair, at the fewest seeds
        shares = simulated.coverage(simulated.SCENARIOS[0], COVERAGE["seeds"][0], STUDIES)
        print(fault, shares)
        assert min(shares.values()) < COVERAGE["replaced_below"]
        return
    failure = first_out_of_band()
    print(fault, failure)
    assert failure is not None
