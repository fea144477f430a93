"""The coverage the comparisons' 95% intervals keep, measured: simulated studies from a known
truth run through the code that writes comparisons.csv (paired.seed_scores,
paired.cell_comparisons, compare.in_range: each system's own interval too), and the share of
intervals that cover the truth, per scenario, number of seeds and pair or system.

    python -m softlookup.evaluate.coverage --studies 1000 --seeds 2 3 5 --out coverage.csv

Scenarios: the variance structure the default study has (seed, sentence and seed-by-sentence
noise) with equal seed SDs; one far larger (0.3 against 2.0); a variant with no variance at all
(it outputs nothing: every score 0); a variant trained on other seeds (unpaired, Welch); and
corpus BLEU from sacreBLEU's statistics of real sentences with the share of its short-input BLEU
a system keeps on long inputs. The promise (intervals.COVERAGE) is kept by
tests/test_coverage.py, which also puts known faults back and sees them fail; the paper prints
this table's range.
"""

from __future__ import annotations

import argparse
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU

from ..intervals import COVERAGE
from . import paired
from .compare import MEASURES, draw_counts, in_range, share

DRAWS, SENTENCES = 60, 80  # sentence draws a study, sentences a test set


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
    steady: tuple = ()  # variants whose own effect on a sentence is small (STEADY, not SYSTEM)

    def silent(self, variant: str) -> bool:
        """A variant that outputs nothing: every score 0, on every seed."""
        return self.means[variant] == 0 and self.seed_sds[variant] == 0


SCENARIOS = [
    Scenario(
        "sentence means",
        "mean",
        # equal seed SDs (e0-e2), one far larger (wide), one with no variance at all (it
        # outputs nothing: every score 0), one trained on other seeds, and two whose scores
        # move with the seed through their sentence-by-seed noise only (steady)
        {
            **{"e0": 30.0, "e1": 31.0, "e2": 29.5, "wide": 32.0, "none": 0.0, "other": 31.0},
            **{"steady0": 30.0, "steady1": 30.5},
        },
        {
            **{"e0": 0.3, "e1": 0.3, "e2": 0.3, "wide": 2.0, "none": 0.0, "other": 1.2},
            **{"steady0": 0.0, "steady1": 0.0},
        },
        (
            ("equal SDs", "e0", "e1"),
            ("equal SDs, another pair", "e2", "e1"),
            ("unequal SDs", "e1", "wide"),
            ("against no variance", "none", "e0"),
            ("different seeds", "e0", "other"),
            ("sentence-by-seed noise only", "steady0", "steady1"),
        ),
        other_seeds=("other",),
        steady=("steady0", "steady1"),
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
DIFFICULTY, SYSTEM, STEADY, RUN = 20 * SCALE, 10 * SCALE, 1 * SCALE, 12 * SCALE


@functools.cache
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


def bleu_runs(rng, scenario, seeds, variant, difficulty, picked, bank) -> list[np.ndarray]:
    """Each seed's per-sentence BLEU statistics: the replaced share's level moves with the
    variant, its seed, the sentence's difficulty and the run's own noise."""
    levels = bank.shape[1]
    runs = []
    for _ in seeds:
        seed_effect = rng.normal(0, scenario.seed_sds[variant])
        level = scenario.means[variant] + seed_effect + difficulty + rng.normal(0, 1.0, len(picked))
        index = np.clip(np.rint(level), 0, levels - 1).astype(int)
        runs.append(bank[picked, index])
    return runs


def mean_runs(rng, scenario, seeds, variant, difficulty) -> list[np.ndarray]:
    """Each seed's per-sentence scores as statistics (score, 1): their corpus value is the mean.
    A variant of mean 0 and seed SD 0 outputs nothing: every score 0."""
    if scenario.silent(variant):
        return [np.column_stack([np.zeros(SENTENCES), np.ones(SENTENCES)]) for _ in seeds]
    own = STEADY if variant in scenario.steady else SYSTEM
    system = difficulty + rng.normal(0, own, SENTENCES)
    runs = []
    for _ in seeds:
        scores = scenario.means[variant] + rng.normal(0, scenario.seed_sds[variant]) + system
        runs.append(np.column_stack([scores + rng.normal(0, RUN, SENTENCES), np.ones(SENTENCES)]))
    return runs


def seeds_of(scenario: Scenario, variant: str, n_seeds: int) -> list[int]:
    first = 1 + (n_seeds if variant in scenario.other_seeds else 0)
    return list(range(first, first + n_seeds))


def study(rng, scenario: Scenario, n_seeds: int, bank) -> dict[str, dict[str, paired.SeedScores]]:
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
    picked = rng.choice(len(bank), SENTENCES, replace=False)
    difficulty = rng.normal(0, 1.5, SENTENCES)
    bleu, kept, half = MEASURES["bleu"].corpus_values, {}, SENTENCES // 2
    found = {"bleu": {}, "share": {}}
    for variant in scenario.means:
        seeds = seeds_of(scenario, variant, n_seeds)
        stats = bleu_runs(rng, scenario, seeds, variant, difficulty, picked, bank)
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


RANGE_OF = {"mean": "bleu", "bleu": "bleu", "share": "bleu_share"}  # tables.RANGES' key


def run_studies(scenario: Scenario, n_seeds: int, studies: int) -> dict[str, np.ndarray]:
    """Per pair and per system (keys '<metric>: <name>'): each study's (estimate, low, high)."""
    rng = np.random.default_rng([n_seeds, SCENARIOS.index(scenario)])
    bank = sentence_bank()
    found: dict[str, list] = {}
    for _ in range(studies):
        for metric, scores in study(rng, scenario, n_seeds, bank).items():
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


def coverage(scenario: Scenario, n_seeds: int, studies: int) -> dict[str, float]:
    """Each pair's and system's share of intervals covering its truth (a system with no
    variance, whose interval is its one true value, is left out: it always covers)."""
    results = run_studies(scenario, n_seeds, studies)
    truth = truths(scenario, results)
    constant = {f"mean: {v}" for v in scenario.means if scenario.silent(v)}
    return {
        key: float(np.mean((rows[:, 1] <= truth[key]) & (truth[key] <= rows[:, 2])))
        for key, rows in results.items()
        if key not in constant
    }


def table(studies: int, seeds: list[int]) -> pd.DataFrame:
    """Every scenario's coverage at each number of seeds: scenario, seeds, estimate (a pair or a
    system), studies, covered (the share)."""
    return pd.DataFrame(
        [
            {"scenario": scenario.name, "seeds": n, "estimate": key, "studies": studies,
             "covered": covered}
            for n in seeds
            for scenario in SCENARIOS
            for key, covered in coverage(scenario, n, studies).items()
        ]
    )  # fmt: skip


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=COVERAGE["studies"])
    parser.add_argument("--seeds", type=int, nargs="+", default=list(COVERAGE["seeds"]))
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    found = table(args.studies, args.seeds)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    found.to_csv(args.out, index=False)
    print(f"{len(found)} rows -> {args.out}")


if __name__ == "__main__":
    main()
