"""One rule per kind of number, for every place a reader sees one (figures now; the prose can read
the same): BLEU and chrF with one decimal, a share and a seed SD with two, a p-value as the
tables state it, a time with its unit, and an interval of any kind in brackets. Plain text
(matplotlib reads it); the LaTeX side escapes what it prints."""

from __future__ import annotations

import math
from collections.abc import Callable

from ..formats import p_text

UNITS = [(1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns")]  # largest first


def bleu(value: float, sign: bool = False) -> str:
    """27.34 -> '27.3' (a BLEU or chrF point, or a difference of them with `sign`: '+2.6')."""
    return f"{value:{'+' if sign else ''}.1f}"


def share(value: float, sign: bool = False) -> str:
    """0.2634 -> '0.26' (a share of a whole, or a difference of shares with `sign`)."""
    return f"{value:{'+' if sign else ''}.2f}"


def sd(value: float) -> str:
    """0.1373 -> '0.14': a standard deviation of BLEU points across seeds, which moves by tenths
    (one decimal would print 0.14 and 0.18 alike)."""
    return f"{value:.2f}"


def p(value: float) -> str:
    """A p-value as every table cell and figure states it: '< 0.001', else three decimals."""
    return p_text(value)


def seconds(value: float) -> str:
    """A time in the unit that keeps it between 1 and 1000, three significant digits at most:
    0.0123 -> '12.3 ms', 2.5e-05 -> '25 µs', 240.0 -> '240 s'."""
    if value == 0 or not math.isfinite(value):
        return f"{value:g} s"
    scale, unit = next(((s, u) for s, u in UNITS if abs(value) >= s), UNITS[-1])
    return f"{value / scale:.3g} {unit}"


def interval(low: float, high: float, kind: Callable[..., str] = bleu, sign: bool = False) -> str:
    """'[23.8, 27.4]': both ends by the rule of their kind (a difference's with its sign)."""
    ends = [kind(end, sign=sign) if kind in (bleu, share) else kind(end) for end in (low, high)]
    return f"[{ends[0]}, {ends[1]}]"
