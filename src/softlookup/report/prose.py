"""What every generated section shares: the claim groups, the figure rules, the `Paper` (study,
figures at hand, figure and verdict sentences) and the small helpers that word a comparison."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from . import latex
from .latex import escape, interval
from .study import Study, run_facts

GROUPS = [
    ("length", "Translation quality against source length", ["D1"], []),
    ("scores", "Score functions", ["D2"], []),
    ("scaling", "Scaling the scores", ["D3", "B2"], ["d_k", "scale"]),
    ("heads", "Number of heads", ["D5", "C1", "C3"], ["heads"]),
    ("masking", "Masking", ["D4"], ["causal_mask", "padding_mask"]),
]
FIGURE_RULES = {  # figure file stem -> the rule that draws it
    "bleu_by_length": "figure_scores",
    "training": "figure_training",
    "generation_steps": "figure_cost",
    "kernel_cost": "figure_cost",
    "spread": "probe_figures",
    "saturation": "probe_figures",
    "collapse": "probe_figures",
}


class Paper:
    """What the generators share: the study, the figures at hand, and the macros collected."""

    def __init__(self, study: Study, figures: dict[str, Path]):
        self.study = study
        self.figures = figures
        self.facts = run_facts(study)
        self.test_set = (study.test_sets() or [""])[0]

    def figure(self, stem: str, caption: str, width: str = r"\linewidth") -> str:
        """The figure if the workflow drew it; its caption names the rule and the file."""
        if stem not in self.figures:
            return ""
        rule = FIGURE_RULES.get(
            stem, "figure_alignment" if stem.startswith("alignment_") else "figure_scores"
        )
        where = (
            rf" Rule \texttt{{{escape(rule)}}}, \texttt{{{escape(f'results/figures/{stem}.pdf')}}}."
        )
        return latex.figure(f"figures/{stem}.pdf", caption + where, f"fig:{stem}", width)

    def verdict_sentence(self, claim_id: str) -> str:
        """'The ledger judges claim D1 (short): partly, because ...' or why it is missing."""
        claim = self.study.claim(claim_id)
        if not claim:
            return (
                f"Claim {claim_id} has no row in the claims ledger of this build, so it has no"
                " verdict here. "
            )
        short = claim.get("short") or claim.get("claim", "")
        named = escape(claim_id) + (
            f" ({escape(short)})" if isinstance(short, str) and short and len(short) < 90 else ""
        )
        verdict = str(claim.get("verdict", "pending"))
        reason = str(claim.get("reason", "") or "").replace("nan", "").strip()
        if verdict == "pending":  # say what is missing and why, in the ledger's words
            why = re.sub(
                r"^(?:(?:nothing measured yet|not measured in this configuration|"
                r"[^:;]*still pending|pending)\s*:\s*)+",
                "",
                reason,
            )
            why = why if len(why) < 220 else why[:217].rsplit(" ", 1)[0] + " ..."
            return (
                f"Claim {named} is pending in this build"
                + (f": {latex.name(why)}" if why else "")
                + ". "
            )
        text = f"The ledger judges claim {named}"
        headline = claim.get("measured")
        if isinstance(headline, str) and headline.strip():
            text += (
                f", measured {escape(headline if len(headline) < 120 else headline[:117] + '...')}"
            )
        text += rf": \emph{{{escape(verdict)}}}"
        if reason:  # the count of checks; the ledger and the appendix say which
            text += f" ({escape(reason.split(';')[0].split(':')[0])})"
        return text + ". "


# --------------------------------------------------------------------------- helpers


def bleu_text(row) -> str:
    """BLEU [interval]: one decimal, two below one BLEU (where one would read 0.0)."""
    digits = 1 if abs(row["value"]) >= 1 else 2
    return interval(row["value"], row["ci_low"], row["ci_high"], digits)


def overlap(a, b) -> bool:
    """Do the 95% intervals of two pooled rows overlap (or is one of them unknown)?"""
    values = [a["ci_low"], a["ci_high"], b["ci_low"], b["ci_high"]]
    if any(pd.isna(v) for v in values):
        return True
    return not (a["ci_high"] < b["ci_low"] or b["ci_high"] < a["ci_low"])


def comparison_word(a, b, higher: str = "higher", lower: str = "lower") -> str:
    """'higher' / 'lower' when the intervals separate, else a sentence part saying they overlap."""
    if overlap(a, b):
        return "not different within the 95\\% intervals from"
    return f"{higher} than" if a["value"] > b["value"] else f"{lower} than"


def loglog_slope(x, y) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    keep = (x > 0) & (y > 0)
    if keep.sum() < 2:
        return float("nan")
    return float(np.polyfit(np.log(x[keep]), np.log(y[keep]), 1)[0])


def section(title: str, label: str, body: list[str]) -> str:
    text = "\n\n".join(part.strip() for part in body if part and part.strip())
    return rf"\subsection{{{title}}}\label{{sec:{label}}}" + "\n" + text + "\n\\FloatBarrier\n"
