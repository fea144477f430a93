"""The plain-text rendering of paper/sections/_wording.tex: the sentences checks.csv and
claims.csv carry in their `text` column, worded by the same template the paper renders as LaTeX.

The environment has report.render's delimiters and filter names, each writing plain text:
numbers in a check's format, p-values as compare.stated_p states them, emphasis dropped.
"""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import jinja2

from ..claims.checks.common import format_number
from ..evaluate.compare import stated_p
from .latex import words_list

TEMPLATES = Path(__file__).resolve().parents[3] / "paper" / "sections"
WORDING = "_wording.tex"


def _missing(value) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


FILTERS = {
    "figure": lambda value, fmt=".3g": "--" if _missing(value) else format_number(float(value),
                                                                                  fmt),
    "p_stated": lambda value: "p = --" if _missing(value) else stated_p(value),
    "emph": str,
    "text": str,
    "name": str,
    "words": lambda items, conjunction="and", separator=", ": words_list(
        [str(item) for item in items], conjunction, separator),
}


@cache
def environment(templates: Path = TEMPLATES) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        block_start_string=r"\BLOCK{",
        block_end_string="}",
        variable_start_string=r"\VAR{",
        variable_end_string="}",
        comment_start_string=r"\#{",
        comment_end_string="}",
        trim_blocks=True,
        lstrip_blocks=True,
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
