"""From each run's scores on a test set (and on its sentence bootstrap draws) to the statistics of
the paired comparisons of one family of runs: the pure core of evaluate.compare (no files).

Model: a run's score is its variant's mean + a seed effect (SD sigma, the same for every variant
of a family) + the test sentences' effect. The seed variance sigma^2 is pooled over the family's
variants (one-way random effects: the variants' sample variances weighted by their degrees of
freedom, df = sum(seeds - 1)); Bartlett's test of equal variances at ALPHA guards the pooling,
and where it rejects, each comparison uses its own seeds (paired: the per-seed deltas' variance,
t(n - 1); unpaired: Welch). The seed effects of two families are independent: a comparison
across two takes each side's seed variance of its mean from the side's own family, summed by
Welch. The sentence component is the variance, over the bootstrap draws, of
the difference of the seed means, less the part of each run's draw-to-draw variance that its
seed alone has (a run's own sentence-by-seed noise, already in the seed variance): the draws'
covariance between seeds of one variant is the sentence variance they share. The two add;
Welch-Satterthwaite gives the degrees of freedom (the sentence part with df inf).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import intervals

ALPHA = 0.05  # Bartlett's test rejects pooling below this p-value


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


@dataclass(frozen=True)
class Pool:
    """A family's seed variance of one run's score, pooled over its variants."""

    variance: float  # NaN with no variant of two seeds
    df: int  # sum over variants of (seeds - 1)
    statistic: float  # Bartlett's, NaN where untestable (fewer than 2 variants of 2 seeds)
    p_value: float
    sds: dict[str, tuple[int, float]]  # variant -> (seeds, seed SD)

    @property
    def rejected(self) -> bool:
        return self.p_value < ALPHA


def finite(values: np.ndarray) -> np.ndarray:
    return values[np.isfinite(values)]


def seed_mean(values: np.ndarray) -> float:
    """The mean over seeds of the finite scores; NaN with none."""
    values = finite(values)
    return float(values.mean()) if len(values) else math.nan


def pool(scores: dict[str, SeedScores]) -> Pool:
    """Pooled seed variance of the variants' whole-set scores, with Bartlett's test."""
    values = {variant: finite(s.observed) for variant, s in scores.items()}
    sds = {
        v: (len(x), float(np.std(x, ddof=1)) if len(x) > 1 else math.nan) for v, x in values.items()
    }
    groups = [x for x in values.values() if len(x) > 1]
    df = sum(len(x) - 1 for x in groups)
    variance = sum((len(x) - 1) * np.var(x, ddof=1) for x in groups) / df if df else math.nan
    statistic, p_value = math.nan, math.nan
    if len(groups) > 1 and all(np.var(x) > 0 for x in groups):
        statistic, p_value = stats.bartlett(*groups)
    return Pool(float(variance), df, float(statistic), float(p_value), sds)


@dataclass(frozen=True)
class Component:
    """A variance component of an estimate with its degrees of freedom."""

    variance: float
    df: float


NO_SEED_VARIANCE = Component(math.nan, 0)


def own_variance(values: np.ndarray) -> Component:
    """The sample variance of values (NaN dropped), df n - 1; none below two values."""
    values = finite(values)
    return (
        Component(float(np.var(values, ddof=1)), len(values) - 1)
        if len(values) > 1
        else NO_SEED_VARIANCE
    )


def seed_component(
    a: SeedScores, b: SeedScores, pool_a: Pool, pool_b: Pool, paired: bool
) -> Component:
    """Seed variance of B's seed mean - A's. Within one family (pool_a is pool_b): pooled
    sigma^2 (1/n_a + 1/n_b) on the pool's df, or, pooling rejected, the comparison's own seeds
    (paired deltas; else Welch). Across two families: each side's own (side_seed_component), by
    Welch."""
    if pool_a is pool_b and not pool_a.rejected:
        if not pool_a.df:
            return NO_SEED_VARIANCE
        return Component(pool_a.variance * (1 / len(a.seeds) + 1 / len(b.seeds)), pool_a.df)
    if pool_a is pool_b and paired:
        own = own_variance(b.observed - a.observed)
        return Component(own.variance / len(a.seeds), own.df)
    return welch([side_seed_component(a, pool_a), side_seed_component(b, pool_b)])


def welch(parts: list[Component]) -> Component:
    """The sum of independent variances with Welch-Satterthwaite df; none if any part has none."""
    if any(part.df == 0 for part in parts):
        return NO_SEED_VARIANCE
    return Component(
        sum(part.variance for part in parts),
        intervals.satterthwaite([(part.variance, part.df) for part in parts]),
    )


def side_seed_component(side: SeedScores, family: Pool) -> Component:
    """Seed variance of one variant's seed mean: pooled, or its own seeds where pooling failed."""
    if not family.rejected:
        return (
            Component(family.variance / len(side.seeds), family.df)
            if family.df
            else NO_SEED_VARIANCE
        )
    own = own_variance(side.observed)
    return Component(own.variance / len(side.seeds), own.df)


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


def combine(seed: Component, sentence: float) -> tuple[float, float]:
    """(se, df) of seed + sentence variance: Welch-Satterthwaite, the sentence part with df inf;
    without a seed variance, the sentence part alone with df inf."""
    if seed.df == 0:
        return math.sqrt(sentence), math.inf
    df = intervals.satterthwaite([(seed.variance, seed.df), (sentence, math.inf)])
    return math.sqrt(seed.variance + sentence), df


def bartlett_text(family: Pool) -> str:
    return (
        f"Bartlett p = {family.p_value:.3f}"
        if math.isfinite(family.p_value)
        else "equal variance untested"
    )


def pooled_text(family: Pool, family_name: str) -> str:
    return (
        f"pooled over family {family_name} ({len(family.sds)}"
        f" variant{'' if len(family.sds) == 1 else 's'}, df {family.df},"
        f" {bartlett_text(family)})"
    )


def side_text(variant: str, family: Pool, family_name: str) -> str:
    """How one side's seed variance was found, for a comparison across families."""
    if family.rejected:
        return (
            f"{variant}: its own seeds (pooling over family {family_name} rejected:"
            f" {bartlett_text(family)})"
        )
    if not family.df:
        return f"{variant}: none (family {family_name} has no variant of two seeds)"
    return f"{variant}: {pooled_text(family, family_name)}"


def seed_method(sides: list[tuple[str, Pool, str]], n_seeds: int) -> str:
    """How the seed component was found, in words (the row's `method`); sides: (variant, its
    family's pool, the family's name) of A and B."""
    (_, family, family_name), (_, other, _) = sides
    if family is not other:
        return (
            "seed variance of each side's mean from its own family, summed by Welch ("
            + "; ".join(side_text(*side) for side in sides)
            + ")"
        )
    if family.rejected:
        return (
            f"seed variance of this comparison's own seeds, t(n - 1) (pooling over family"
            f" {family_name} rejected: {bartlett_text(family)})"
        )
    if not family.df:
        return f"no seed variance ({n_seeds} seed): sentence bootstrap only, normal interval"
    return f"seed variance {pooled_text(family, family_name)}"


def side_stats(side: SeedScores, family: Pool) -> tuple[float, float]:
    """(se, df) of one variant's seed mean: seed component plus its sentence variance."""
    return combine(side_seed_component(side, family), sentence_variance([(1.0, side.drawn)]))


def comparison_stats(
    a: SeedScores, b: SeedScores, pool_a: Pool, pool_b: Pool, paired: bool
) -> dict:
    """A comparison row's statistics: delta = B - A of the seed means with its seed and sentence
    components, df, 95% interval and two-sided p, and the per-seed deltas of a paired
    comparison; a side with no finite score (a share of a bucket whose BLEU is 0 for every seed)
    leaves delta, interval and p undefined (NaN): a recorded result, not an error."""
    mean_a, mean_b = seed_mean(a.observed), seed_mean(b.observed)
    delta = mean_b - mean_a
    seed = seed_component(a, b, pool_a, pool_b, paired)
    sentence = sentence_variance([(-1.0, a.drawn), (1.0, b.drawn)])
    se, df = combine(seed, sentence)
    defined = math.isfinite(delta) and math.isfinite(se)
    low, high = intervals.interval(delta, se, df) if defined else (math.nan, math.nan)
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
        "p_value": intervals.two_sided_p(delta, se, df),
        "se": se,
        "se_seed": math.sqrt(seed.variance) if seed.df else math.nan,
        "se_sentence": math.sqrt(sentence),
        "df": df,
        "seed_df": seed.df,
        "seed_deltas": json.dumps(per_seed),
    }


def cell_comparisons(
    scores: dict[str, SeedScores], pairs: list[tuple[str, str, str]], families: dict[str, str]
) -> tuple[list[dict], dict[str, Pool]]:
    """The statistics of each comparison (name, a, b) on one cell (test set, budget point, bucket,
    metric), scores holding every variant the comparisons name there, families each variant's
    family; and each family's Pool, of its variants in scores. A pair is paired on the seeds
    both variants have, else compares all seeds of each."""
    pools = {
        name: pool({v: s for v, s in scores.items() if families[v] == name})
        for name in sorted({families[v] for v in scores})
    }
    sides: dict[tuple, tuple[float, float]] = {}  # (variant, seeds) -> (se, df), once each
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
                sides[variant, side.seeds] = side_stats(side, pools[families[variant]])
        (se_a, df_a), (se_b, df_b) = sides[a, side_a.seeds], sides[b, side_b.seeds]
        pool_a, pool_b = pools[families[a]], pools[families[b]]
        statistics = comparison_stats(side_a, side_b, pool_a, pool_b, paired=bool(shared))
        method = seed_method(
            [(a, pool_a, families[a]), (b, pool_b, families[b])],
            min(len(side_a.seeds), len(side_b.seeds)),
        )
        rows.append(
            {
                "comparison": name,
                **statistics,
                "se_a": se_a,
                "df_a": df_a,
                "se_b": se_b,
                "df_b": df_b,
                "method": method,
            }
        )
    return rows, pools
