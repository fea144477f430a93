"""The promise of the comparisons' 95% intervals (evaluate.compare.COVERAGE), kept by simulated
studies from a known truth, run through the code that writes comparisons.csv (paired.seed_scores,
paired.cell_comparisons, compare.in_range: each system's own interval too) and the ledger's
one-sided tests: every pair and every system of every scenario covers its true value 93-97% of
the time at 2, 3 and 5 seeds; and the test fails when a known fault is put back.

Scenarios: the variance structure the default study has (seed, sentence, seed-by-sentence
noise), with equal seed SDs; unequal ones (0.3, 0.3, 0.3, 2.0); a variant with no variance at all
(it outputs nothing: every score 0); corpus BLEU from sacreBLEU's statistics of real sentences;
the share of its short-input BLEU a system keeps on long inputs; and systems trained on different
seeds (unpaired, Welch). Faults: the own-noise subtraction left out, z for t, a variance pooled
over the variants (the rule these intervals replaced), and such a pool with its zero-variance
variant in it.
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass

import numpy as np
import pytest
from sacrebleu.metrics import BLEU

from softlookup import intervals
from softlookup.evaluate import paired
from softlookup.evaluate.compare import COVERAGE, MEASURES, draw_counts, in_range, share

STUDIES, DRAWS, SENTENCES = COVERAGE["studies"], 60, 80
LOW, HIGH = COVERAGE["band"]


@dataclass(frozen=True)
class Scenario:
    """A family of variants studied together: each its true level, seed SD and first seed (a
    variant trained on other seeds than its pair's: unpaired, Welch), and the pairs compared."""

    name: str
    metric: str  # "mean": a mean of sentence scores; "bleu": corpus BLEU, and its "share"
    means: dict[str, float]
    seed_sds: dict[str, float]
    pairs: tuple
    other_seeds: tuple = ()  # variants whose seeds follow the others'


SCENARIOS = [
    Scenario(
        "sentence means",
        "mean",
        # equal seed SDs (e0-e2), one far larger (wide), one with no variance at all (it
        # outputs nothing: every score 0), one trained on other seeds
        {"e0": 30.0, "e1": 31.0, "e2": 29.5, "wide": 32.0, "none": 0.0, "other": 31.0},
        {"e0": 0.3, "e1": 0.3, "e2": 0.3, "wide": 2.0, "none": 0.0, "other": 1.2},
        (
            ("equal SDs", "e0", "e1"),
            ("equal SDs, another pair", "e2", "e1"),
            ("unequal SDs", "e1", "wide"),
            ("against no variance", "none", "e0"),
            ("different seeds", "e0", "other"),
        ),
        other_seeds=("other",),
    ),
    Scenario(
        "corpus BLEU",
        "bleu",
        {"b0": 4.0, "b1": 3.5, "b2": 5.0},  # the level of replaced words: lower is better
        {"b0": 0.7, "b1": 0.7, "b2": 0.7},
        (("bleu b1-b0", "b0", "b1"), ("bleu b2-b0", "b0", "b2")),
    ),
]
# per-sentence SDs of the plain-mean scenarios, as a share of Multi30k's 1,000 sentences: a
# sentence's difficulty (shared by every system), a system's own effect, a run's own noise
SCALE = math.sqrt(SENTENCES / 1000)
DIFFICULTY, SYSTEM, RUN = 20 * SCALE, 10 * SCALE, 8 * SCALE


def sentence_bank(size: int = 300, levels: int = 12) -> np.ndarray:
    """(size, levels, 10): sacreBLEU's statistics of real sentences: a reference of random words
    and its hypothesis with a share level / (levels - 1) of its words replaced, per level."""
    rng = np.random.default_rng(7)
    words = [f"w{i}" for i in range(60)]
    bank = np.zeros((size, levels, 10))
    for i in range(size):
        reference = list(rng.choice(words, int(rng.integers(6, 20))))
        hyps, refs = [], []
        for level in range(levels):
            replaced = rng.random(len(reference)) < level / (levels - 1)
            hyps.append(
                " ".join(
                    w if not r else str(rng.choice(words))
                    for w, r in zip(reference, replaced, strict=True)
                )
            )
            refs.append(" ".join(reference))
        bank[i] = BLEU()._extract_corpus_statistics(hyps, [refs])
    return bank


BANK = None


def bleu_runs(rng, scenario, seeds, variant, difficulty, picked) -> list[np.ndarray]:
    """Each seed's per-sentence BLEU statistics: the replaced share's level moves with the
    variant, its seed, the sentence's difficulty and the run's own noise."""
    levels = BANK.shape[1]
    runs = []
    for _ in seeds:
        seed_effect = rng.normal(0, scenario.seed_sds[variant])
        level = scenario.means[variant] + seed_effect + difficulty + rng.normal(0, 1.0, len(picked))
        index = np.clip(np.rint(level), 0, levels - 1).astype(int)
        runs.append(BANK[picked, index])
    return runs


def mean_runs(rng, scenario, seeds, variant, difficulty) -> list[np.ndarray]:
    """Each seed's per-sentence scores as statistics (score, 1): their corpus value is the mean.
    A variant of mean 0 and seed SD 0 outputs nothing: every score 0."""
    if scenario.means[variant] == 0 and scenario.seed_sds[variant] == 0:
        return [np.column_stack([np.zeros(SENTENCES), np.ones(SENTENCES)]) for _ in seeds]
    system = difficulty + rng.normal(0, SYSTEM, SENTENCES)
    runs = []
    for _ in seeds:
        scores = scenario.means[variant] + rng.normal(0, scenario.seed_sds[variant]) + system
        runs.append(np.column_stack([scores + rng.normal(0, RUN, SENTENCES), np.ones(SENTENCES)]))
    return runs


def seeds_of(scenario: Scenario, variant: str, n_seeds: int) -> list[int]:
    first = 1 + (n_seeds if variant in scenario.other_seeds else 0)
    return list(range(first, first + n_seeds))


def study(rng, scenario: Scenario, n_seeds: int) -> dict[str, dict[str, paired.SeedScores]]:
    """One simulated study: per metric, every variant's SeedScores (a BLEU study also gives each
    variant's share: BLEU of the second half of the sentences, the long inputs, over that of
    the first)."""
    counts = draw_counts(SENTENCES, DRAWS, int(rng.integers(1e9)))
    if scenario.metric == "mean":
        difficulty = rng.normal(0, DIFFICULTY, SENTENCES)
        return {
            "mean": {
                variant: paired.seed_scores(
                    seeds_of(scenario, variant, n_seeds),
                    mean_runs(rng, scenario, seeds_of(scenario, variant, n_seeds), variant,
                              difficulty),
                    counts,
                    share,
                )
                for variant in scenario.means
            }
        }  # fmt: skip
    picked = rng.choice(len(BANK), SENTENCES, replace=False)
    difficulty = rng.normal(0, 1.5, SENTENCES)
    bleu, kept, half = MEASURES["bleu"].corpus_values, {}, SENTENCES // 2
    found = {"bleu": {}, "share": {}}
    for variant in scenario.means:
        seeds = seeds_of(scenario, variant, n_seeds)
        stats = bleu_runs(rng, scenario, seeds, variant, difficulty, picked)
        found["bleu"][variant] = paired.seed_scores(seeds, stats, counts, bleu)
        short, long = (
            paired.seed_scores(seeds, [s[part] for s in stats], counts[:, part], bleu)
            for part in (slice(None, half), slice(half, None))
        )
        kept[variant] = (short, long)
        found["share"][variant] = paired.SeedScores(
            tuple(seeds), long.observed / short.observed, long.drawn / short.drawn
        )
    return found


RANGE_OF = {"mean": "bleu", "bleu": "bleu", "share": "bleu_share"}  # compare.RANGES' key


def run_studies(scenario: Scenario, n_seeds: int) -> dict[str, np.ndarray]:
    """Per pair and per system (keys '<metric>: <name>'): each study's (estimate, low, high)
    over STUDIES studies."""
    rng = np.random.default_rng([n_seeds, SCENARIOS.index(scenario)])
    found: dict[str, list] = {}
    for _ in range(STUDIES):
        for metric, scores in study(rng, scenario, n_seeds).items():
            seen = set()
            rows = paired.cell_comparisons(scores, list(scenario.pairs))
            for (name, a, b), row in zip(scenario.pairs, rows, strict=True):
                row = in_range(row, RANGE_OF[metric])
                found.setdefault(f"{metric}: {name}", []).append(
                    (row["delta"], row["ci_low"], row["ci_high"])
                )
                for side, variant in (("a", a), ("b", b)):
                    if variant not in seen:
                        seen.add(variant)
                        found.setdefault(f"{metric}: {variant}", []).append(
                            (row[f"mean_{side}"], row[f"ci_low_{side}"], row[f"ci_high_{side}"])
                        )
    return {key: np.asarray(rows) for key, rows in found.items()}


def truths(scenario: Scenario, results: dict[str, np.ndarray]) -> dict[str, float]:
    """The true value of each pair and system: the design's for sentence means; for BLEU and
    shares, whose truth has no closed form, the mean of the estimates over all studies (the
    expected value a study of this size estimates)."""
    if scenario.metric != "mean":
        return {key: float(np.nanmean(rows[:, 0])) for key, rows in results.items()}
    pairs = {
        f"mean: {name}": scenario.means[b] - scenario.means[a] for name, a, b in scenario.pairs
    }
    return {**pairs, **{f"mean: {variant}": mean for variant, mean in scenario.means.items()}}


def coverage(scenario: Scenario, n_seeds: int) -> dict[str, float]:
    """Each pair's and system's share of intervals covering its truth (a system with no
    variance, whose interval is its one true value, is left out: it always covers)."""
    results = run_studies(scenario, n_seeds)
    truth = truths(scenario, results)
    constant = {f"mean: {v}" for v, sd in scenario.seed_sds.items() if sd == 0}
    return {
        key: float(np.mean((rows[:, 1] <= truth[key]) & (truth[key] <= rows[:, 2])))
        for key, rows in results.items()
        if key not in constant
    }


@pytest.fixture(scope="module", autouse=True)
def bank():
    global BANK
    BANK = sentence_bank()


def first_out_of_band() -> str | None:
    """The first pair or system, over the seeds and scenarios, whose coverage leaves the band."""
    for n_seeds in COVERAGE["seeds"]:
        for scenario in SCENARIOS:
            for key, covered in coverage(scenario, n_seeds).items():
                if not LOW <= covered <= HIGH:
                    return f"{scenario.name}, {n_seeds} seeds, {key}: {covered:.3f}"
    return None


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.name)
@pytest.mark.parametrize("n_seeds", COVERAGE["seeds"])
def test_every_interval_covers_its_truth_95_percent_of_the_time(scenario, n_seeds):
    shares = coverage(scenario, n_seeds)
    print(scenario.name, n_seeds, {key: round(covered, 3) for key, covered in shares.items()})
    assert all(LOW <= covered <= HIGH for covered in shares.values()), shares


def test_a_variant_with_no_variance_gets_its_one_value_as_interval(monkeypatch):
    monkeypatch.setattr(sys.modules[__name__], "STUDIES", 20)
    rows = run_studies(SCENARIOS[0], 2)["mean: none"]
    assert (rows == 0).all()


def pooled_seed_components(with_zero_variance: bool):
    """The rule these intervals replaced: every variant's seed variance pooled (a paired pair's
    seed part pooled sigma^2 (1/n + 1/n) on the pool's df), the variants of no variance left in
    the pool or not."""
    cell: dict = {}

    def components(a, b, is_paired):
        variants = [
            s.observed
            for s in cell["scores"].values()
            if with_zero_variance or np.var(s.observed) > 0
        ]
        df = sum(len(v) - 1 for v in variants)
        pooled = sum((len(v) - 1) * np.var(v, ddof=1) for v in variants) / df
        return [paired.Component(pooled * (1 / len(a.seeds) + 1 / len(b.seeds)), df)]

    return cell, components


FAULTS = ["no own-noise subtraction", "z instead of t", "pooled", "pooled with zero variance"]


@pytest.mark.parametrize("fault", FAULTS)
def test_the_coverage_test_fails_with_a_known_fault(fault, monkeypatch):
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
    failure = first_out_of_band()
    print(fault, failure)
    assert failure is not None
