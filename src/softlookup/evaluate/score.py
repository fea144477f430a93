"""Score translations with sacrebleu: BLEU and chrF with signatures, per source-length bucket,
with 95% bootstrap confidence intervals (sacrebleu's own resampling, cut to the metric's range:
sacrebleu's mean +- half-width reaches below 0 for a BLEU near 0).

A run's scores.<test set>.csv has the columns `tables.SCORE_FIELDS` (the tidy scores table's are
`tables.SCORES_COLUMNS`, written by evaluate/collect.py); the source-length bucket labels are
data.buckets's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from ..data.buckets import ALL, buckets_of
from ..intervals import within
from ..tables import RANGES, SCORE_FIELDS


def corpus_scores(hyps: list[str], refs: list[str], n_bootstrap: int) -> list[dict]:
    """BLEU and chrF of one set of sentences, each with its bootstrap interval and signature."""
    rows = []
    for name, metric in (("bleu", BLEU()), ("chrf", CHRF())):
        score = metric.corpus_score(hyps, [refs], n_bootstrap=n_bootstrap)
        signature = str(metric.get_signature())
        detail = json.loads(score.format(width=4, signature=signature, is_json=True))
        # sacrebleu reports the bootstrap mean +- the half-width of its 95% interval; it omits
        # them when every resample scores 0
        mean = detail.get("confidence_mean", score.score)
        half_width = detail.get("confidence_var", 0.0)
        low, high = within((mean - half_width, mean + half_width), RANGES[name])
        rows.append(
            {
                "metric": name,
                "value": score.score,
                "ci_low": low,
                "ci_high": high,
                "n_sentences": len(hyps),
                "signature": signature,
            }
        )
    return rows


def score_test_set(
    test_set: str,
    sources: list[str],
    hyps: list[str],
    refs: list[str],
    *,
    edges: list[int],
    min_bucket_sentences: int,
    n_bootstrap: int,
) -> pd.DataFrame:
    if not len(sources) == len(hyps) == len(refs):
        raise ValueError(
            f"{test_set}: {len(sources)} sources, {len(hyps)} hypotheses, {len(refs)} references"
        )
    rows = [{"bucket": ALL, **row} for row in corpus_scores(hyps, refs, n_bootstrap)]
    buckets = pd.Series(buckets_of(sources, edges))
    for label, members in buckets.groupby(buckets).groups.items():
        if len(members) < min_bucket_sentences:
            continue
        picked = list(members)
        bucket_rows = corpus_scores(
            [hyps[i] for i in picked], [refs[i] for i in picked], n_bootstrap
        )
        rows += [{"bucket": label, **row} for row in bucket_rows if row["metric"] == "bleu"]
    return pd.DataFrame(rows).assign(test_set=test_set)[SCORE_FIELDS]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test-set", required=True)
    parser.add_argument("--source", required=True, type=Path)
    parser.add_argument("--hypotheses", required=True, type=Path)
    parser.add_argument("--references", required=True, type=Path)
    parser.add_argument("--bucket-edges", required=True, type=int, nargs="+")
    parser.add_argument("--min-bucket-sentences", type=int, default=20)
    parser.add_argument("--bootstrap", type=int, default=1000)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()
    lines = [
        p.read_text(encoding="utf-8").splitlines()
        for p in (args.source, args.hypotheses, args.references)
    ]
    table = score_test_set(
        args.test_set,
        *lines,
        edges=args.bucket_edges,
        min_bucket_sentences=args.min_bucket_sentences,
        n_bootstrap=args.bootstrap,
    )
    table.to_csv(args.out, index=False)
    print(table[table.bucket == ALL].to_string(index=False))


if __name__ == "__main__":
    main()
