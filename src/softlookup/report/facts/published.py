"""What the paper tells a reader about a claim beyond the ledger's own fields: what the essay
says, what its primary source published, the expectation in the essay's sense, and the
subsection that reports it (paper/published.yaml, keyed by claim id; every field optional).

The ledger's `expected` and `source` are written for its checks; where they misstate the claim
for a reader (a short expectation that reads another way, an essay that is not the one making
the claim), this file's fields win in the paper's tables.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from ...paths import PUBLISHED
from ..study import read_published

FIELDS = ("essay", "essays", "expected", "published", "section", "scope", "waits")


@cache
def read(path: Path = PUBLISHED) -> dict[str, dict]:
    """{claim id: {field: value}}; an unknown field is an error naming the claim and the field."""
    claims = read_published(path)
    for claim_id, fields in claims.items():
        unknown = sorted(set(fields) - set(FIELDS))
        if unknown:
            raise ValueError(f"{path}: claim {claim_id}: unknown field(s) {unknown}, not {FIELDS}")
    return claims


def of(claim_id: str) -> dict:
    """Every field of one claim, None where the file gives none."""
    given = read().get(claim_id, {})
    return {name: given.get(name) for name in FIELDS}
