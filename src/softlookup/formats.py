"""How a number is written wherever the project writes one as text: a check's figure in its
format (`format_number`, the ledger's `value_text` and the paper's), a rounded zero without its
minus sign, and a p-value as a table cell (`p_text`) and a sentence (`stated_p`) give it. Plain
text; the report's LaTeX side escapes what it prints. The ledger, the paper and the plain-text
wording of checks.csv all read these, so a number reads the same in each."""

from __future__ import annotations

import math


def format_number(value: float | None, fmt: str) -> str:
    """A number in a check's format ('' for none; inf and nan as Python writes them)."""
    if value is None:
        return ""
    if math.isinf(value) or math.isnan(value):
        return str(value)
    return unsigned_zero(format(value, fmt))


def unsigned_zero(text: str) -> str:
    """A formatted number that rounds to zero without a minus sign: '-0.00' -> '0.00'."""
    try:
        zero = float(text.replace(",", "")) == 0
    except ValueError:
        return text
    return text[1:] if zero and text.startswith("-") else text


def p_text(p_value: float) -> str:
    """A p-value as a table cell gives it: '< 0.001' below a thousandth, else three decimals
    (the p_value columns keep the exact value)."""
    return "< 0.001" if p_value < 0.001 else f"{p_value:.3f}"


def stated_p(p_value: float) -> str:
    """A p-value as a sentence states it: 'p = 0.043', 'p < 0.001'."""
    cell = p_text(p_value)
    return f"p {cell}" if cell.startswith("<") else f"p = {cell}"
