"""LaTeX for the whole report: escaping, macro names and numbers.

The facts and the template filters (report.render) use these helpers and no others, so a string
is escaped one way, a number written one way and a macro named one way everywhere. Text that is
LaTeX already is a `Tex`: the templates print it as it is and escape every other string.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from ..formats import unsigned_zero

# the template syntax of paper/sections/ (LaTeX-friendly Jinja delimiters): report.render and
# report.wording read the same templates with it
TEMPLATE_SYNTAX = {
    "block_start_string": r"\BLOCK{",
    "block_end_string": "}",
    "variable_start_string": r"\VAR{",
    "variable_end_string": "}",
    "comment_start_string": r"\#{",
    "comment_end_string": "}",
    "trim_blocks": True,
    "lstrip_blocks": True,
}

DIGIT_WORDS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]
SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
    "±": r"\ensuremath{\pm}",
    "×": r"\ensuremath{\times}",
    "≤": r"\ensuremath{\le}",
    "≥": r"\ensuremath{\ge}",
    "≈": r"\ensuremath{\approx}",
    "√": r"\ensuremath{\surd}",
    "→": r"\ensuremath{\to}",
    "–": "--",
    "—": "---",
}
SCIENTIFIC = re.compile(r"(?<![\w.])(-?\d+(?:\.\d+)?)e([+-]?)0*(\d+)(?![\w.])")
OPTION = re.compile(r"--(?=[A-Za-z])")  # a command-line option, which LaTeX would set as an en dash
VERDICT_STYLE = {
    "reproduced": r"\textbf{reproduced}",
    "partly": r"\textit{partly}",
    "not reproduced": r"\textbf{not reproduced}",
    "inconclusive": r"\textit{inconclusive}",
    "pending": "pending",
}


PLACEHOLDER_WORDS = {"not measured": "without a measurement"}  # never in a sentence or a cell


class Tex(str):
    """A string that is LaTeX already (escaped, or written as LaTeX): printed as it is."""


def escape(text: object) -> Tex:
    """Text safe in LaTeX: specials escaped, '->' an arrow, 1.5e-07 typeset as 1.5 x 10^-7
    (and a producer's placeholder such as 'not measured' worded as pending evidence)."""
    text = str(text).replace("->", "→").replace("+-", "±")
    for placeholder, words in PLACEHOLDER_WORDS.items():
        text = text.replace(placeholder, words)
    text = OPTION.sub("\0", text)  # kept apart from an en dash, which becomes -- below
    escaped = "".join(SPECIAL.get(char, char) for char in text).replace("\0", "-{}-")
    return Tex(
        SCIENTIFIC.sub(
            lambda m: rf"\ensuremath{{{m[1]}\times10^{{{'-' if m[2] == '-' else ''}{m[3]}}}}}",
            escaped,
        )
    )


def tex(text: object) -> Tex:
    """`text` as LaTeX: a Tex as it is (a label's $d_k = 128$ stays math), anything else escaped."""
    return text if isinstance(text, Tex) else escape(text)


def macro_name(*parts: object) -> str:
    """A LaTeX macro name from words: ('bleu', 'gru_additive-s1') -> 'BleuGruAdditiveSOne'.

    Each word is capitalised (the rest of it kept: 'A1' -> 'AOne', 'LastCross' stays), digits
    are spelled out and every other character is dropped: LaTeX macro names take letters only.
    """
    words = re.split(r"[^A-Za-z0-9]+", " ".join(str(part) for part in parts))
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    return re.sub(r"\d", lambda m: DIGIT_WORDS[int(m.group())], name)


def missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float, digits: int = 1, sign: bool = False) -> Tex:
    """A number for the text: thousands separated, `digits` decimals (BLEU 0.02 reads 0.0),
    with its sign when `sign` (+1.50); an unknown one reads '--'."""
    if missing(value):
        return Tex("--")
    return Tex(unsigned_zero(f"{float(value):{'+' if sign else ''},.{digits}f}"))


def small(value: float) -> Tex:
    """An error or a tiny time in scientific notation: 1.2e-06 -> 1.2 x 10^-6; 0 -> 0."""
    return Tex("0") if float(value) == 0 else escape(f"{float(value):.1e}")


def interval(value: float, low: float, high: float, digits: int = 1, sign: bool = False) -> Tex:
    """'23.4 [21.0, 25.9]' ('+1.50 [+0.60, +2.40]' with `sign`); without an interval, the
    value alone."""
    text = number(value, digits, sign)
    if missing(low) or missing(high):
        return text
    return Tex(f"{text} [{number(low, digits, sign)}, {number(high, digits, sign)}]")


def words_list(items: Sequence[str], conjunction: str = "and", separator: str = ", ") -> str:
    """['a'] -> 'a'; ['a', 'b'] -> 'a and b'; ['a', 'b', 'c'] -> 'a, b and c'."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return separator.join(items[:-1]) + f" {conjunction} " + items[-1]


def number_ranges(numbers: Sequence[int]) -> list[str]:
    """Sorted integers with each run of three or more consecutive ones as a range:
    [1, 2, 5, 6, 7, 8] -> ['1', '2', '5--8']."""
    runs: list[list[int]] = []
    for number in sorted(numbers):
        if runs and number == runs[-1][-1] + 1:
            runs[-1].append(number)
        else:
            runs.append([number])
    return [
        f"{run[0]}--{run[-1]}" if len(run) >= 3 else str(number)
        for run in runs
        for number in ([run[0]] if len(run) >= 3 else run)
    ]


def seeds_phrase(numbers: Sequence[int]) -> str:
    """'seed 1', 'seeds 1 and 2', 'seeds 1, 2 and 5', 'seeds 3--12' (number_ranges); '' for none."""
    items = number_ranges(numbers)
    if not items:
        return ""
    noun = "seed" if len(items) == 1 and "--" not in items[0] else "seeds"
    return f"{noun} {words_list(items)}"


def name(text: object) -> Tex:
    """A run, model or file name in running text: escaped, and breakable after _ . - /"""
    escaped = escape(text)
    for mark in (r"\_", ".", "-", "/"):
        escaped = escaped.replace(mark, mark + r"\allowbreak{}")
    return Tex(escaped)
