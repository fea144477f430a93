"""Paired comparisons of two variants on the same test sentences -> results/tables/comparisons.csv.

    python -m softlookup.evaluate.compare --runs-dir results/runs --runs a-s1 a-s2 b-s1 b-s2
        --pair dot_vs_additive gru_dot gru_additive test_2016_flickr [--pair ...]
        --data-dir DIR --tgt en --src de --bucket-edges 0 10 20 --out comparisons.csv

A two-level paired bootstrap (seeds, then sentences; Koehn 2004 for the sentence level, sacrebleu's
`paired-bs` with one seed). Each of R draws
1. resamples the seeds with replacement: a paired comparison (both variants trained with the same
   seeds) draws the same seeds for both systems, otherwise each system draws from its own;
2. resamples the test sentences with replacement, the same sentences for every seed and both
   systems (independently per source-length bucket);
3. takes, per system, the mean over the drawn seeds of its corpus score on the drawn sentences.
The row's `delta` is B - A of the means over seeds on the whole set; `se` is the standard
deviation of the R drawn deltas (`se_a`, `se_b`: of each system's drawn mean), so seed variance is
in it; the 95% interval is delta +- 1.96 se and the two-sided p-value 2 Phi(-|delta| / se). One
normal rule for the interval, the p-value and any other threshold (the ledger tests margins and
adjusts families of tests with Holm's method on these same numbers), rather than percentiles of
the draws: with two or three seeds the draws are a mixture of a few bumps (one per combination of
drawn seeds), whose percentiles are ragged.
What two seeds give: the seed level has three outcomes (seed 1 twice, seed 2 twice, one of each),
so the draws spread at least from one seed's delta to the other's, and a difference whose seeds
disagree in sign gets an interval across zero. It does not make the interval conservative about
seeds: the spread of two seeds is an estimate with one degree of freedom, and resampling them
(divisor 2) halves the unbiased estimate of the seed variance. More seeds tighten both.

`seed_deltas` holds each seed's own B - A on the whole set as a JSON object {"<seed>": delta}
(paired comparisons only; "{}" otherwise): `json.loads(row.seed_deltas)` in a pandas reader.
Measures: corpus BLEU and chrF (sacrebleu's own per-sentence sufficient statistics, so R = 1000 is
fast); `length_ratio`, hypothesis / reference length in BLEU's tokens (its brevity ratio); and
`empty_share`, the share of empty hypotheses. BLEU is compared on the whole test set and per
source-length bucket, the others on the whole set. Rows of metric `bleu_share` (bucket: a longer
bucket) compare the share of its shortest-bucket BLEU each system keeps on that bucket (the D1
length claim): per seed and draw, BLEU of the bucket / BLEU of the shortest bucket, on the same
drawn seeds.

Every pair is compared at every training-budget point its runs kept (column `epoch`: k, the
weights after k epochs, see softlookup.train; "final", the runs' models).
A pair naming a variant without trained runs (not in --runs, or none finished "ok") is skipped,
and the log says so.
"""

from __future__ import annotations

import argparse
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from ..data.buckets import ALL, bucket_order, buckets_of
from ..rundir import read_meta, read_run_config, run_status
from .score import FINAL

COLUMNS = [
    "comparison",
    "system_a",
    "system_b",
    "test_set",
    "epoch",
    "bucket",
    "metric",
    "mean_a",
    "mean_b",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "se",
    "se_a",
    "se_b",
    "seed_deltas",
    "seeds",
    "n_sentences",
    "method",
]
Z95 = NormalDist().inv_cdf(0.975)  # 1.96: the 95% interval is delta +- Z95 * se


@dataclass(frozen=True)
class Measure:
    """A corpus measure from per-sentence sufficient statistics (summing rows = corpus)."""

    sentence_stats: Callable[[list[str], list[str]], np.ndarray]  # hyps, refs -> (N, k)
    corpus_value: Callable[[np.ndarray], float]  # summed statistics (k,) -> the corpus value


def sacrebleu_measure(metric_class) -> Measure:
    """sacrebleu's own statistics and corpus score (BLEU, chrF)."""

    def stats(hyps: list[str], refs: list[str]) -> np.ndarray:
        return np.asarray(metric_class()._extract_corpus_statistics(hyps, [refs]), np.float64)

    metric = metric_class()
    return Measure(stats, lambda summed: metric._compute_score_from_stats(summed.tolist()).score)


def length_stats(hyps: list[str], refs: list[str]) -> np.ndarray:
    """(N, 2): hypothesis and reference length in BLEU's tokens (its first two statistics)."""
    return sacrebleu_measure(BLEU).sentence_stats(hyps, refs)[:, :2]


def empty_stats(hyps: list[str], refs: list[str]) -> np.ndarray:
    """(N, 2): 1 for an empty hypothesis, and 1 per sentence."""
    return np.array([[float(not hyp.strip()), 1.0] for hyp in hyps]).reshape(-1, 2)


def share(summed: np.ndarray) -> float:
    return float(summed[0] / summed[1]) if summed[1] > 0 else float("nan")


MEASURES = {
    "bleu": sacrebleu_measure(BLEU),
    "chrf": sacrebleu_measure(CHRF),
    "length_ratio": Measure(length_stats, share),
    "empty_share": Measure(empty_stats, share),
}
PER_BUCKET = {"bleu"}  # as in scores.csv: the other measures on whole test sets only


@dataclass(frozen=True)
class SeedScores:
    """One system's score per seed: on the whole set (S,) and in each sentence draw (S, R)."""

    observed: np.ndarray
    drawn: np.ndarray


def draw_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """(R, n): how often each sentence is drawn in each bootstrap sample."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n), dtype=np.float64)
    np.add.at(counts, (np.arange(resamples)[:, None], picks), 1.0)
    return counts


def draw_seeds(seeds_a: int, seeds_b: int, paired: bool, resamples: int,
               seed: int | np.random.SeedSequence):  # fmt: skip
    """(R, S_a) and (R, S_b): which seeds (indices) each draw takes, with replacement; a paired
    comparison draws the same seeds for both systems."""
    rng = np.random.default_rng(seed)
    picks_a = rng.integers(0, seeds_a, size=(resamples, seeds_a))
    return picks_a, picks_a if paired else rng.integers(0, seeds_b, size=(resamples, seeds_b))


def seed_scores(measure: Measure, systems: list[list[str]], refs: list[str],
                counts: np.ndarray) -> SeedScores:  # fmt: skip
    """Each seed's score: systems holds one list of hypotheses per seed, aligned with refs;
    counts (R, N) from draw_counts."""
    stats = [measure.sentence_stats(hyps, refs) for hyps in systems]
    observed = [measure.corpus_value(s.sum(0)) for s in stats]
    drawn = [[measure.corpus_value(row) for row in counts @ s] for s in stats]
    return SeedScores(np.asarray(observed, np.float64), np.asarray(drawn, np.float64))


def seed_mean(scores: SeedScores, picks: np.ndarray) -> np.ndarray:
    """(R,): in each draw, the mean over the drawn seeds of the drawn score."""
    return np.take_along_axis(scores.drawn, picks.T, axis=0).mean(axis=0)


def spread(drawn: np.ndarray) -> float:
    finite = drawn[np.isfinite(drawn)]
    return float(np.std(finite, ddof=1)) if len(finite) > 1 else float("nan")


def doubled_tail(z: float) -> float:
    """2 Phi(-z), from erfc: 1 + erf(-z) in NormalDist().cdf cancels to 0 beyond z ~ 8.3, which
    printed a clear difference's p as 0."""
    return math.erfc(z / math.sqrt(2))


def p_text(p_value: float) -> str:
    """A p-value as a table cell gives it: '< 0.001' below a thousandth, else three decimals
    (the p_value columns keep the exact value)."""
    return "< 0.001" if p_value < 0.001 else f"{p_value:.3f}"


def stated_p(p_value: float) -> str:
    """A p-value as a sentence states it: 'p = 0.043', 'p < 0.001'."""
    cell = p_text(p_value)
    return f"p {cell}" if cell.startswith("<") else f"p = {cell}"


def two_sided_p(delta: float, se: float) -> float:
    """2 Phi(-|delta| / se); a difference of exactly 0 with no spread has p = 1."""
    if not (np.isfinite(delta) and np.isfinite(se)):
        return float("nan")
    if se == 0:
        return 1.0 if delta == 0 else 0.0
    return doubled_tail(abs(delta) / se)


def summarise(a: SeedScores, b: SeedScores, picks: tuple[np.ndarray, np.ndarray],
              seed_labels: list[int] | None) -> dict:  # fmt: skip
    """The row's statistics: means over seeds, delta = B - A, its standard error over the
    two-level draws, 95% interval and p-value, each system's standard error, and the per-seed
    deltas of a paired comparison (seed_labels: its seeds, in order; None when unpaired)."""
    mean_a, mean_b = float(a.observed.mean()), float(b.observed.mean())
    drawn_a, drawn_b = seed_mean(a, picks[0]), seed_mean(b, picks[1])
    delta, se = mean_b - mean_a, spread(drawn_b - drawn_a)
    per_seed = {} if seed_labels is None else {
        str(label): round(float(db - da), 6)
        for label, da, db in zip(seed_labels, a.observed, b.observed)
    }  # fmt: skip
    return {
        "mean_a": mean_a,
        "mean_b": mean_b,
        "delta": delta,
        "ci_low": delta - Z95 * se,
        "ci_high": delta + Z95 * se,
        "p_value": two_sided_p(delta, se),
        "se": se,
        "se_a": spread(drawn_a),
        "se_b": spread(drawn_b),
        "seed_deltas": json.dumps(per_seed),
    }


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
        variant = config.get("variant") or run.rsplit("-s", 1)[0]
        found.setdefault(variant, {})[int(config["seed"])] = run
    return found


def hypotheses_file(run_dir: Path, test_set: str, tgt: str, point: str) -> Path:
    """The run's translations of `test_set` by its final model, or by its weights at budget
    point k (ladder/hyp.e<k>.<test set>.<tgt>)."""
    if point == FINAL:
        return run_dir / f"hyp.{test_set}.{tgt}"
    return run_dir / "ladder" / f"hyp.e{point}.{test_set}.{tgt}"


def read_hypotheses(runs_dir: Path, runs: list[str], test_set: str, tgt: str,
                    point: str = FINAL) -> list[list[str]]:
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
    return SeedScores(ratio(long.observed, short.observed), ratio(long.drawn, short.drawn))


def compare_pair(name: str, a: str, b: str, test_set: str, hyps_a, hyps_b, sources, refs, *,
                 seed_labels: list[int] | None, edges, min_bucket_sentences: int,
                 resamples: int, seed: int) -> list[dict]:  # fmt: skip
    """Rows of one comparison at one budget point: every measure of the whole test set, BLEU per
    source-length bucket, and the share of the shortest bucket's BLEU kept per longer bucket.
    hyps_a, hyps_b: one list of hypotheses per seed; seed_labels: the seeds of a paired
    comparison, in that order (None: the systems' seeds differ, drawn independently)."""
    groups = length_groups(sources, edges, min_bucket_sentences)
    child = np.random.SeedSequence(seed).spawn(1)[0]  # seed draws apart from sentence draws
    picks = draw_seeds(len(hyps_a), len(hyps_b), seed_labels is not None, resamples, child)
    method = (
        f"two-level paired bootstrap, {resamples} draws of the seeds"
        f" ({'the same for both systems' if seed_labels is not None else 'per system'}) then"
        " the sentences (of each bucket); statistic: B - A of the mean over seeds;"
        f" interval: delta +- {Z95:.2f} se"
    )
    common = {"comparison": name, "system_a": a, "system_b": b, "test_set": test_set}
    rows, bleu = [], {}  # bleu: bucket -> (A's, B's) SeedScores
    for offset, (bucket, members) in enumerate(groups.items()):
        counts = draw_counts(len(members), resamples, seed + offset)  # independent per bucket
        picked_refs = [refs[i] for i in members]
        for metric, measure in MEASURES.items():
            if bucket != ALL and metric not in PER_BUCKET:
                continue
            sides = [seed_scores(measure, [[h[i] for i in members] for h in hyps], picked_refs,
                                 counts) for hyps in (hyps_a, hyps_b)]  # fmt: skip
            if metric == "bleu":
                bleu[bucket] = sides
            rows.append({**common, "bucket": bucket, "metric": metric,
                         **summarise(*sides, picks, seed_labels), "n_sentences": len(members),
                         "method": method})  # fmt: skip
    # length retention (D1): BLEU of each longer bucket as a share of the shortest bucket's
    buckets = [label for label in groups if label != ALL]
    for bucket in buckets[1:]:
        sides = [kept_share(long, short) for long, short in zip(bleu[bucket], bleu[buckets[0]])]
        rows.append({**common, "bucket": bucket, "metric": "bleu_share",
                     **summarise(*sides, picks, seed_labels), "n_sentences": len(groups[bucket]),
                     "method": f"{method}; share: BLEU of this bucket / BLEU of bucket"
                               f" {buckets[0]}, per seed and draw"})  # fmt: skip
    return rows


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
) -> pd.DataFrame:
    """Every pair at every budget point its runs share (column `epoch`; "final": the models)."""
    by_variant = variant_runs(runs_dir, runs)
    rows = []
    for name, a, b, test_set in pairs:
        missing = [v for v in (a, b) if v not in by_variant]
        if missing:
            print(f"comparison {name}: skipped, no trained runs of {', '.join(missing)}")
            continue
        seeds_a, seeds_b = by_variant[a], by_variant[b]
        shared = sorted(set(seeds_a) & set(seeds_b))  # pair seed with seed when possible
        used_a, used_b = (shared, shared) if shared else (sorted(seeds_a), sorted(seeds_b))
        runs_a, runs_b = [seeds_a[s] for s in used_a], [seeds_b[s] for s in used_b]
        sources = (data_dir / f"{test_set}.{src}").read_text(encoding="utf-8").splitlines()
        refs = (data_dir / f"{test_set}.{tgt}").read_text(encoding="utf-8").splitlines()
        seeds = len(used_a) if shared else f"{len(used_a)}/{len(used_b)}"
        points = shared_points(runs_dir, runs_a + runs_b)
        for point in points:
            pair_rows = compare_pair(
                name, a, b, test_set,
                read_hypotheses(runs_dir, runs_a, test_set, tgt, point),
                read_hypotheses(runs_dir, runs_b, test_set, tgt, point),
                sources, refs, seed_labels=shared or None, edges=edges,
                min_bucket_sentences=min_bucket_sentences, resamples=resamples, seed=seed,
            )  # fmt: skip
            rows += [{**row, "epoch": point, "seeds": seeds} for row in pair_rows]
        print(f"comparison {name}: {b} vs {a} on {test_set}, seeds {seeds}, points {points}")
    return pd.DataFrame(rows, columns=COLUMNS)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs-dir", required=True, type=Path)
    parser.add_argument("--runs", nargs="*", default=[], help="run names (directories)")
    parser.add_argument(
        "--pair", nargs=4, action="append", default=[],
        metavar=("NAME", "A", "B", "TEST_SET"), help="one comparison; repeat for more",
    )  # fmt: skip
    parser.add_argument("--data-dir", required=True, type=Path)
    parser.add_argument("--src", required=True)
    parser.add_argument("--tgt", required=True)
    parser.add_argument("--bucket-edges", required=True, type=int, nargs="+")
    parser.add_argument("--min-bucket-sentences", type=int, default=20)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args(argv)
    table = compare(
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
    args.out.parent.mkdir(parents=True, exist_ok=True)
    table.to_csv(args.out, index=False)
    print(f"{len(table)} rows -> {args.out}")


if __name__ == "__main__":
    main()
