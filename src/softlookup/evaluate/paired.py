"""From each run's scores on a test set (and on its sentence bootstrap draws) to the statistics of
the paired comparisons of one cell: the pure core of evaluate.compare (no files).

Model: a run's score is its variant's mean + a seed effect + the test sentences' effect. Each
variant has a seed variance of its own (variants differ in it: a model that outputs nothing has
none, an unstable one much), so no variance is pooled across variants: a comparison's seed
variance comes from its two systems' own seeds only. Paired (both trained with the same seeds):
the variance of the per-seed deltas, over n, on n - 1 degrees of freedom; unpaired: each side's
own sample variance over its seeds (Welch). A single system's seed variance is its own seeds'.
The sentence component is the variance, over the bootstrap draws, of the difference of the seed
means, less the part of each run's draw-to-draw variance that its seed alone has (a run's own
sentence-by-seed noise, already in the seed variance): the draws' covariance between seeds of
one variant is the sentence variance they share. The two add; the degrees of freedom of their
sum are calibrated for coverage (softlookup.intervals.calibrated_df), the sentence part
counted as known. The choice is the coverage simulation's (tests/test_coverage.py): a variance pooled
over variants of unequal seed variance covers as little as 66% at 2 seeds.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np

from .. import intervals


@dataclass(frozen=True)
class SeedScores:
    """One variant's score per seed: on the whole set (S,) and in each sentence draw (S, R)."""

    seeds: tuple[int, ...]
    observed: np.ndarray
    drawn: np.ndarray

    def select(self, seeds: list[int]) -> SeedScores:
        rows = [self.seeds.index(seed) for seed in seeds]
        return SeedScores(tuple(seeds), self.observed[rows], self.drawn[rows])


def seed_scores(
    seeds: list[int], sentence_stats: list[np.ndarray], counts: np.ndarray, corpus_values
) -> SeedScores:
    """A variant's SeedScores from each seed's per-sentence sufficient statistics (N, k),
    counts (R, N) from the sentence draws, and corpus_values: summed statistics (M, k) -> (M,)."""
    observed = [corpus_values(s.sum(0, keepdims=True))[0] for s in sentence_stats]
    drawn = [corpus_values(counts @ s) for s in sentence_stats]
    return SeedScores(tuple(seeds), np.asarray(observed, np.float64), np.asarray(drawn, np.float64))


def finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def seed_mean(values: np.ndarray) -> float:
    """The mean over seeds of the finite scores; NaN with none."""
    values = finite(values)
    return float(values.mean()) if len(values) else math.nan


def seed_sd(values: np.ndarray) -> float:
    """The sample SD over seeds of the finite scores; NaN below two."""
    values = finite(values)
    return float(np.std(values, ddof=1)) if len(values) > 1 else math.nan


@dataclass(frozen=True)
class Component:
    """A variance component of an estimate with its degrees of freedom (0: none estimable)."""

    variance: float
    df: int


NO_SEED_VARIANCE = Component(math.nan, 0)


def mean_variance(values: np.ndarray) -> Component:
    """The variance of the mean of values (NaN dropped): their sample variance / n, on n - 1 df;
    none below two values."""
    values = finite(values)
    if len(values) < 2:
        return NO_SEED_VARIANCE
    return Component(float(np.var(values, ddof=1)) / len(values), len(values) - 1)


def seed_components(a: SeedScores, b: SeedScores, paired: bool) -> list[Component]:
    """The seed variance of B's seed mean - A's, from these two systems' seeds only: paired, one
    component (the per-seed deltas'); else one per side (Welch). [] when a side has too few
    seeds to estimate it."""
    parts = (
        [mean_variance(b.observed - a.observed)]
        if paired
        else [mean_variance(a.observed), mean_variance(b.observed)]
    )
    return [] if any(part.df == 0 for part in parts) else parts


def seed_own_share(drawn: np.ndarray) -> float:
    """The part of Var(draws of the seed mean) that is each seed's own: (mean over seeds of
    Var(draws of a seed) - Var(draws of the mean)) / (n - 1), at least 0; 0 for one seed.
    drawn (S, R)."""
    n = len(drawn)
    if n < 2:
        return 0.0
    own = (np.var(drawn, axis=1, ddof=1).mean() - np.var(drawn.mean(0), ddof=1)) / (n - 1)
    return max(0.0, float(own))


def sentence_variance(sides: list[tuple[float, np.ndarray]]) -> float:
    """Sentence variance of sum(weight * seed mean) over [(weight, drawn (S, R)), ...]: the
    draws' variance less each side's seeds' own share (module docstring); draws where any score is
    NaN (a share of a zero BLEU) left out; at least 0."""
    keep = np.all([np.isfinite(drawn).all(0) for _, drawn in sides], axis=0)
    if keep.sum() < 2:
        return math.nan
    kept = [(weight, drawn[:, keep]) for weight, drawn in sides]
    total = np.var(sum(weight * drawn.mean(0) for weight, drawn in kept), ddof=1)
    own = sum(weight**2 * seed_own_share(drawn) for weight, drawn in kept)
    return max(0.0, float(total - own))


@dataclass(frozen=True)
class Spread:
    """An estimate's standard error and degrees of freedom, with its seed part (NaN: none)."""

    se: float
    df: float
    se_seed: float
    seed_df: int


def spread(seed: list[Component], sentence: float) -> Spread:
    """Seed components plus the sentence variance: se and its calibrated df; without a
    seed component, the sentence part alone on df inf (the normal rule)."""
    seed_variance = sum(part.variance for part in seed) if seed else math.nan
    if not seed:
        return Spread(math.sqrt(sentence), math.inf, math.nan, 0)
    df = intervals.calibrated_df([(part.variance, part.df) for part in seed], sentence)
    return Spread(
        math.sqrt(seed_variance + sentence), df, math.sqrt(seed_variance), sum(p.df for p in seed)
    )


def side_spread(side: SeedScores) -> Spread:
    """One system's seed mean: its own seeds' variance plus its sentence variance."""
    return spread(
        [mean_variance(side.observed)] if len(finite(side.observed)) > 1 else [],
        sentence_variance([(1.0, side.drawn)]),
    )


def seed_method(paired: bool, n_seeds: int) -> str:
    """How the seed component was found, in words (the row's `method`)."""
    if n_seeds < 2:
        return f"no seed variance ({n_seeds} seed): sentence bootstrap only, normal interval"
    if paired:
        return (
            f"seed variance of the {n_seeds} per-seed differences (this pair's own seeds,"
            f" {n_seeds - 1} df)"
        )
    return "seed variance of each side's own seeds, summed (Welch)"


def comparison_stats(a: SeedScores, b: SeedScores, paired: bool) -> dict:
    """A comparison row's statistics: delta = B - A of the seed means with its seed and sentence
    components, df, 95% interval and two-sided p, and the per-seed deltas of a paired
    comparison; a side with no finite score (a share of a bucket whose BLEU is 0 for every seed)
    leaves delta, interval and p undefined (NaN): a recorded result, not an error."""
    mean_a, mean_b = seed_mean(a.observed), seed_mean(b.observed)
    delta = mean_b - mean_a
    sentence = sentence_variance([(-1.0, a.drawn), (1.0, b.drawn)])
    found = spread(seed_components(a, b, paired), sentence)
    defined = math.isfinite(delta) and math.isfinite(found.se)
    low, high = intervals.interval(delta, found.se, found.df) if defined else (math.nan,) * 2
    per_seed = (
        {
            str(s): round(float(db - da), 6)
            for s, da, db in zip(a.seeds, a.observed, b.observed, strict=True)
        }
        if paired
        else {}
    )
    return {
        "mean_a": mean_a,
        "mean_b": mean_b,
        "delta": delta,
        "ci_low": low,
        "ci_high": high,
        "p_value": intervals.two_sided_p(delta, found.se, found.df),
        "se": found.se,
        "se_seed": found.se_seed,
        "se_sentence": math.sqrt(sentence),
        "df": found.df,
        "seed_df": found.seed_df,
        "seed_deltas": json.dumps(per_seed),
    }


def cell_comparisons(scores: dict[str, SeedScores], pairs: list[tuple[str, str, str]]) -> list:
    """The statistics of each comparison (name, a, b) on one cell (test set, budget point, bucket,
    metric), scores holding every variant the comparisons name there, and each system's own
    (se_a, df_a, se_b, df_b). A pair is paired on the seeds both variants have, else compares
    all seeds of each."""
    sides: dict[tuple, Spread] = {}  # (variant, seeds) -> its Spread, once each
    rows = []
    for name, a, b in pairs:
        shared = sorted(set(scores[a].seeds) & set(scores[b].seeds))
        side_a, side_b = (
            (scores[a].select(shared), scores[b].select(shared))
            if shared
            else (scores[a], scores[b])
        )
        for variant, side in ((a, side_a), (b, side_b)):
            if (variant, side.seeds) not in sides:
                sides[variant, side.seeds] = side_spread(side)
        own_a, own_b = sides[a, side_a.seeds], sides[b, side_b.seeds]
        rows.append(
            {
                "comparison": name,
                **comparison_stats(side_a, side_b, paired=bool(shared)),
                "se_a": own_a.se,
                "df_a": own_a.df,
                "se_b": own_b.se,
                "df_b": own_b.df,
                "method": seed_method(bool(shared), min(len(side_a.seeds), len(side_b.seeds))),
            }
        )
    return rows
