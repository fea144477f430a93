"""Score translations with sacrebleu: BLEU and chrF with signatures, per source-length bucket,
with 95% bootstrap confidence intervals (sacrebleu's own resampling).

Owns the columns of the tidy scores table (`COLUMNS`, written by evaluate/collect.py); the
source-length bucket labels are data.buckets's.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd
from sacrebleu.metrics import BLEU, CHRF

from ..data.buckets import ALL, buckets_of

# results/tables/scores.csv: one row per run x test set x bucket x metric; every setting a column
SETTING_COLUMNS = [
    "run",
    "variant",
    "base_model",
    "arch",
    "attention",
    "d_model",
    "heads",
    "d_k",
    "scale",
    "causal_mask",
    "padding_mask",
    "max_train_words",
    "epochs",
    "seed",
    "parameters",
    "status",
]
# one run's scores.<test_set>.csv (the run's columns are added by collect)
SCORE_FIELDS = [
    "test_set",
    "bucket",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n_sentences",
    "signature",
]
# epoch: the training-budget point the scores belong to ("final": the run's model; "k": its
# weights after k epochs, see softlookup.train); readers of final results take epoch == FINAL
COLUMNS = [*SETTING_COLUMNS, "epoch", *SCORE_FIELDS, "device", "train_seconds", "tokens_per_s"]
FINAL = "final"


def final_point(table):
    """The rows of a scores or comparisons table that belong to the final models (a table from
    before budget points, without an `epoch` column, holds only those)."""
    if "epoch" not in table.columns:
        return table
    return table[table["epoch"].astype(str) == FINAL].reset_index(drop=True)


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
        rows.append(
            {
                "metric": name,
                "value": score.score,
                "ci_low": mean - half_width,
                "ci_high": mean + half_width,
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
