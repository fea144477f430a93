"""The claims ledger as LaTeX, from results/claims/claims.csv and checks.csv.

claims_table.tex: one row per claim (id, claim in a few words, expected, measured with its
interval, verdict, where); checks_table.tex: every check in small type (the appendix);
claims_macros.tex: verdict counts, \\ClaimVerdict<Id> and \\ClaimMeasured<Id> per claim, and a
macro per check that names one (checks.csv column `macro`).

python -m softlookup.report.macros_claims --claims results/claims/claims.csv \
    --checks results/claims/checks.csv --out-dir results/paper/generated
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from . import latex
from .latex import VERDICT_STYLE, escape, macro_file, macro_name, missing, tabular

VERDICTS = ("reproduced", "partly", "not reproduced", "pending")
# The labels that report.sections always writes: a ledger row's `where` naming one is a reference.
SECTION_LABELS = {
    f"sec:{name}"
    for name in (
        "setup",
        "results",
        "length",
        "scores",
        "scaling",
        "heads",
        "masking",
        "training",
        "cost",
        "attention",
        "probes",
        "probes-worked",
        "probes-statistical",
        "probes-counting",
        "claims",
        "threats",
    )
}
CELL_CHARS = 110  # a ledger cell longer than this is cut; the appendix and claims.csv hold it all
SHORT_WORDS = 12


def read(path: Path | None) -> pd.DataFrame:
    """A CSV, or an empty table when it does not exist (yet)."""
    if path is None or not Path(path).exists():
        return pd.DataFrame()
    return pd.read_csv(path, keep_default_na=False, na_values=[""])


def text(row: pd.Series, *columns: str, default: str = "") -> str:
    """The first of `columns` that the row has and fills."""
    for column in columns:
        value = row.get(column)
        if not missing(value) and str(value).strip():
            return str(value).strip()
    return default


def shorten(value: str, limit: int = CELL_CHARS) -> str:
    value = value.replace("not measured", "pending")
    if len(value) <= limit:
        return value
    return value[: value.rfind(" ", 0, limit - 1) or limit - 1].rstrip(" ,;:") + " …"


def short_claim(row: pd.Series) -> str:
    """The claim in a few words: the `short` column, else the first words of `claim`."""
    short = text(row, "short")
    if short:
        return short
    words = text(row, "claim").split()
    return " ".join(words[:SHORT_WORDS]) + (" …" if len(words) > SHORT_WORDS else "")


def measured(row: pd.Series) -> str:
    """The headline measurement with its interval when claims.csv gives one."""
    value = text(row, "measured")
    if not value:
        return r"\emph{pending}"
    low, high = row.get("ci_low"), row.get("ci_high")
    cell = escape(shorten(value))
    if not missing(low) and not missing(high):
        try:
            cell += " " + escape(f"[{float(low):.3g}, {float(high):.3g}]")
        except ValueError:
            pass
    return cell


def verdict(row: pd.Series) -> str:
    return VERDICT_STYLE.get(text(row, "verdict"), escape(text(row, "verdict", default="pending")))


def where(row: pd.Series) -> str:
    """The paper section (a label) that reports the claim: a reference, else the text."""
    place = text(row, "where")
    if place in SECTION_LABELS:
        return rf"\ref{{{place}}}"
    return escape(place) if place else "--"


def claims_table(claims: pd.DataFrame) -> str:
    """The ledger in the paper: one line (or two) per claim, fits two pages for ~40 claims."""
    if claims.empty:
        return (
            "The claims ledger (\\path{results/claims/claims.csv}) was not written in this build,"
            " so no claim has a verdict here.\n"
        )
    counts = claims["verdict"].value_counts() if "verdict" in claims else pd.Series(dtype=int)
    summary = (
        f"In this build {int(counts.get('reproduced', 0))} of the {len(claims)} claims are"
        f" reproduced, {int(counts.get('partly', 0))} partly,"
        f" {int(counts.get('not reproduced', 0))} not reproduced and"
        f" {int(counts.get('pending', 0))} pending (Table~\\ref{{tab:claims}}).\n\n"
    )
    rows = [
        [
            escape(text(row, "id")),
            r"\raggedright " + escape(short_claim(row)),
            r"\raggedright " + escape(shorten(text(row, "expected", default="--"))),
            r"\raggedright " + measured(row),
            verdict(row),
            where(row),
        ]
        for _, row in claims.iterrows()
    ]
    return summary + tabular(
        ["Id", "Claim", "Expected (source)", "Measured [interval]", "Verdict", "Where"],
        rows,
        r"@{}p{0.035\linewidth}p{0.18\linewidth}p{0.23\linewidth}p{0.22\linewidth}"
        r"p{0.115\linewidth}p{0.04\linewidth}@{}",
        long=True,
        caption="Claims ledger: each claim in a few words, the figure its source gives, what this"
        " build measured (95\\% interval where one exists), the verdict, and the section that"
        " reports it. Long cells are cut; Appendix~\\ref{app:checks} and"
        " \\texttt{results/claims/claims.csv} hold every check in full.",
        label="tab:claims",
        size="scriptsize",
    )


CHECK_HEADER = ["Claim", "Check", "Expected", "Measured", "Outcome", "Evidence"]
CHECK_WIDTHS = ["0.04", "0.25", "0.14", "0.27", "0.06", "0.16"]
OPS = {"approx": "", "above": "> ", "below": "< ", "report": "reported", "equal": "= "}


def check_cells(row: pd.Series) -> list[str]:
    """One check: claim, label, expected (with its tolerance), measured (or why it is pending),
    outcome, the file that holds the evidence."""
    status = text(row, "status", "outcome", default="--")
    op = text(row, "op")
    expected = text(row, "expected", default="--")
    if op == "report":
        expected = "reported only"
    else:
        allowed = text(row, "allowed")
        expected = OPS.get(op, f"{op} " if op else "") + expected
        if allowed and allowed not in ("0", "0.0"):
            expected += f" ± {allowed}"
    if status == "pending":
        measured_text = "pending: " + text(row, "detail", default="no evidence in this build")
    else:
        measured_text = text(row, "value_text", "measured", "value", default="--")
        detail = text(row, "detail")
        if status == "fail" and detail:
            measured_text += f" ({detail})"
    label = text(row, "label", "check", "name", default="--")
    evidence = Path(text(row, "output", "outputs", "rule", default="--")).name
    cells = [
        escape(text(row, "claim_id", "id", "claim", default="--")),
        latex.name(shorten(label, 160)).replace(",", r",\allowbreak{}"),
        escape(expected),
        escape(shorten(measured_text, 160)),
        escape(status),
        latex.name(evidence),
    ]
    return [r"\raggedright " + cell for cell in cells]


def checks_table(checks: pd.DataFrame) -> str:
    """Every check of every claim in small type (the appendix)."""
    if checks.empty:
        return (
            "The list of checks (\\texttt{results/claims/checks.csv}) was not written in this"
            " build.\n"
        )
    rows, previous = [], None
    for _, row in checks.iterrows():
        cells = check_cells(row)
        if cells[0] == previous:  # the claim's id on its first check only
            cells[0] = ""
        else:
            previous = cells[0]
        rows.append(cells)
    align = "@{}" + "".join(rf"p{{{w}\linewidth}}" for w in CHECK_WIDTHS) + "@{}"
    return tabular(
        CHECK_HEADER,
        rows,
        align,
        long=True,
        caption="Every check of every claim, as \\texttt{results/claims/checks.csv} records it.",
        label="tab:checks",
        size="tiny",
    )


def claims_macros(claims: pd.DataFrame, checks: pd.DataFrame) -> str:
    """Counts of each verdict, each claim's verdict and headline, and the checks' named numbers."""
    macros: dict[str, str] = {"ClaimsTotal": str(len(claims))}
    verdicts = claims["verdict"].value_counts() if "verdict" in claims else pd.Series(dtype=int)
    for name in VERDICTS:
        macros[f"Claims{macro_name(name.title())}"] = str(int(verdicts.get(name, 0)))
    for _, row in claims.iterrows():
        claim = macro_name(text(row, "id"))
        macros[f"ClaimVerdict{claim}"] = escape(text(row, "verdict", default="pending"))
        macros[f"ClaimMeasured{claim}"] = measured(row)
    if "macro" in checks:
        for _, row in checks.iterrows():
            name, value = text(row, "macro"), text(row, "text", "value_text", "measured")
            if name and value:
                macros[macro_name(name)] = escape(value)
    return macro_file(macros, "softlookup.report.macros_claims")


def write(claims_path: Path, checks_path: Path | None, out_dir: Path) -> dict[str, Path]:
    claims, checks = read(claims_path), read(checks_path)
    out_dir.mkdir(parents=True, exist_ok=True)
    files = {
        "claims_table.tex": claims_table(claims),
        "checks_table.tex": checks_table(checks),
        "claims_macros.tex": claims_macros(claims, checks),
    }
    for name, content in files.items():
        (out_dir / name).write_text(content)
    return {name: out_dir / name for name in files}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--claims", type=Path, required=True)
    parser.add_argument("--checks", type=Path, help="checks.csv (optional)")
    parser.add_argument("--out-dir", type=Path, required=True)
    args = parser.parse_args(argv)
    for path in write(args.claims, args.checks, args.out_dir).values():
        print(path)


if __name__ == "__main__":
    main()
