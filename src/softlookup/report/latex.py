"""The ledger as LaTeX: a longtable fragment (booktabs) and \\newcommand macros for the prose."""

from __future__ import annotations

import re

import pandas as pd

from ..claims.verdicts import VERDICTS

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
DIGIT_WORDS = ["Zero", "One", "Two", "Three", "Four", "Five", "Six", "Seven", "Eight", "Nine"]
COLUMNS_HEADING = r"Id & Claim & Expected (source) & Measured & Verdict\tabularnewline"
TABLE_HEAD = rf"""
\begingroup\footnotesize
\begin{{longtable}}{{@{{}}p{{0.04\linewidth}}p{{0.24\linewidth}}p{{0.21\linewidth}}p{{0.27\linewidth}}p{{0.11\linewidth}}@{{}}}}
\caption{{Claims ledger: each claim, the figure its source gives, what this pipeline measured, and
the verdict.}}\label{{tab:claims}}\\
\toprule
{COLUMNS_HEADING}
\midrule\endfirsthead
\toprule
{COLUMNS_HEADING}
\midrule\endhead
\bottomrule\endfoot
"""
VERDICT_STYLE = {
    "reproduced": r"\textbf{reproduced}",
    "partly": r"\textit{partly}",
    "not reproduced": r"\textbf{not reproduced}",
    "pending": "pending",
}


def escape(text: str) -> str:
    """Text safe in LaTeX: specials escaped, 1.5e-07 typeset as 1.5 x 10^-7."""
    text = str(text).replace("->", "→").replace("+-", "±")
    escaped = "".join(SPECIAL.get(char, char) for char in text)
    return SCIENTIFIC.sub(
        lambda m: rf"\ensuremath{{{m[1]}\times10^{{{'-' if m[2] == '-' else ''}{m[3]}}}}}",
        escaped,
    )


def macro_name(text: str) -> str:
    """Letters only, digits spelled out: 'A1' -> 'AOne'."""
    spelled = "".join(DIGIT_WORDS[int(c)] if c.isdigit() else c for c in text)
    return re.sub(r"[^A-Za-z]", "", spelled)


def claims_table(ledger: pd.DataFrame) -> str:
    """A longtable: id, claim, expected, measured, verdict; a second line with reason and source."""
    lines = TABLE_HEAD.strip().splitlines()
    for row in ledger.itertuples(index=False):
        cite = rf"\citet{{{row.cite}}}" if row.cite else escape(row.paper)
        cells = [
            escape(row.id),
            r"\raggedright " + escape(row.claim),
            r"\raggedright " + escape(row.expected),
            r"\raggedright " + escape(row.measured),
            r"\raggedright " + VERDICT_STYLE[row.verdict],
        ]
        lines.append(" & ".join(cells) + r"\tabularnewline")
        detail = (
            rf"\multicolumn{{4}}{{p{{0.87\linewidth}}}}{{\raggedright\scriptsize {cite};"
            rf" tolerance: {escape(row.tolerance)}; {escape(row.reason)};"
            rf" \texttt{{{escape(row.rule)}}}}}"
        )
        lines.append(rf" & {detail}\tabularnewline\addlinespace")
    lines += [r"\end{longtable}", r"\endgroup", ""]
    return "\n".join(lines)


def claims_macros(ledger: pd.DataFrame, numbers: dict[str, str]) -> str:
    """Verdict counts, one verdict macro per claim, and every number a check asked for."""
    counts = ledger.verdict.value_counts()
    macros = {"ClaimsTotal": str(len(ledger))}
    for name in VERDICTS:
        macros[f"Claims{macro_name(name.title())}"] = str(int(counts.get(name, 0)))
    for row in ledger.itertuples(index=False):
        macros[f"ClaimVerdict{macro_name(row.id)}"] = row.verdict
    macros.update(numbers)
    macros.update(
        EnvLedgerPython=ledger.python.iloc[0],
        EnvLedgerTorch=ledger.torch.iloc[0],
        EnvLedgerDevice=ledger.device.iloc[0],
    )
    body = [rf"\newcommand{{\{name}}}{{{escape(value)}}}" for name, value in macros.items()]
    return "% Written by softlookup.claims.ledger; do not edit.\n" + "\n".join(body) + "\n"
