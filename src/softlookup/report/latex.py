"""LaTeX writing for the whole report: escaping, macro names, \\newcommand files, tables, numbers.

Every module that writes LaTeX (report.macros_*, report.sections) uses these helpers and no
others, so a string is escaped one way and a macro is named one way everywhere.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence

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
VERDICT_STYLE = {
    "reproduced": r"\textbf{reproduced}",
    "partly": r"\textit{partly}",
    "not reproduced": r"\textbf{not reproduced}",
    "pending": "pending",
}


PLACEHOLDER_WORDS = {"not measured": "without a measurement"}  # never in a sentence or a cell


def escape(text: object) -> str:
    """Text safe in LaTeX: specials escaped, '->' an arrow, 1.5e-07 typeset as 1.5 x 10^-7
    (and a producer's placeholder such as 'not measured' worded as pending evidence)."""
    text = str(text).replace("->", "→").replace("+-", "±")
    for placeholder, words in PLACEHOLDER_WORDS.items():
        text = text.replace(placeholder, words)
    escaped = "".join(SPECIAL.get(char, char) for char in text)
    return SCIENTIFIC.sub(
        lambda m: rf"\ensuremath{{{m[1]}\times10^{{{'-' if m[2] == '-' else ''}{m[3]}}}}}",
        escaped,
    )


def macro_name(*parts: object) -> str:
    """A LaTeX macro name from words: ('bleu', 'gru_additive-s1') -> 'BleuGruAdditiveSOne'.

    Each word is capitalised (the rest of it kept: 'A1' -> 'AOne', 'LastCross' stays), digits
    are spelled out and every other character is dropped: LaTeX macro names take letters only.
    """
    words = re.split(r"[^A-Za-z0-9]+", " ".join(str(part) for part in parts))
    name = "".join(word[:1].upper() + word[1:] for word in words if word)
    return re.sub(r"\d", lambda m: DIGIT_WORDS[int(m.group())], name)


def newcommand(name: str, text: object) -> str:
    """One \\newcommand line; `text` is LaTeX already (escape free text first)."""
    if not re.fullmatch(r"[A-Za-z]+", name):
        raise ValueError(f"not a LaTeX macro name: {name!r}")
    return rf"\newcommand{{\{name}}}{{{text}}}"


def macro_file(macros: Mapping[str, object], writer: str) -> str:
    """A generated .tex of \\newcommand lines, headed by the module that wrote it."""
    lines = [f"% Written by {writer}; do not edit.", *(newcommand(n, t) for n, t in macros.items())]
    return "\n".join(lines) + "\n"


def missing(value: object) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: float, digits: int = 1) -> str:
    """A number for the text: thousands separated, `digits` decimals (BLEU 0.02 reads 0.0)."""
    return f"{float(value):,.{digits}f}"


def small(value: float) -> str:
    """An error or a tiny time in scientific notation: 1.2e-06 -> 1.2 x 10^-6; 0 -> 0."""
    return "0" if float(value) == 0 else escape(f"{float(value):.1e}")


def interval(value: float, low: float, high: float, digits: int = 1) -> str:
    """'23.4 [21.0, 25.9]'; the interval is left out when it is unknown."""
    text = number(value, digits)
    if missing(low) or missing(high):
        return text
    return f"{text} [{number(low, digits)}, {number(high, digits)}]"


def words_list(items: Sequence[str], conjunction: str = "and") -> str:
    """['a'] -> 'a'; ['a', 'b'] -> 'a and b'; ['a', 'b', 'c'] -> 'a, b and c'."""
    items = list(items)
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + f" {conjunction} " + items[-1]


def count_words(n: int) -> str:
    """Small counts as words, larger ones as numerals (as in running text)."""
    names = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    return names[n] if 0 <= n < len(names) else f"{n:,}"


def tabular(
    header: Sequence[str],
    rows: Iterable[Sequence[str]],
    align: str,
    *,
    long: bool = False,
    caption: str = "",
    label: str = "",
    size: str = "",
) -> str:
    """A booktabs table (cells are LaTeX already); long=True gives a longtable with its caption
    (which repeats its header on every page); otherwise a bare tabular to place in a float."""
    head = " & ".join(header) + r"\tabularnewline"
    body = [" & ".join(cells) + r"\tabularnewline" for cells in rows]
    if not long:
        return "\n".join(
            [
                rf"\begin{{tabular}}{{{align}}}",
                r"\toprule",
                head,
                r"\midrule",
                *body,
                r"\bottomrule",
                r"\end{tabular}",
                "",
            ]
        )
    lines = [
        r"\begingroup" + (rf"\{size}\setlength{{\tabcolsep}}{{3pt}}" if size else ""),
        rf"\begin{{longtable}}{{{align}}}",
    ]
    if caption:
        lines.append(rf"\caption{{{caption}}}" + (rf"\label{{{label}}}" if label else "") + r"\\")
    lines += [
        r"\toprule",
        head,
        r"\midrule\endfirsthead",
        r"\toprule",
        head,
        r"\midrule\endhead",
        r"\bottomrule\endfoot",
        *body,
        r"\end{longtable}",
        r"\endgroup",
        "",
    ]
    return "\n".join(lines)


def figure(path: str, caption: str, label: str, width: str = r"\linewidth") -> str:
    """A figure float here-or-top (the section's \\FloatBarrier keeps it in its section)."""
    return "\n".join(
        [
            r"\begin{figure}[htbp]",
            r"\centering",
            rf"\includegraphics[width={width}]{{{path}}}",
            rf"\caption{{{caption}}}",
            rf"\label{{{label}}}",
            r"\end{figure}",
            "",
        ]
    )


def name(text: object) -> str:
    """A run, model or file name in running text: escaped, and breakable after _ . - /"""
    escaped = escape(text)
    for mark in (r"\_", ".", "-", "/"):
        escaped = escaped.replace(mark, mark + r"\allowbreak{}")
    return escaped
