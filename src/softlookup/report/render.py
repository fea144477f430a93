"""Render the paper's section templates (paper/sections/*.tex, Jinja2) with the facts of a study.

A template is LaTeX an author edits. Jinja's syntax is made LaTeX-safe: `\\VAR{fact}` prints a
fact, `\\BLOCK{if ...}` ... `\\BLOCK{endif}` and `\\BLOCK{for ...}` choose and repeat text. A
block tag alone on its line leaves no line behind; one that ends a line of text eats that line's
newline, so such a line goes on with the next word. A printed string is escaped unless it is
LaTeX already (a `Tex`, which every filter returns); a number must go through a filter
(`number`, `bleu`, `delta`, `percent`, `p`, ...), so none is printed with a stray digit count.
Templates whose name starts with `_` hold shared macros and are not rendered on their own.

python -m softlookup.report.render --results results --config results/paper/config.json \
    --templates paper/sections --figures results/figures/a.pdf ... --out-dir results/paper/generated
"""

from __future__ import annotations

import argparse
import math
import re
from numbers import Integral, Real
from pathlib import Path

import jinja2
from markupsafe import Markup

from ..formats import format_number, p_text, stated_p
from ..paths import TEMPLATES
from . import latex
from .build import float_order
from .facts import SECTIONS, common
from .labels import backend_label, check_words, test_set_label, value_text
from .latex import Tex
from .study import Study, load


def finalize(value: object) -> Markup:
    """What `\\VAR{value}` prints: LaTeX as it is (a Tex, or a macro's output), text escaped,
    whole numbers with thousands separated; a fraction or a missing value is an error (format
    it, or say it is pending). Jinja's own escaping (autoescape) then leaves the result alone."""
    if isinstance(value, jinja2.Undefined):
        return Markup(value)  # StrictUndefined: raises, naming the missing fact
    if isinstance(value, Markup | Tex):
        return Markup(value)
    if isinstance(value, str):
        return Markup(latex.escape(value))
    if isinstance(value, bool) or value is None:
        raise TypeError(f"a template printed {value!r}: test it with `%% if`, do not print it")
    if isinstance(value, Integral) or (isinstance(value, Real) and float(value).is_integer()):
        return Markup(f"{int(value):,}")
    raise TypeError(f"a template printed the number {value!r}: format it with a filter")


def bleu(row) -> Tex:
    """BLEU [interval] of a row: one decimal, two below one BLEU (where one would read 0.0);
    a run that did not finish gives its status, one never scored '--'."""
    if row.get("status", "ok") != "ok":
        return Tex(rf"\emph{{{latex.escape(row['status'])}}}")
    if latex.missing(row["value"]):
        return Tex("--")
    digits = 1 if abs(row["value"]) >= 1 else 2
    return latex.interval(row["value"], row["ci_low"], row["ci_high"], digits)


def delta(row, digits: int = 2) -> Tex:
    """A paired difference with its sign and interval: '+3.07 [+2.50, +3.61]'."""
    return latex.interval(row["delta"], row["ci_low"], row["ci_high"], digits, sign=True)


def estimate(row, digits: int = 2) -> Tex:
    """A row's value with its interval: '0.23 [0.18, 0.28]'."""
    return latex.interval(row["value"], row["ci_low"], row["ci_high"], digits)


DEVICES = {"cpu": "CPU", "cuda": "GPU"}  # torch's device types as prose names them


def device(name: object) -> Tex:
    """A torch device type as prose says it ('cpu' -> 'CPU'); any other name as it is."""
    return latex.escape(DEVICES.get(str(name), str(name)))


def p_value(value: float) -> Tex:
    """A table's p cell (formats.p_text: '$<$ 0.001', '0.043'); '--' when there is none."""
    if latex.missing(value) or math.isnan(value):
        return Tex("--")
    return Tex(p_text(value).replace("<", "$<$"))


def p_stated(value: float) -> Tex:
    """The p-value as prose says it (formats.stated_p: 'p = 0.003', 'p $<$ 0.001')."""
    if latex.missing(value) or math.isnan(value):
        return Tex("p = --")
    return Tex(stated_p(value).replace("<", "$<$"))


def figure_text(value: float, fmt: str) -> str:
    """A number in its check's format, an exact zero as '0' (not '0.0e+00' in a format for
    tiny numbers)."""
    return "0" if value == 0 and "e" in fmt else format_number(value, fmt)


def figure(value: float, fmt: str = ".3g") -> Tex:
    """A measured number in its check's format (claims.yaml's `fmt`), 1.5e-07 as 1.5 x 10^-7;
    '--' when there is none."""
    if latex.missing(value):
        return Tex("--")
    return latex.escape(figure_text(float(value), fmt))


def emph(text: object) -> Tex:
    return Tex(rf"\emph{{{latex.escape(text)}}}")


def percent(share: float) -> Tex:
    return Tex(f"{100 * share:.0f}\\%")


def share_interval(row) -> Tex:
    """A row's share with its interval where it has one: '16\\% [12, 20]'."""
    if latex.missing(row["ci_low"]) or latex.missing(row["ci_high"]):
        return percent(row["share"])
    return Tex(f"{percent(row['share'])} [{100 * row['ci_low']:.0f}, {100 * row['ci_high']:.0f}]")


def plural(count: float, word: str) -> Tex:
    """'1 epoch', '3 epochs', '2,000 pairs'."""
    return Tex(f"{int(count):,} {word}{'' if count == 1 else 's'}")


def words(items, conjunction: str = "and", separator: str = ", ") -> Tex:
    """Items (each printed as \\VAR would print it) as 'a, b and c' (labels, which hold commas
    themselves: separator '; ')."""
    return Tex(latex.words_list([finalize(item) for item in items], conjunction, separator))


def seed_list(numbers) -> Tex:
    """Seeds as 'seed 1', 'seeds 1 and 2', 'seeds 3--12' (three or more in a row as a range)."""
    return Tex(latex.seeds_phrase(numbers))


def path(text: str) -> Tex:
    """A file stem or label as LaTeX reads it raw (in \\includegraphics or \\label): only
    letters, digits and _ . - / are allowed."""
    if not re.fullmatch(r"[\w./-]+", str(text)):
        raise ValueError(f"not a path LaTeX can read raw: {text!r}")
    return Tex(str(text))


def join(items, separator: str = "") -> Tex:
    """Items (each printed as \\VAR would print it) joined by `separator`."""
    return Tex(separator.join(finalize(item) for item in items))


def tt(text: object) -> Tex:
    """A file, rule or test-set name in typewriter type, breakable after _ . - /"""
    return Tex(rf"\texttt{{{latex.name(text)}}}")


def tagged(text: object, check) -> Tex:
    """A printed measurement tagged with the check it comes from, \\Quantity{D7.3}{text}
    (paper.tex prints the text alone): the paper's one-quantity-one-number test reads the tags."""
    if not getattr(check, "claim", ""):
        return finalize(text)  # a check outside the ledger (a test's): nothing to tag it with
    if not re.fullmatch(r"[A-Z]\d+\.\d+", check.name):
        raise ValueError(f"not a check's name: {check.name!r}")
    return Tex(rf"\Quantity{{{check.name}}}{{{finalize(text)}}}")


def sep(loop) -> str:
    """The separator after an item of a `%% for` loop in running text: ', ' then ' and '."""
    return ", " if loop.revindex > 2 else " and " if loop.revindex == 2 else ""


FILTERS = {
    "number": latex.number,
    "small": latex.small,
    "interval": latex.interval,
    "bleu": bleu,
    "delta": delta,
    "estimate": estimate,
    "device": device,
    "p": p_value,
    "p_stated": p_stated,
    "figure": figure,
    "emph": emph,
    "text": latex.escape,  # a symbol or word a template writes as a string ("±")
    "percent": percent,
    "share": share_interval,
    "plural": plural,
    "words": words,
    "seed_list": seed_list,
    "join": join,
    "setting": lambda value: latex.escape(value_text(value)),
    "tt": tt,
    "testset": lambda name: latex.escape(test_set_label(name)),
    "backend": lambda name: latex.escape(backend_label(name)),
    "check_words": lambda label: latex.escape(check_words(label)),
    "path": path,
    "tagged": tagged,
    "name": latex.name,
    "verdict": lambda v: Tex(latex.VERDICT_STYLE.get(v, latex.escape(v))),
}


class CompiledTemplates(jinja2.BytecodeCache):
    """Each template compiled once a process (a paper renders every section twice; the tests
    render hundreds of times): Jinja's bytecode cache, kept in memory. A bucket's checksum is of
    its source, so an edited template is compiled again."""

    def __init__(self) -> None:
        self.code: dict[str, bytes] = {}

    def load_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        if bucket.key in self.code:
            bucket.bytecode_from_string(self.code[bucket.key])

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        self.code[bucket.key] = bucket.bytecode_to_string()


COMPILED = CompiledTemplates()


def environment(templates: Path) -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates),
        bytecode_cache=COMPILED,
        **latex.TEMPLATE_SYNTAX,
        keep_trailing_newline=True,
        autoescape=True,  # every printed value goes through `finalize`, which escapes LaTeX
        undefined=jinja2.StrictUndefined,
        finalize=finalize,
    )
    env.filters.update(FILTERS)
    env.globals["sep"] = sep
    return env


def render(templates: Path, sections: dict, shared: dict, out_dir: Path) -> dict[str, str]:
    """Every section template rendered with its facts (and the shared ones) into
    out_dir/<name>.tex; returns {name: text}."""
    env = environment(templates)
    env.globals.update(shared)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = {}
    for path in sorted(Path(templates).glob("*.tex")):
        if path.name.startswith("_"):
            continue
        text = env.get_template(path.name).render(sections.get(path.stem, {}))
        header = f"% Written by softlookup.report.render from {path.name}; edit that instead.\n"
        (out_dir / path.name).write_text(header + text)
        written[path.stem] = text
    return written


def write(
    study: Study,
    figures: list[str],
    out_dir: Path,
    configfiles: list[str],
    templates: Path = TEMPLATES,
) -> dict[str, str]:
    """The facts of every section of `study`, rendered into out_dir (figures: the stems drawn);
    rendered twice, so that the list of floats follows their numbers (the labels of the first
    rendering, in the order the paper inputs its sections)."""
    sections = {name: facts_of(study) for name, facts_of in SECTIONS.items()}
    shared = common(study, figures, configfiles)
    order = float_order(render(templates, sections, shared, out_dir))
    rank = {label: i for i, label in enumerate(order)}
    shared["figures"] = dict(
        sorted(shared["figures"].items(), key=lambda item: rank.get(f"fig:{item[0]}", len(rank)))
    )
    sections["sources"]["tables"].sort(key=lambda row: rank.get(row["label"], len(rank)))
    return render(templates, sections, shared, out_dir)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--config", type=Path, help="the merged config as JSON")
    parser.add_argument("--configfiles", nargs="*", default=[], help="config files of the build")
    parser.add_argument("--runs", nargs="*", help="the runs of the config (default: all on disk)")
    parser.add_argument("--figures", nargs="*", default=[], type=Path)
    parser.add_argument("--bench", nargs="*", type=Path, help="benchmark CSVs (default: all)")
    parser.add_argument("--manifest", type=Path, help="the corpus manifest the rule declares")
    parser.add_argument("--templates", type=Path, default=TEMPLATES)
    parser.add_argument("--out-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    study = load(args.results, args.config, args.runs, args.bench, args.manifest)
    drawn = [path.stem for path in args.figures if path.exists()]
    for name in write(study, drawn, args.out_dir, args.configfiles, args.templates):
        print(args.out_dir / f"{name}.tex")


if __name__ == "__main__":
    main()
