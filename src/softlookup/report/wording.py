"""The plain-text rendering of paper/sections/_wording.tex: the sentences checks.csv and
claims.csv carry in their `text` column, worded by the same template the paper renders as LaTeX.

    python -m softlookup.report.wording --claims results/claims/claims.csv \
        --checks results/claims/checks.csv   # fills both files' `text` column in place

The environment has report.render's delimiters and filter names, each writing plain text:
numbers in a check's format, p-values as formats.stated_p states them, emphasis dropped.
"""

from __future__ import annotations

import argparse
import math
from functools import cache
from pathlib import Path

import jinja2
import pandas as pd

from ..atomic import atomic_file
from ..formats import stated_p
from ..paths import TEMPLATES
from .facts.claims import check_of, claim_of
from .labels import check_words
from .latex import TEMPLATE_SYNTAX, words_list
from .render import figure_text

WORDING = "_wording.tex"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


FILTERS = {
    "figure": lambda value, fmt=".3g": "--" if _missing(value) else figure_text(float(value), fmt),
    "p_stated": lambda value: "p = --" if _missing(value) else stated_p(value),
    "emph": str,
    "text": str,
    "name": str,
    "tagged": lambda text, check: str(text),
    "check_words": check_words,
    "words": lambda items, conjunction="and", separator=", ": words_list(
        [str(item) for item in items], conjunction, separator
    ),
}


@cache
def environment(templates: Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        **TEMPLATE_SYNTAX,
        undefined=jinja2.StrictUndefined,
    )
    env.filters.update(FILTERS)
    return env


def _plain(text: object) -> str:
    """One line: the template's line breaks and runs of spaces as single spaces."""
    return " ".join(str(text).split())


def check_text(check, templates: Path = TEMPLATES) -> str:
    """A check (its checks.csv fields, `facts` a dict) as the paper words it, in plain text."""
    return _plain(environment(templates).get_template(WORDING).module.check_sentence(check))


def verdict_text(claim, templates: Path = TEMPLATES) -> str:
    """A claim (id, short, verdict, passed, decisive, checks) as the paper words its verdict."""
    return _plain(environment(templates).get_template(WORDING).module.verdict_sentence(claim))


def word_ledger(claims: pd.DataFrame, checks: pd.DataFrame) -> None:
    """Fill the `text` column of the ledger's two tables (read as text: cells kept as written)."""
    checks["text"] = [check_text(check_of(row)) for _, row in checks.iterrows()]
    claims["text"] = [
        verdict_text(claim_of(row, [r for _, r in checks[checks.claim_id == row["id"]].iterrows()]))
        for _, row in claims.iterrows()
    ]


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, required=True, help="claims.csv, rewritten")
    parser.add_argument("--checks", type=Path, required=True, help="checks.csv, rewritten")
    args = parser.parse_args(argv)
    claims, checks = (
        pd.read_csv(path, dtype=str, keep_default_na=False) for path in (args.claims, args.checks)
    )
    word_ledger(claims, checks)
    for table, path in ((claims, args.claims), (checks, args.checks)):
        with atomic_file(path) as partial:
            table.to_csv(partial, index=False)


if __name__ == "__main__":
    main()
