"""Source-length buckets: the labels prepare counts test sentences by, score groups BLEU by and
the report orders its rows by ('1-10', '11-20', '>20', and "all" for a whole test set).

A sentence's length is its number of whitespace-separated words; `edges` [0, 10, 20] give the
buckets 1-10, 11-20 and >20. Every reader imports the labels from here.
"""

from __future__ import annotations

import itertools

ALL = "all"  # the bucket label of a whole test set


def bucket_label(words: int, edges: list[int]) -> str:
    """'1-10', '11-20', ..., '>50' for edges [0, 10, 20, 50]."""
    for low, high in itertools.pairwise(edges):
        if low < words <= high:
            return f"{low + 1}-{high}"
    return f">{edges[-1]}"


def bucket_labels(edges: list[int]) -> list[str]:
    """Every label of `edges`, shortest first (without "all")."""
    return [f"{low + 1}-{high}" for low, high in itertools.pairwise(edges)] + [f">{edges[-1]}"]


def bucket_start(label: str) -> float:
    """Where a bucket begins, for ordering: '11-15' -> 11, '>60' -> 61, 'all' -> inf."""
    if label == ALL:
        return float("inf")
    if label.startswith(">"):
        return float(label[1:]) + 1
    return float(label.split("-")[0])


def bucket_order(labels) -> list[str]:
    """Distinct labels sorted shortest first, "all" last."""
    return sorted(set(labels), key=bucket_start)


def buckets_of(sources: list[str], edges: list[int]) -> list[str]:
    """The bucket label of each source sentence (its length in whitespace-separated words)."""
    return [bucket_label(len(source.split()), edges) for source in sources]
