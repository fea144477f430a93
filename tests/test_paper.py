"""What a reader of paper/paper.pdf must find; the whole-workflow test (tests/test_workflow.py)
calls `assert_paper_is_complete` on its finished run, the unit tests below check the checks."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

PLACEHOLDERS = ("not measured", "??", "Undefined")
NUMBER = re.compile(r"-?\d+(?:,\d{3})*(?:\.\d+)?")


def pdf_text(pdf: Path) -> str:
    run = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, text=True, check=True
    )
    return run.stdout


def page_ink(pdf: Path, workdir: Path) -> list[float]:
    """The share of non-white pixels of every page (greyscale, 20 dpi)."""
    prefix = workdir / "page"
    subprocess.run(["pdftoppm", "-gray", "-r", "20", str(pdf), str(prefix)], check=True)
    shares = []
    for path in sorted(workdir.glob("page*.pgm")):
        data = path.read_bytes()
        # binary PGM: magic, width, height, maxval, then one byte per pixel
        header = re.match(rb"P5\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
        pixels = data[header.end() :]
        shares.append(sum(byte < 200 for byte in pixels) / max(1, len(pixels)))
    return shares


def claim_number(claims: pd.DataFrame) -> str:
    """A decimal number of some claim's measured headline (what the ledger table prints); a
    ledger without one is itself a failure (every build measures the worked examples)."""
    for measured in claims.get("measured", pd.Series(dtype=str)).dropna().astype(str):
        for found in NUMBER.findall(measured):
            if "." in found:
                return found
    raise AssertionError("no claim of the ledger has a decimal number in its headline")


# a check label as the ledger writes it ('attention_params[torch_mha,512,True,1]')
CHECK_ID = re.compile(r"\b\w+\[[^\]\s]*,[^\]\s]*\]")


def leaked_identifiers(text: str, identifiers: list[str]) -> list[str]:
    """Run ids, comparison names and check labels found in a PDF's text, and 'Rule ' (a
    caption tail); pdftotext may print an underscore as a space, so both spellings count."""
    flat = " ".join(text.split())
    found = [i for i in identifiers if i in flat or i.replace("_", " ") in flat]
    found += CHECK_ID.findall(flat)
    return found + (["Rule "] if "Rule " in flat else [])


def unreferenced_floats(aux: str, sources: list[str]) -> list[str]:
    """Labels of figures and tables (from the .aux) that no \\ref of the sources names."""
    labels = re.findall(r"\\newlabel\{((?:fig|tab):[^}]+)\}", aux)
    text = "\n".join(sources)
    return [label for label in labels if f"\\ref{{{label}}}" not in text]


OVERFULL = re.compile(r"Overfull \\hbox \(([\d.]+)pt too wide\)")
MARGIN_PT = 3.0  # what a reader cannot see past the margin


def overfull_boxes(log: str) -> list[float]:
    """How far (pt) each line or table that LaTeX's log reports as overfull runs past the
    margin, beyond MARGIN_PT."""
    return [float(width) for width in OVERFULL.findall(log) if float(width) > MARGIN_PT]


# the committed references' folders a figure or text might print ('converged_heads_seeds'); a
# name without '_' ('long', 'test') is a word a sentence may hold
REFERENCES = Path(__file__).resolve().parents[1] / "results" / "reference"


def assert_no_identifiers_and_every_float_cited(workdir: Path, text: str) -> None:
    results = workdir / "results"
    identifiers = [p.name for p in (results / "runs").glob("*") if p.is_dir()]
    identifiers += [p.name for p in REFERENCES.glob("*_*") if p.is_dir()]
    comparisons = results / "tables" / "comparisons.csv"
    if comparisons.exists():
        identifiers += sorted(set(pd.read_csv(comparisons)["comparison"].astype(str)))
    leaked = leaked_identifiers(text, identifiers)
    assert not leaked, f"identifiers in the paper's text: {leaked[:10]}"
    for aux in workdir.glob("**/paper.aux"):
        generated = [
            p.read_text() for p in aux.parent.glob("generated/*.tex") if p.stem != "sources"
        ]
        missing = unreferenced_floats(aux.read_text(), generated)
        assert not missing, f"floats never referenced in the text: {missing}"
        log = aux.with_suffix(".log")
        wide = overfull_boxes(log.read_text(errors="replace")) if log.exists() else []
        assert not wide, f"{log}: lines or tables past the margin by {wide} pt"


def assert_paper_is_complete(workdir: Path) -> None:
    pdf = workdir / "paper" / "paper.pdf"
    text = pdf_text(pdf)
    flat = " ".join(text.split())
    for bad in PLACEHOLDERS:
        assert bad not in flat, f"{bad!r} in the paper"
    assert "Claims ledger" in flat and "Every check" in flat and "Reproducibility" in flat
    claims = pd.read_csv(workdir / "results" / "claims" / "claims.csv")
    assert f"of the {len(claims)} claims are reproduced" in flat
    number = claim_number(claims)
    assert number in flat, f"the ledger's {number} is not in the paper"
    scratch = workdir / "pages"
    scratch.mkdir(exist_ok=True)
    ink = page_ink(pdf, scratch)
    assert ink and min(ink) > 0.001, f"blank page(s): {ink}"
    assert_no_identifiers_and_every_float_cited(workdir, text)


needs_poppler = pytest.mark.skipif(
    shutil.which("pdftotext") is None or shutil.which("pdflatex") is None,
    reason="needs poppler and pdflatex",
)


@needs_poppler
def test_a_blank_page_and_a_placeholder_are_caught(tmp_path):
    (tmp_path / "paper").mkdir()
    (tmp_path / "results" / "claims").mkdir(parents=True)
    pd.DataFrame({"id": ["A1"], "measured": ["weights 0.422, 0.155"]}).to_csv(
        tmp_path / "results" / "claims" / "claims.csv", index=False
    )
    body = (
        r"\section*{Claims ledger} In this build 1 of the 1 claims are reproduced: 0.422."
        r" \section*{Reproducibility} \section*{Every check}"
    )
    cases = [("", None), (r"\newpage\mbox{}", "blank"), ("not measured", "not")]
    cases.append((None, "0.422 is not in the paper"))  # the ledger's headline left out
    for extra, problem in cases:
        tex = tmp_path / "paper" / "paper.tex"
        text = body.replace(": 0.422", "") if extra is None else body + extra
        tex.write_text(r"\documentclass{article}\begin{document}" + text + r"\end{document}")
        subprocess.run(
            ["pdflatex", "-interaction=nonstopmode", "paper.tex"],
            cwd=tmp_path / "paper",
            capture_output=True,
            check=True,
        )
        if problem is None:
            assert_paper_is_complete(tmp_path)
        else:
            with pytest.raises(AssertionError, match=problem):
                assert_paper_is_complete(tmp_path)
        shutil.rmtree(tmp_path / "pages", ignore_errors=True)
    pd.DataFrame({"id": ["A1"], "measured": ["3/3 checks pass"]}).to_csv(
        tmp_path / "results" / "claims" / "claims.csv", index=False
    )
    with pytest.raises(AssertionError, match="no claim of the ledger has a decimal"):
        assert_paper_is_complete(tmp_path)


def test_identifiers_and_caption_tails_are_caught():
    ids = ["gru_additive-s1", "d1_additive_vs_none"]
    assert leaked_identifiers("GRU, additive beats no attention.", ids) == []
    assert leaked_identifiers("seen in gru additive-s1 here", ids) == ["gru_additive-s1"]
    assert leaked_identifiers("Table 14: d1_additive_vs_none", ids) == ["d1_additive_vs_none"]
    assert leaked_identifiers("x attention_params[torch_mha,512,True,1] y", []) == [
        "attention_params[torch_mha,512,True,1]"
    ]
    assert leaked_identifiers("A figure. Rule figure_scores, results/x.pdf", []) == ["Rule "]
    assert leaked_identifiers("an interval [0.19, 0.36] is no identifier", []) == []


def test_a_float_never_referenced_is_caught():
    aux = r"\newlabel{fig:probes}{{1}{2}}\newlabel{tab:headline}{{1}{3}}\newlabel{sec:x}{{2}{3}}"
    assert unreferenced_floats(aux, [r"see Table~\ref{tab:headline}"]) == ["fig:probes"]
    assert unreferenced_floats(aux, [r"\ref{tab:headline} and \ref{fig:probes}"]) == []


def test_a_table_past_the_margin_is_caught():
    log = "Overfull \\hbox (17.32297pt too wide) in paragraph at lines 10--26\n"
    log += "Overfull \\hbox (0.90417pt too wide) in paragraph at lines 9--9\n"
    assert overfull_boxes(log) == [17.32297]
