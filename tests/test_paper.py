"""What a reader of paper/paper.pdf must find; the whole-workflow test (tests/test_workflow.py)
calls `assert_paper_is_complete` on its finished run, the unit tests below check the checks."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from softlookup.report.labels import BACKENDS, check_words

PLACEHOLDERS = ("not measured", "??", "Undefined")
# "throughput,." : a list that lost its end (a "../" path is no doubling)
DOUBLED_PUNCTUATION = re.compile(r"[,;:] ?(?:[,;]|\.(?!\.))")
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


# what a reader must not meet in the paper's prose (outside the provenance appendices): a raw
# split name (pdftotext may print its underscores as spaces), a config file or key path, a
# command-line flag, a script, and "this build" (say what is meant: the study, these runs)
JARGON = re.compile(
    r"\btest[_ ](?:\d{4}[_ ][a-z]+|long|europarl)\b"
    r"|\bconfig/|\bscripts/|(?<![\w-])--[a-z][\w-]*|\b(?i:this build)\b"
    r"|\b[A-Z]+_[A-Z_]+\b|\btorch_\w+"
)
# the appendices that may name files, rules and commands (set as such): provenance
PROVENANCE = ("Reproducibility", "Where every figure and table comes from")
# an appendix's heading line, 'G    Reproducibility' (a letter, then words single-spaced)
APPENDIX = re.compile(r"^ {0,3}[A-Z] {2,}([A-Z][a-z]+(?: \S+)*) *$", re.MULTILINE)


def reader_text(text: str) -> str:
    """A paper's text without its provenance appendices (pdftotext -layout: an appendix starts
    at a line 'G    Reproducibility' and ends where the next appendix starts)."""
    heads = list(APPENDIX.finditer(text))
    kept, start = [], 0
    for head, after in zip(heads, [*heads[1:], None], strict=False):
        if head[1].startswith(PROVENANCE):
            kept.append(text[start : head.start()])
            start = after.start() if after else len(text)
    return "".join(kept) + text[start:]


def leaked_identifiers(text: str, identifiers: list[str]) -> list[str]:
    """Run ids, comparison names and check labels found in a PDF's text, 'Rule ' (a caption
    tail), and outside the provenance appendices raw split names, config paths, flags, scripts
    and 'this build' (JARGON); pdftotext may print an underscore as a space, so both spellings
    of an identifier count."""
    flat = " ".join(text.split())
    found = [i for i in identifiers if i in flat or i.replace("_", " ") in flat]
    found += CHECK_ID.findall(flat)
    found += JARGON.findall(" ".join(reader_text(text).split()))
    return found + (["Rule "] if "Rule " in flat else [])


def unlisted_floats(aux: str, sources_appendix: Path) -> list[str]:
    """Labels of figures and tables (from the .aux) that the appendix listing every float's
    sources does not name."""
    listed = sources_appendix.read_text() if sources_appendix.exists() else ""
    labels = re.findall(r"\\newlabel\{((?:fig|tab):[^}]+)\}", aux)
    return [label for label in labels if f"\\ref{{{label}}}" not in listed]


def float_list_out_of_order(aux: str, sources_appendix: Path) -> list[str]:
    """Labels of the list of floats that come after a float of their kind numbered higher."""
    if not sources_appendix.exists():
        return []
    numbers = dict(re.findall(r"\\newlabel\{((?:fig|tab):[^}]+)\}\{\{(\d+)\}", aux))
    listed = re.findall(r"\\ref\{((?:fig|tab):[^}]+)\}", sources_appendix.read_text())
    out, highest = [], {}
    for label in listed:
        if label not in numbers:  # drawn, not shown: listed last, without a number
            continue
        kind, number = label[:3], int(numbers[label])
        if number < highest.get(kind, 0):
            out.append(label)
        highest[kind] = max(highest.get(kind, 0), number)
    return out


def unreferenced_floats(aux: str, sources: list[str]) -> list[str]:
    """Labels of figures and tables (from the .aux) that no \\ref of the sources names."""
    labels = re.findall(r"\\newlabel\{((?:fig|tab):[^}]+)\}", aux)
    text = "\n".join(sources)
    return [label for label in labels if f"\\ref{{{label}}}" not in text]


def tagged_quantities(tex: str) -> list[tuple[str, str]]:
    """Every (check, printed text) the generated LaTeX tags as \\Quantity{D7.3}{text}."""
    found = []
    for match in re.finditer(r"\\Quantity\{([^{}]+)\}\{", tex):
        depth, end = 1, match.end()
        while depth and end < len(tex):
            depth += {"{": 1, "}": -1}.get(tex[end], 0)
            end += 1
        found.append((match[1], tex[match.end() : end - 1]))
    return found


def quantities_printed_two_ways(sources: list[str]) -> dict[str, set[str]]:
    """The quantities (ledger checks) that some two places of the paper print differently."""
    printed: dict[str, set[str]] = {}
    for tex in sources:
        for name, text in tagged_quantities(tex):
            printed.setdefault(name, set()).add(" ".join(text.split()))
    return {name: texts for name, texts in printed.items() if len(texts) > 1}


def numbers_not_in_facts(text: str, facts: object) -> list[str]:
    """The numbers a rendered text prints that no fact gives: every value of `facts` (nested
    dicts, lists and objects with __dict__) in each format a template prints numbers with."""
    allowed: set[str] = set()

    def add(value: object) -> None:
        if isinstance(value, bool) or value is None:
            return
        if isinstance(value, int | float) and math.isfinite(value):
            for fmt in (",.0f", ".0f", ".1f", ".2f", ".3f", ".3g", ".2g", ",.1f", ",.2f"):
                allowed.add(format(value, fmt))
            allowed.add(format(100 * value, ".0f"))  # a share printed as a percentage
        elif isinstance(value, dict):
            for item in value.values():
                add(item)
        elif isinstance(value, list | tuple | set):
            for item in value:
                add(item)
        elif hasattr(value, "__dict__"):
            add(vars(value))

    add(facts)
    numbers = NUMBER.findall(re.sub(r"\\Quantity\{[^{}]+\}", "", text))
    return [n for n in numbers if n.lstrip("-") not in allowed and n not in allowed]


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
    identifiers += [name for name in BACKENDS if "_" in name]  # torch_cudnn, not "torch cudnn"
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
        listed = unlisted_floats(aux.read_text(), (aux.parent / "generated" / "sources.tex"))
        assert not listed, f"floats the list of floats (Appendix: sources) leaves out: {listed}"
        unordered = float_list_out_of_order(
            aux.read_text(), aux.parent / "generated" / "sources.tex"
        )
        assert not unordered, f"floats listed after a higher-numbered one: {unordered}"
        two_ways = quantities_printed_two_ways(generated)
        assert not two_ways, f"one quantity printed with two values: {two_ways}"
        log = aux.with_suffix(".log")
        wide = overfull_boxes(log.read_text(errors="replace")) if log.exists() else []
        assert not wide, f"{log}: lines or tables past the margin by {wide} pt"


def abstract_not_from_facts(workdir: Path) -> list[str]:
    """What the rendered abstract prints that its facts do not give: numbers outside the
    quantities it tags (numbers_not_in_facts), and tags naming no quantity of the facts layer."""
    from softlookup.report.facts import SECTIONS, claims, common, quantities
    from softlookup.report.study import load

    results = workdir / "results"
    abstract = results / "paper" / "generated" / "abstract.tex"
    if not abstract.exists():
        return []
    study = load(results, results / "paper" / "config.json")
    measured = quantities.quantities(claims.claims(study))
    tex = abstract.read_text()
    names = {check.name for check in measured.values() if check is not None}
    wrong_tags = [name for name, _ in tagged_quantities(tex) if name not in names]
    untagged = tex
    for name, text in tagged_quantities(tex):
        untagged = untagged.replace(f"\\Quantity{{{name}}}{{{text}}}", "")
    facts = {**common(study, [], []), **SECTIONS["abstract"](study)}
    return wrong_tags + numbers_not_in_facts(untagged, facts)


def assert_paper_is_complete(workdir: Path) -> None:
    pdf = workdir / "paper" / "paper.pdf"
    text = pdf_text(pdf)
    flat = " ".join(text.split())
    for bad in PLACEHOLDERS:
        assert bad not in flat, f"{bad!r} in the paper"
    doubled = [flat[m.start() - 30 : m.end()] for m in DOUBLED_PUNCTUATION.finditer(flat)]
    assert not doubled, f"punctuation doubled: {doubled}"
    assert "How the claims are judged" in flat and "Every check" in flat
    assert "Reproducibility" in flat
    claims = pd.read_csv(workdir / "results" / "claims" / "claims.csv")
    assert f"of the {len(claims)} claims are reproduced" in flat
    number = claim_number(claims)
    assert number in flat, f"the ledger's {number} is not in the paper"
    scratch = workdir / "pages"
    scratch.mkdir(exist_ok=True)
    ink = page_ink(pdf, scratch)
    assert ink and min(ink) > 0.001, f"blank page(s): {ink}"
    assert_no_identifiers_and_every_float_cited(workdir, text)
    unknown = abstract_not_from_facts(workdir)
    assert not unknown, f"the abstract prints numbers no fact gives: {unknown}"
    if (workdir / "results" / "paper" / "generated" / "abstract.tex").exists():
        counts = re.search(r"Of \d+ claims, [^.]*\.", flat)
        assert counts and not re.search(r"\b0 [a-z]", counts[0]), f"a verdict counted 0: {counts}"


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
        r"\section*{How the claims are judged} Across the study, 1 of the 1 claims are reproduced: 0.422."
        r" \section*{Reproducibility} \section*{Every check}"
    )
    cases = [("", None), (r"\newpage\mbox{}", "blank"), ("not measured", "not")]
    cases.append(("wall time and throughput,.", "punctuation doubled"))
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
        "attention_params[torch_mha,512,True,1]",
        "torch_mha",
    ]
    assert leaked_identifiers("A figure. Rule figure_scores, results/x.pdf", []) == ["Rule "]
    assert leaked_identifiers("an interval [0.19, 0.36] is no identifier", []) == []
    jargon = (
        "on test_2016_flickr, test long and test europarl; config/claims.yaml, --naive-max-len,"
        " scripts/gpu_check.sh, TRITON_INTERPRET=1, torch_cudnn; in this build"
    )
    assert leaked_identifiers(jargon, []) == [
        "test_2016_flickr",
        "test long",
        "test europarl",
        "config/",
        "--naive-max-len",
        "scripts/",
        "TRITON_INTERPRET",
        "torch_cudnn",
        "this build",
    ]
    reader = "on the 2016 Flickr test set, A6–A8, a long test; the study's runs"
    assert leaked_identifiers(reader, []) == []
    provenance = "A    Claims ledger\nfine\nG    Reproducibility\nmake --configfile config/x.yaml\n"
    assert leaked_identifiers(provenance + "H    Every check\nok\n", []) == []
    assert leaked_identifiers(provenance + "H    Every check\nin this build\n", []) == [
        "this build"
    ]


def test_a_check_label_names_every_layer_as_a_reader_does():
    """The counting checks' labels hold layer names; the appendix prints the reader's names."""
    words = check_words("attention_params[torch_mha,512,True,1]")
    assert words == "attention params (PyTorch MHA, 512, True, 1)"
    assert check_words("attention_params[softlookup_mha,512]") == "attention params (our MHA, 512)"
    assert leaked_identifiers(words, [name for name in BACKENDS if "_" in name]) == []


def test_a_float_list_out_of_number_order_is_caught(tmp_path):
    aux = "\\newlabel{fig:a}{{1}{2}}\\newlabel{fig:b}{{2}{3}}\\newlabel{tab:c}{{1}{3}}"
    listed = tmp_path / "sources.tex"
    listed.write_text("\\ref{fig:b} \\ref{tab:c} \\ref{fig:a}")
    assert float_list_out_of_order(aux, listed) == ["fig:a"]
    listed.write_text("\\ref{fig:a} \\ref{fig:b} \\ref{tab:c}")
    assert float_list_out_of_order(aux, listed) == []


def test_a_float_never_referenced_is_caught():
    aux = r"\newlabel{fig:probes}{{1}{2}}\newlabel{tab:headline}{{1}{3}}\newlabel{sec:x}{{2}{3}}"
    assert unreferenced_floats(aux, [r"see Table~\ref{tab:headline}"]) == ["fig:probes"]
    assert unreferenced_floats(aux, [r"\ref{tab:headline} and \ref{fig:probes}"]) == []


def test_a_table_past_the_margin_is_caught():
    log = "Overfull \\hbox (17.32297pt too wide) in paragraph at lines 10--26\n"
    log += "Overfull \\hbox (0.90417pt too wide) in paragraph at lines 9--9\n"
    assert overfull_boxes(log) == [17.32297]


# LaTeX's sizes at the paper's 11 pt (article class): \tiny is 6 pt, \scriptsize 8 pt
SIZE_POINTS = {"tiny": 6, "scriptsize": 8, "footnotesize": 9, "small": 10}
SMALLEST_POINTS = 7  # no text in a table smaller than this at print size


def test_no_table_is_set_below_7pt():
    """Every size a template or paper.tex sets is at least 7 pt, and nothing is shrunk as a
    box (a scaled table's text has no size a template could check)."""
    root = Path(__file__).resolve().parents[1] / "paper"
    for path in [root / "paper.tex", *sorted((root / "sections").glob("*.tex"))]:
        text = path.read_text()
        assert "documentclass[11pt" in text or path.name != "paper.tex"
        sizes = re.findall(r"\\(tiny|scriptsize|footnotesize|small)\b", text)
        small = [size for size in sizes if SIZE_POINTS[size] < SMALLEST_POINTS]
        assert not small, f"{path.name}: text set at {small}"
        assert not re.search(r"\\(resizebox|scalebox)\b", text), f"{path.name}: a scaled box"
