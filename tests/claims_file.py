"""The checks of config/claims.yaml as written (raw YAML), for tests of a measurement against the
threshold stated for it before any run; judging them is the ledger's (softlookup.claims)."""

from __future__ import annotations

from pathlib import Path

import yaml

CLAIMS = Path(__file__).resolve().parents[1] / "config" / "claims.yaml"


def checks(claim: str) -> list[dict]:
    """Every check of one claim, as written."""
    document = yaml.safe_load(CLAIMS.read_text())
    (entry,) = [entry for entry in document["claims"] if entry["id"] == claim]
    return entry["checks"]


def check(claim: str, **keys: object) -> dict:
    """The one check of `claim` whose keys hold these values (a `where` given as a dict matches
    when the check's `where` holds every setting)."""
    found = [
        raw
        for raw in checks(claim)
        if all(
            raw.get(name) == wanted
            if not isinstance(wanted, dict)
            else wanted.items() <= (raw.get(name) or {}).items()
            for name, wanted in keys.items()
        )
    ]
    assert len(found) == 1, (claim, keys, len(found))
    return found[0]


def decisive(claim: str) -> list[dict]:
    return [raw for raw in checks(claim) if raw.get("op", "approx") != "report"]
