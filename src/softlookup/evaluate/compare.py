"""Paired comparisons of two variants on the same test sentences -> results/tables/comparisons.csv.

    python -m softlookup.evaluate.compare --runs-dir results/runs --runs a-s1 a-s2 b-s1 b-s2
        --pair dot_vs_additive gru_dot gru_additive test_2016_flickr [--pair ...]
        --data-dir DIR --tgt en --src de --bucket-edges 0 10 20 --out comparisons.csv

Paired bootstrap resampling (Koehn 2004; sacrebleu's `paired-bs` for one seed): draw the test
sentences with replacement R times; in each draw score *every* seed's hypotheses of both systems on
the same drawn sentences. The statistic is the mean over seeds of corpus BLEU (or chrF) of B minus
that of A; its interval is the 2.5-97.5 percentile of the R draws, its two-sided p-value the share
of mean-centred draws at least as far from 0 as the observed delta (with the +1 correction). The
sentences of each source-length bucket are resampled the same way (independently per bucket) for
the per-bucket rows; rows of metric `bleu_share` (bucket: a longer bucket) compare the share of
its shortest-bucket BLEU each system keeps on that bucket (the D1 length claim), on the same draws.
Corpus scores of a draw come from per-sentence sufficient statistics (sacrebleu's own), so R = 1000
is fast.

Every pair is compared at every training-budget point its runs kept (column `epoch`: k, the
weights after k epochs, see softlookup.train; "final", the runs' models).
A pair naming a variant without trained runs (not in --runs, or none finished "ok") is skipped,
and the log says so.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from ..models.checkpoint import read_meta, read_run_config, run_status
from .score import ALL, FINAL, bucket_order, buckets_of

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
    "seeds",
    "n_sentences",
    "method",
]
METRICS = {"bleu": BLEU, "chrf": CHRF}


def sentence_stats(metric, hyps: list[str], refs: list[str]) -> np.ndarray:
    """(N, k) per-sentence sufficient statistics of `metric` (summing rows = corpus stats)."""
    return np.asarray(metric._extract_corpus_statistics(hyps, [refs]), dtype=np.float64)


def corpus_score(metric, stats: np.ndarray) -> float:
    """Corpus score from summed statistics (k,)."""
    return metric._compute_score_from_stats(stats.tolist()).score


def draw_counts(n: int, resamples: int, seed: int) -> np.ndarray:
    """(R, n): how often each sentence is drawn in each bootstrap sample."""
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, n, size=(resamples, n))
    counts = np.zeros((resamples, n), dtype=np.float64)
    np.add.at(counts, (np.arange(resamples)[:, None], picks), 1.0)
    return counts


def seed_mean_scores(metric, systems: list[list[str]], refs: list[str], counts: np.ndarray):
    """Mean over seeds of corpus score: observed, and in each bootstrap draw (R,).

    systems: one list of hypotheses per seed, aligned with refs; counts (R, N) from draw_counts.
    """
    stats = [sentence_stats(metric, hyps, refs) for hyps in systems]
    observed = float(np.mean([corpus_score(metric, s.sum(0)) for s in stats]))
    drawn = np.mean([[corpus_score(metric, row) for row in counts @ s] for s in stats], axis=0)
    return observed, drawn


def summarise(observed_a: float, drawn_a, observed_b: float, drawn_b) -> dict:
    """delta = B - A, its 2.5-97.5 percentile interval over the draws, and the two-sided p-value
    of the mean-centred draws (+1 correction)."""
    delta, drawn = observed_b - observed_a, np.asarray(drawn_b) - np.asarray(drawn_a)
    finite = drawn[np.isfinite(drawn)]
    if not len(finite) or not np.isfinite(delta):
        nan = float("nan")
        return {"mean_a": observed_a, "mean_b": observed_b, "delta": delta, "ci_low": nan,
                "ci_high": nan, "p_value": nan}  # fmt: skip
    centred = finite - finite.mean()
    p_value = (np.sum(np.abs(centred) >= abs(delta)) + 1) / (len(finite) + 1)
    low, high = np.percentile(finite, [2.5, 97.5])
    return {
        "mean_a": observed_a,
        "mean_b": observed_b,
        "delta": delta,
        "ci_low": float(low),
        "ci_high": float(high),
        "p_value": float(p_value),
    }


def ratio(numerator, denominator):
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


def compare_pair(name: str, a: str, b: str, test_set: str, hyps_a, hyps_b, sources, refs, *,
                 edges, min_bucket_sentences: int, resamples: int, seed: int) -> list[dict]:
    """Rows of one comparison at one budget point: BLEU and chrF of the whole test set, BLEU per
    source-length bucket, and the share of the shortest bucket's BLEU kept per longer bucket."""
    labels = np.array(buckets_of(sources, edges))
    groups = {ALL: np.arange(len(refs))}
    for label in bucket_order(labels):
        members = np.flatnonzero(labels == label)
        if len(members) >= min_bucket_sentences:
            groups[label] = members
    method = (
        f"paired bootstrap, {resamples} resamples of the sentences (of each bucket), "
        "statistic: B - A of the mean over seeds of corpus score"
    )
    common = {"comparison": name, "system_a": a, "system_b": b, "test_set": test_set}
    rows = []
    bleu = {}  # bucket -> (observed_a, drawn_a, observed_b, drawn_b)
    for offset, (bucket, members) in enumerate(groups.items()):
        pick = members.tolist()
        counts = draw_counts(len(pick), resamples, seed + offset)  # independent per bucket
        for metric_name, metric_class in METRICS.items():
            if metric_name != "bleu" and bucket != ALL:
                continue  # as in scores.csv: chrF for whole test sets only
            picked_refs = [refs[i] for i in pick]
            side_a = seed_mean_scores(
                metric_class(), [[h[i] for i in pick] for h in hyps_a], picked_refs, counts
            )
            side_b = seed_mean_scores(
                metric_class(), [[h[i] for i in pick] for h in hyps_b], picked_refs, counts
            )
            if metric_name == "bleu":
                bleu[bucket] = (*side_a, *side_b)
            rows.append({**common, "bucket": bucket, "metric": metric_name,
                         **summarise(*side_a, *side_b), "n_sentences": len(pick),
                         "method": method})  # fmt: skip
    # length retention (D1): BLEU of each longer bucket as a share of the shortest bucket's
    buckets = [label for label in groups if label != ALL]
    for bucket in buckets[1:]:
        short, long = bleu[buckets[0]], bleu[bucket]
        rows.append({
            **common, "bucket": bucket, "metric": "bleu_share",
            **summarise(
                float(ratio(long[0], short[0])), ratio(long[1], short[1]),
                float(ratio(long[2], short[2])), ratio(long[3], short[3]),
            ),
            "n_sentences": len(groups[bucket]),
            "method": method.replace("statistic: B - A of the mean over seeds of corpus score",
                                     "statistic: B - A of (mean-over-seeds BLEU of this bucket"
                                     f" / that of bucket {buckets[0]}); buckets resampled"
                                     " independently"),
        })  # fmt: skip
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
                sources, refs, edges=edges, min_bucket_sentences=min_bucket_sentences,
                resamples=resamples, seed=seed,
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
