"""Paired comparisons of two variants on the same test sentences -> results/tables/comparisons.csv,
and the seed variance they rest on -> results/tables/seed_variance.csv.

    python -m softlookup.evaluate.compare --runs-dir results/runs --runs a-s1 a-s2 b-s1 b-s2
        --pair dot_vs_additive gru_dot gru_additive test_2016_flickr [--pair ...]
        --data-dir DIR --tgt en --src de --bucket-edges 0 10 20 --out comparisons.csv
        --seed-variance-out seed_variance.csv

A row's statistic is `delta` = B - A of the means over seeds of each system's corpus score on the
whole test set (or bucket); `mean_a`, `mean_b` are those means. Its standard error has two
independent parts (the arithmetic is softlookup.evaluate.paired's):
1. Seed (`se_seed`, on `seed_df` degrees of freedom): from this pair's own seeds only, never a
   variance pooled over other variants (variants differ in seed variance: a model that outputs
   nothing has none). Paired (both systems trained with the same seeds): the variance of the
   per-seed deltas / n, on n - 1 df; unpaired: each side's own sample variance / its seeds.
   With fewer than two seeds there is no seed variance: `se_seed` is empty, `seed_df` 0.
2. Sentences (`se_sentence`): a paired bootstrap of the test sentences (Koehn 2004; sacrebleu's
   `paired-bs`): R draws, the same resampled sentences for every seed and both systems,
   independently per source-length bucket, each run's corpus score recomputed from sacrebleu's
   per-sentence sufficient statistics. Its variance is that of the drawn B - A of the seed means
   less the share of it that each seed has alone (the mean over seeds of a run's own draw
   variance, less the variance of the drawn seed mean, over n - 1): that sentence-by-seed noise
   already moves the seeds' whole-set scores, so it is in the seed variance once.
`se` = sqrt(se_seed^2 + se_sentence^2) on `df` degrees of freedom calibrated for coverage
(softlookup.intervals.calibrated_df: the sentence part known, the seed part on its own df; inf
without a seed part); the 95% interval is delta +- t(0.975, df) se, cut to the range a difference of the
metric can take, and `p_value` the two-sided t p-value. `se_a`, `df_a`, `ci_low_a`, `ci_high_a`
(and B's) are each system's own mean, built the same way from its own seeds and sentence draws,
its interval cut to the metric's range (`tables.RANGES`: a BLEU in [0, 100], a share at least
0): the one interval of a single system every table, check and sentence reads. `family` names the
systems' family (architecture and training budget; two joined by ' + ' for a pair across them),
`method` the seed rule the row took.

`seed_deltas` holds each seed's own B - A on the whole set as a JSON object {"<seed>": delta}
(paired comparisons, both systems trained with the same seeds; "{}" otherwise):
`json.loads(row.seed_deltas)` in a pandas reader. Measures: corpus BLEU and chrF; `length_ratio`,
hypothesis / reference length in BLEU's tokens (its brevity ratio); and `empty_share`, the share of
empty hypotheses. BLEU is compared on the whole test set and per source-length bucket, the others
on the whole set. Rows of metric `bleu_share` (bucket: a longer bucket) compare the share of its
shortest-bucket BLEU each system keeps on that bucket (the D1 length claim): per seed and draw,
BLEU of the bucket / BLEU of the shortest bucket, its seeds and draws treated as the other metrics'.
seed_variance.csv lists, per family and cell, each variant's seeds and seed SD: why no variance is
pooled across variants, shown.

Every pair is compared at every training-budget point its runs kept (column `epoch`: k, the
weights after k epochs, see softlookup.train; "final", the runs' models).
A pair naming a variant without trained runs (not in --runs, or none finished "ok") is skipped,
and the log says so.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from .. import intervals
from ..data.buckets import ALL, bucket_order, buckets_of
from ..rundir import read_meta, read_run_config, run_status, variant_of
from ..tables import COMPARISON_COLUMNS, FINAL, RANGES, SEED_VARIANCE_COLUMNS
from .paired import SeedScores, cell_comparisons, seed_scores, seed_sd


@dataclass(frozen=True)
class Measure:
    """A corpus measure from per-sentence sufficient statistics (summing rows = corpus)."""

    sentence_stats: Callable[[list[str], list[str]], np.ndarray]  # hyps, refs -> (N, k)
    corpus_values: Callable[[np.ndarray], np.ndarray]  # summed statistics (M, k) -> values (M,)


def sacrebleu_measure(metric_class) -> Measure:
    """sacrebleu's own statistics and corpus score (BLEU, chrF)."""

    def stats(hyps: list[str], refs: list[str]) -> np.ndarray:
        return np.asarray(metric_class()._extract_corpus_statistics(hyps, [refs]), np.float64)

    metric = metric_class()
    return Measure(
        stats,
        lambda summed: np.array(
            [metric._compute_score_from_stats(row.tolist()).score for row in summed]
        ),
    )


def bleu_values(summed: np.ndarray) -> np.ndarray:
    """(M,): sacrebleu's corpus BLEU (its defaults: 4-grams, 'exp' smoothing) of each row of
    summed statistics (M, 10) [hypothesis length, reference length, correct 1-4, total 1-4],
    computed for every row at once (sacrebleu's BLEU.compute_bleu, one row a call, is the slow
    part of a thousand sentence draws; tests/test_scoring.py holds the two equal)."""
    summed = np.asarray(summed, np.float64)
    hyp_len, ref_len = summed[:, 0], summed[:, 1]
    correct, total = summed[:, 2:6], summed[:, 6:10]
    none_correct = correct == 0
    halvings = np.cumsum(none_correct, axis=1)  # sacrebleu's smooth_mteval doublings so far
    scored = (total > 0).all(axis=1) & ~none_correct.all(axis=1)
    safe_total = np.where(total > 0, total, 1.0)
    precision = np.where(
        none_correct, 100.0 / (2.0**halvings * safe_total), 100 * correct / safe_total
    )
    log_mean = np.log(np.where(scored[:, None], precision, 1.0)).mean(axis=1)
    short = hyp_len < ref_len
    ratio = ref_len / np.where(hyp_len > 0, hyp_len, 1.0)
    brevity = np.where(short, np.where(hyp_len > 0, np.exp(1 - ratio), 0.0), 1.0)
    return np.where(scored, brevity * np.exp(log_mean), 0.0)


def length_stats(hyps: list[str], refs: list[str]) -> np.ndarray:
    """(N, 2): hypothesis and reference length in BLEU's tokens (its first two statistics)."""
    return sacrebleu_measure(BLEU).sentence_stats(hyps, refs)[:, :2]


def empty_stats(hyps: list[str], refs: list[str]) -> np.ndarray:
    """(N, 2): 1 for an empty hypothesis, and 1 per sentence."""
    return np.array([[float(not hyp.strip()), 1.0] for hyp in hyps]).reshape(-1, 2)


def share(summed: np.ndarray) -> np.ndarray:
    """(M,): first statistic / second, NaN where the second is 0."""
    return ratio(summed[:, 0], summed[:, 1])


MEASURES = {
    "bleu": Measure(sacrebleu_measure(BLEU).sentence_stats, bleu_values),
    "chrf": sacrebleu_measure(CHRF),
    "length_ratio": Measure(length_stats, share),
    "empty_share": Measure(empty_stats, share),
}


def difference_range(metric: str) -> tuple[float, float]:
    low, high = RANGES[metric]
    return low - high, high - low


PER_BUCKET = {"bleu"}  # as in scores.csv: the other measures on whole test sets only


def draw_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """(R, n): how often each sentence is drawn in each bootstrap sample."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n), dtype=np.float64)
    np.add.at(counts, (np.arange(resamples)[:, None], picks), 1.0)
    return counts


def ratio(numerator, denominator):
    """numerator / denominator elementwise, NaN where the denominator is not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(np.asarray(denominator) > 0, np.divide(numerator, denominator), np.nan)


def variant_runs(runs_dir: Path, runs: list[str]) -> dict[str, dict[int, str]]:
    """variant -> {seed: run} of the runs that trained without diverging."""
    found: dict[str, dict[int, str]] = {}
    for run in runs:
        config = read_run_config(runs_dir / run)
        if run_status(runs_dir / run) != "ok":
            print(f"{run}: not ok (diverged); left out of comparisons")
            continue
        variant = config.get("variant") or variant_of(run)
        found.setdefault(variant, {})[int(config["seed"])] = run
    return found


def hypotheses_file(run_dir: Path, test_set: str, tgt: str, point: str) -> Path:
    """The run's translations of `test_set` by its final model, or by its weights at budget
    point k (ladder/hyp.e<k>.<test set>.<tgt>)."""
    if point == FINAL:
        return run_dir / f"hyp.{test_set}.{tgt}"
    return run_dir / "ladder" / f"hyp.e{point}.{test_set}.{tgt}"


def read_hypotheses(
    runs_dir: Path, runs: list[str], test_set: str, tgt: str, point: str = FINAL
) -> list[list[str]]:
    files = [hypotheses_file(runs_dir / run, test_set, tgt, point) for run in runs]
    return [f.read_text(encoding="utf-8").splitlines() for f in files]


def shared_points(runs_dir: Path, runs: list[str]) -> list[str]:
    """The budget points every one of `runs` kept (meta.json "ladder"), in epoch order, then
    "final"; a run trained without a ladder has only "final"."""
    kept = [set(read_meta(runs_dir / run).get("ladder", {})) - {FINAL} for run in runs]
    return [*sorted(set.intersection(*kept), key=int), FINAL]


def length_groups(sources: list[str], edges, min_bucket_sentences: int) -> dict[str, np.ndarray]:
    """The whole set, then every source-length bucket holding enough sentences: label -> indices."""
    labels = np.array(buckets_of(sources, edges))
    groups = {ALL: np.arange(len(sources))}
    for label in bucket_order(labels):
        members = np.flatnonzero(labels == label)
        if len(members) >= min_bucket_sentences:
            groups[label] = members
    return groups


def kept_share(long: SeedScores, short: SeedScores) -> SeedScores:
    """Per seed and draw: the score on a longer bucket as a share of that on the shortest."""
    return SeedScores(
        long.seeds, ratio(long.observed, short.observed), ratio(long.drawn, short.drawn)
    )


def family_of(run_dir: Path) -> str:
    """A run's family: its architecture and training budget (config.json model.arch and
    train.epochs), e.g. 'gru, 10 epochs'."""
    config = read_run_config(run_dir)
    return f"{config['model']['arch']}, {config['train']['epochs']} epochs"


@dataclass(frozen=True)
class TestSet:
    """A test set's references, source-length groups and each group's sentence draws."""

    refs: list[str]
    groups: dict[str, np.ndarray]  # bucket -> sentence indices
    counts: dict[str, np.ndarray]  # bucket -> (R, n) draw counts, independent per bucket


def read_test_set(
    data_dir: Path,
    test_set: str,
    src: str,
    tgt: str,
    *,
    edges,
    min_bucket_sentences: int,
    resamples: int,
    seed: int,
) -> TestSet:
    sources = (data_dir / f"{test_set}.{src}").read_text(encoding="utf-8").splitlines()
    refs = (data_dir / f"{test_set}.{tgt}").read_text(encoding="utf-8").splitlines()
    groups = length_groups(sources, edges, min_bucket_sentences)
    counts = {
        bucket: draw_counts(len(members), resamples, seed + offset)
        for offset, (bucket, members) in enumerate(groups.items())
    }
    return TestSet(refs, groups, counts)


def variant_cells(
    seeds: list[int], hypotheses: list[list[str]], test: TestSet
) -> dict[tuple[str, str], SeedScores]:
    """A variant's SeedScores per (bucket, metric): every measure of the whole set, BLEU per
    bucket, and the share of the shortest bucket's BLEU kept per longer bucket. hypotheses: one
    list per seed, aligned with the references."""
    cells = {}
    for bucket, members in test.groups.items():
        refs = [test.refs[i] for i in members]
        for metric, measure in MEASURES.items():
            if bucket != ALL and metric not in PER_BUCKET:
                continue
            stats = [measure.sentence_stats([h[i] for i in members], refs) for h in hypotheses]
            cells[bucket, metric] = seed_scores(
                seeds, stats, test.counts[bucket], measure.corpus_values
            )
    buckets = [label for label in test.groups if label != ALL]
    for bucket in buckets[1:]:
        cells[bucket, "bleu_share"] = kept_share(cells[bucket, "bleu"], cells[buckets[0], "bleu"])
    return cells


def sentence_method(resamples: int, bucket: str, metric: str, shortest: str) -> str:
    share_text = (
        f"; share: BLEU of this bucket / BLEU of bucket {shortest}, per seed and draw"
        if metric == "bleu_share"
        else ""
    )
    where = "the test set" if bucket == ALL else "the bucket"
    return (
        f"; paired sentence bootstrap, {resamples} draws of {where}'s sentences, the same for"
        f" every run; interval: delta +- t(df) se, df calibrated for 95% coverage{share_text}"
    )


def compare_point(
    pairs: list[tuple[str, str, str]],
    families: dict[str, str],
    test_set: str,
    point: str,
    cells: dict[str, dict],
    test: TestSet,
    resamples: int,
) -> tuple[list[dict], list[dict]]:
    """Rows of the comparisons (name, a, b) on one test set at one budget point, and each named
    variant's seed-variance rows; families: variant -> its family; cells: variant -> its
    variant_cells."""
    rows, variances = [], []
    shortest = next(label for label in test.groups if label != ALL) if len(test.groups) > 1 else ALL
    for bucket, metric in next(iter(cells.values())):
        scores = {variant: cell[bucket, metric] for variant, cell in cells.items()}
        place = {"test_set": test_set, "epoch": point, "bucket": bucket, "metric": metric}
        for (_, a, b), row in zip(pairs, cell_comparisons(scores, pairs), strict=True):
            rows.append(
                {
                    **in_range(row, metric),
                    **place,
                    "system_a": a,
                    "system_b": b,
                    "n_sentences": len(test.groups[bucket]),
                    "family": pair_family(families, a, b),
                    "method": row["method"] + sentence_method(resamples, bucket, metric, shortest),
                }
            )
        variances += [
            {
                "family": families[variant],
                "variant": variant,
                **place,
                "seeds": len(side.seeds),
                "seed_sd": seed_sd(side.observed),
            }
            for variant, side in scores.items()
        ]
    return rows, variances


def in_range(row: dict, metric: str) -> dict:
    """A row's 95% intervals: the difference's cut to +-the metric's width, each system's own
    (mean +- t(df) se) cut to the metric's range; NaN where undefined."""
    low, high = intervals.within((row["ci_low"], row["ci_high"]), difference_range(metric))
    found = {**row, "ci_low": low, "ci_high": high}
    for side in ("a", "b"):
        mean, se, df = row[f"mean_{side}"], row[f"se_{side}"], row[f"df_{side}"]
        bounds = (
            intervals.within(intervals.interval(mean, se, df), RANGES[metric])
            if math.isfinite(mean) and math.isfinite(se)
            else (math.nan, math.nan)
        )
        found[f"ci_low_{side}"], found[f"ci_high_{side}"] = bounds
    return found


def pair_family(families: dict[str, str], a: str, b: str) -> str:
    """The family of a pair: its systems', or both, joined by ' + '."""
    return " + ".join(sorted({families[a], families[b]}))


def point_groups(
    pairs: list[tuple[str, str, str, str]], runs_dir: Path, by_variant: dict[str, dict[int, str]]
) -> tuple[dict[tuple, list], dict[str, str]]:
    """(test set, budget point) -> the comparisons (name, a, b) there, and variant -> family."""
    families = {
        v: family_of(runs_dir / next(iter(seeds.values()))) for v, seeds in by_variant.items()
    }
    groups: dict[tuple, list] = {}
    for name, a, b, test_set in pairs:
        missing = [v for v in (a, b) if v not in by_variant]
        if missing:
            print(f"comparison {name}: skipped, no trained runs of {', '.join(missing)}")
            continue
        points = shared_points(runs_dir, [*by_variant[a].values(), *by_variant[b].values()])
        for point in points:
            groups.setdefault((test_set, point), []).append((name, a, b))
        print(
            f"comparison {name}: {b} vs {a} on {test_set}, family {pair_family(families, a, b)},"
            f" seeds {seeds_text(by_variant[a], by_variant[b])}, points {points}"
        )
    return groups, families


def compare(
    pairs: list[tuple[str, str, str, str]],
    runs_dir: Path,
    runs: list[str],
    data_dir: Path,
    src: str,
    tgt: str,
    *,
    edges: list[int],
    min_bucket_sentences: int,
    resamples: int,
    seed: int,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every pair at every budget point its runs share (column `epoch`; "final": the models):
    the comparisons table and the seed-variance table."""
    by_variant = variant_runs(runs_dir, runs)
    groups, families = point_groups(pairs, runs_dir, by_variant)
    tests, rows, variances = {}, [], []
    for (test_set, point), point_pairs in groups.items():
        if test_set not in tests:
            tests[test_set] = read_test_set(
                data_dir,
                test_set,
                src,
                tgt,
                edges=edges,
                min_bucket_sentences=min_bucket_sentences,
                resamples=resamples,
                seed=seed,
            )
        cells = {}  # variant -> its variant_cells on this test set at this point
        for variant in sorted({v for _, a, b in point_pairs for v in (a, b)}):
            seeds = sorted(by_variant[variant])
            hypotheses = read_hypotheses(
                runs_dir, [by_variant[variant][s] for s in seeds], test_set, tgt, point
            )
            cells[variant] = variant_cells(seeds, hypotheses, tests[test_set])
        pair_rows, point_variances = compare_point(
            point_pairs, families, test_set, point, cells, tests[test_set], resamples
        )
        rows += [
            {**row, "seeds": seeds_text(by_variant[row["system_a"]], by_variant[row["system_b"]])}
            for row in pair_rows
        ]
        variances += point_variances
    return (
        pd.DataFrame(rows, columns=COMPARISON_COLUMNS),
        pd.DataFrame(variances, columns=SEED_VARIANCE_COLUMNS),
    )


def seeds_text(seeds_a: dict[int, str], seeds_b: dict[int, str]) -> int | str:
    """The `seeds` column: how many seeds a paired comparison pairs, else 'n_a/n_b'."""
    shared = set(seeds_a) & set(seeds_b)
    return len(shared) if shared else f"{len(seeds_a)}/{len(seeds_b)}"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", required=True, type=Path)
    parser.add_argument("--runs", nargs="*", default=[], help="run names (directories)")
    parser.add_argument(
        "--pair",
        nargs=4,
        action="append",
        default=[],
        metavar=("NAME", "A", "B", "TEST_SET"),
        help="one comparison; repeat for more",
    )
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--bucket-edges", required=True, type=int, nargs="+")
    parser.add_argument("--min-bucket-sentences", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--seed-variance-out",
        type=Path,
        help="the per-variant seed-variance table (default: beside --out)",
    )
    args = parser.parse_args(argv)
    table, variances = compare(
        [tuple(pair) for pair in args.pair],
        args.runs_dir,
        args.runs,
        args.data_dir,
        args.src,
        args.tgt,
        edges=args.bucket_edges,
        min_bucket_sentences=args.min_bucket_sentences,
        resamples=args.resamples,
        seed=args.seed,
    )
    variance_out = args.seed_variance_out or args.out.with_name("seed_variance.csv")
    for path, frame in ((args.out, table), (variance_out, variances)):
        path.parent.mkdir(parents=True, exist_ok=True)
        frame.to_csv(path, index=False)
        print(f"{len(frame)} rows -> {path}")


if __name__ == "__main__":
    main()
