"""The generated parts of the paper: every sentence that states a number or a direction.

Each function below reads the study (report.study) and returns LaTeX. Sentences that say which
way an effect goes are chosen from the measurement or from the ledger's verdict; a measurement
that is missing gives a sentence naming what is pending and why. The section bodies are written
to results/paper/generated/, and paper/paper.tex only \\input's them, so the paper builds for any
valid config (any runs, seeds, sweeps) without a macro name per run in the .tex.

python -m softlookup.report.sections --results results --config results/paper/config.json \
    --figures results/figures/a.pdf ... --out-dir results/paper/generated
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from ..provenance import config_hash, git_state
from . import latex
from .figures import cost as cost_figures
from .figures import training as training_figures
from .latex import escape, number, words_list
from .macros_environment import environment_macros, run_environment
from .macros_scores import data_macros
from .prose import Paper, bleu_text
from .results import length_kept, percent, results, split_by_attention
from .study import Study, load, metric_rows, pooled

# --------------------------------------------------------------------------- front and back


def abstract(paper: Paper) -> str:
    claims = paper.study.claims
    text = (
        "We rebuild, from public data and our own code, the argument that attention is a"
        " differentiable dictionary lookup, and test each concrete statement of two"
        " explanatory essays about it. "
    )
    if not claims.empty and "verdict" in claims:
        counts = claims["verdict"].value_counts()
        text += (
            f"Of {len(claims)} claims, "
            + words_list(
                [
                    f"{int(counts.get(v, 0))} {v}"
                    for v in ("reproduced", "partly", "not reproduced", "pending")
                ]
            )
            + " in this build. "
        )
    else:
        text += "The claims ledger is pending in this build. "
    bleu = pooled(metric_rows(paper.study, paper.test_set), ["base_model"])
    if not bleu.empty:
        best = bleu.sort_values("value").iloc[-1]
        text += (
            f"The best base model on \\texttt{{{escape(paper.test_set)}}} is"
            f" {latex.name(best['base_model'])} at {bleu_text(best)} BLEU. "
        )
    effect = length_kept(paper)
    if effect is None:
        text += "BLEU by source length is pending. "
    else:
        _, first, last, kept = effect
        fixed, attn = split_by_attention(paper, kept)
        if fixed and attn:
            text += (
                f"On the longest inputs ({escape(last)} words) the fixed-vector model keeps"
                f" {percent(max(kept[m] for m in fixed))} of its BLEU on the shortest"
                f" ({escape(first)} words), the models with attention at least"
                f" {percent(min(kept[m] for m in attn))}. "
            )
    generation = cost_figures.bench_tables(paper.study, "generation")
    if not generation.empty and "speedup" in generation:
        top = generation.sort_values("new_tokens").iloc[-1]
        text += (
            f"A KV cache speeds up generating {int(top['new_tokens'])} tokens"
            f" {number(top['speedup'], 1)}-fold on {escape(top.get('device', 'the CPU'))}. "
        )
    return text + "\n"


def setup(paper: Paper) -> str:
    study = paper.study
    manifest = study.manifest
    config = study.config
    splits = manifest.get("splits", {})
    data = config.get("data", {})
    text = []
    if splits:
        train = splits.get("train", {})
        words = train.get("source_words", {})
        text.append(
            f"\\paragraph{{Data.}} The {escape(data.get('corpus', 'parallel'))} corpus"
            f" ({escape(manifest.get('source', data.get('src', '')))}$\\to$"
            f"{escape(manifest.get('target', data.get('tgt', '')))}) is fetched and checked"
            " against fixed SHA-256 sums; after Unicode normalisation the splits hold "
            + words_list(
                [
                    f"{info.get('pairs', 0):,} pairs ({escape(name)})"
                    for name, info in splits.items()
                ]
            )
            + (
                f". Training sources average {number(words.get('mean', 0))} words (longest"
                f" {words.get('max', 0):,})"
                if words
                else ""
            )
            + ". "
        )
        joined = [n for n in splits if ".concat" in n or n in data.get("joined_tests", {})]
        if joined:
            text.append(
                "Because these sentences are short, test sets that join consecutive"
                " pairs into longer inputs are scored as well ("
                + words_list([f"\\texttt{{{escape(n)}}}" for n in joined])
                + "). "
            )
        join = data.get("join") or {}
        if join.get("k"):
            weights = join.get("weights")
            text.append(
                "Training and validation examples join $k$ consecutive pairs, $k$ drawn per"
                " example from "
                + words_list([str(k) for k in join["k"]], "or")
                + (
                    f" with probabilities {escape(', '.join(str(w) for w in weights))}"
                    if weights
                    else " so that every $k$ carries the same share of tokens"
                )
                + "; each pair is used once, so long inputs are in the training distribution"
                " and an epoch holds as many tokens as without joining. "
            )
        else:
            text.append(
                "Training examples are single pairs: no length mixing is configured,"
                " so joined test inputs are longer than anything seen in training. "
            )
    else:
        text.append("\\paragraph{Data.} The data manifest is pending in this build. ")
    vocab = data.get("bpe_vocab_size")
    text.append(
        "\\paragraph{Tokenisation.} A joint sentencepiece BPE vocabulary"
        + (f" of {int(vocab):,} pieces" if vocab else "")
        + " is learnt on the"
        " training split. "
    )
    facts = paper.facts
    if not facts.empty:
        kinds = sorted(
            {
                f"{escape(r.get('arch', '?'))}"
                + (f"/{escape(r['attention'])}" if isinstance(r.get("attention"), str) else "")
                for _, r in facts.iterrows()
            }
        )
        seeds = sorted({int(s) for s in facts["seed"].dropna()}) if "seed" in facts else []
        text.append(
            f"\\paragraph{{Models and budgets.}} {len(facts)} runs"
            f" ({facts['variant'].nunique()} variants, seeds "
            + words_list([str(s) for s in seeds])
            + ") of the kinds "
            + words_list(kinds)
            + "; Table~\\ref{tab:budget} gives each run's epochs,"
            " optimiser steps, target tokens and wall time. "
        )
        train = config.get("train", {})
        if train:
            epochs, patience = train.get("epochs"), train.get("patience")
            # early stopping can trigger only in a run longer than the patience (a model may
            # train for more epochs than the default)
            longest = facts["epochs"].max() if "epochs" in facts else epochs
            text.append(
                f"Training uses AdamW with learning rate {escape(train.get('lr'))}"
                f" ({escape(train.get('warmup_steps'))} warmup steps, then cosine decay),"
                f" batches of about {number(train.get('max_tokens', 0), 0)} tokens and label"
                f" smoothing {escape(train.get('label_smoothing'))}, for {epochs_text(epochs)}"
                + (
                    f", stopping early after {epochs_text(patience)} without improvement"
                    if patience is not None and longest is not None and patience < longest
                    else ""
                )
                + ". "
                + own_training_settings(config.get("models", {}), facts)
            )
    env = run_environment([r.meta for r in study.runs.values()])
    if env:
        text.append(
            f"\\paragraph{{Hardware.}} Runs were made on {escape(env.get('device', '?'))}"
            f" ({escape(env.get('device_name', env.get('host', '')))}) with"
            f" {escape(env.get('threads', '?'))} thread(s) per training job; software"
            " versions are in Appendix~\\ref{app:reproducibility}. "
        )
    signatures = sorted(set(study.scores.get("signature", pd.Series(dtype=str)).dropna()))
    text.append(
        "\\paragraph{Scoring.} BLEU and chrF come from sacrebleu with 95\\% bootstrap"
        " intervals, overall and per bucket of source length"
        + (" (signatures in Appendix~\\ref{app:reproducibility})" if signatures else "")
        + ". "
    )
    return "\n\n".join(text) + "\n"


def epochs_text(n) -> str:
    return f"{escape(n)} epoch{'' if n == 1 else 's'}"


def own_training_settings(models: dict, facts: pd.DataFrame) -> str:
    """'Models that set their own: a and b lr 0.003; c epochs 3.' for the trained base models
    whose config overrides the training defaults (their sweep points inherit them)."""
    trained = set(facts.get("base_model", pd.Series(dtype=str)).dropna())
    groups: dict[str, list[str]] = {}
    for name, model in models.items():
        if name in trained and model.get("train"):
            settings = ", ".join(
                f"{escape(key)} {escape(value)}" for key, value in sorted(model["train"].items())
            )
            groups.setdefault(settings, []).append(latex.name(name))
    if not groups:
        return ""
    return (
        "Models that set their own (their sweep points too): "
        + "; ".join(f"{words_list(names)}: {settings}" for settings, names in groups.items())
        + ". "
    )


def threats(paper: Paper) -> str:
    facts, study = paper.facts, paper.study
    items = []
    epochs = facts["epochs"].dropna() if "epochs" in facts else pd.Series(dtype=float)
    curves = training_figures.curves(study)
    falling = set()
    for run, rows in curves[curves["split"] == "valid"].groupby("run") if not curves.empty else []:
        losses = rows.sort_values("epoch")["loss"].to_numpy()
        if len(losses) < 2 or losses[-1] < losses[-2]:
            falling.add(run)
    if falling:
        items.append(
            f"\\item \\emph{{Convergence.}} {len(falling)} of {len(facts)} runs were"
            " still improving when training stopped"
            + (f" (at most {latex.number(epochs.max(), 0)} epoch(s))" if len(epochs) else "")
            + "; differences between models may change with longer"
            " training."
        )
    seeds = facts["seed"].nunique() if "seed" in facts and len(facts) else 0
    items.append(
        f"\\item \\emph{{Seeds.}} Each variant ran with {seeds} seed"
        + ("s" if seeds != 1 else "")
        + "; the intervals are bootstrap intervals over"
        " test sentences"
        + (
            ", which do not cover the variation between training runs."
            if seeds < 2
            else ", pooled over seeds."
        )
    )
    data = study.config.get("data", {})
    corpora = [data.get("corpus", "one corpus")] + [
        extra.get("corpus", name) for name, extra in data.get("extra", {}).items()
    ]
    items.append(
        "\\item \\emph{Corpora.} The trained models use "
        + words_list([escape(c) for c in corpora])
        + (", a corpus of short image captions" if corpora == ["multi30k"] else "")
        + "; the published figures come from WMT news text and larger models, so only the"
        " direction of an effect carries over."
    )
    env = run_environment([r.meta for r in study.runs.values()])
    if env.get("device", "cpu") == "cpu":
        elsewhere = study.config.get("bench", {}).get("measured")
        items.append(
            "\\item \\emph{Timing.} Training and generation were timed on a shared CPU; those"
            " times include noise from other processes and say nothing about training speed on"
            " a GPU."
            + (
                " The GPU kernel rows come from one run of \\texttt{scripts/gpu\\_check.sh}"
                " outside this build, at the commit Section~\\ref{sec:cost} names."
                if elsewhere
                else ""
            )
        )
    claims = study.claims
    if not claims.empty and "verdict" in claims:
        pending = claims[claims["verdict"] == "pending"]
        if len(pending):
            one = len(pending) == 1
            items.append(
                f"\\item \\emph{{Pending claims.}} {len(pending)} claim{'' if one else 's'} ("
                + escape(", ".join(pending["id"].astype(str)))
                + f") {'has' if one else 'have'} no verdict in this build; the ledger says why"
                + ("." if one else " for each.")
            )
    bad = facts[facts["status"] != "ok"] if "status" in facts else facts.iloc[:0]
    if len(bad):
        items.append(
            "\\item \\emph{Failed runs.} "
            + words_list(
                [f"{latex.name(r['run'])} ({escape(r['status'])})" for _, r in bad.iterrows()]
            )
            + " did not finish normally."
        )
    if study.missing:
        items.append(
            "\\item \\emph{Missing inputs.} The report could not read "
            + words_list(
                [
                    f"\\texttt{{{escape(Path(p).name)}}} ({escape(why)})"
                    for p, why in list(study.missing.items())[:8]
                ]
            )
            + (f" and {len(study.missing) - 8} more" if len(study.missing) > 8 else "")
            + "; the sections that need them say what is pending."
        )
    return "\\begin{itemize}\n" + "\n".join(items) + "\n\\end{itemize}\n"


def reproducibility(paper: Paper, configfiles: list[str]) -> str:
    study = paper.study
    commit, dirty = git_state()
    parts = [
        "\\paragraph{Code.} The code did not run from a git checkout, so no commit is recorded."
        if commit == "unknown"
        else f"\\paragraph{{Code.}} Commit \\texttt{{{escape(commit)}}}"
        + (" with uncommitted changes" if dirty else " (clean working tree)")
        + "."
    ]
    if study.config:
        parts.append(
            f"\\paragraph{{Configuration.}} Merged configuration hash"
            f" \\texttt{{{escape(config_hash(study.config))}}} (the full merged"
            " configuration is \\texttt{results/paper/config.json}); config files: "
            + words_list([f"\\texttt{{{escape(f)}}}" for f in configfiles] or ["--"])
            + "."
        )
    inputs = study.manifest.get("inputs", {})
    if inputs:
        rows = [
            [f"\\texttt{{{escape(name)}}}", f"\\texttt{{{escape(digest[:24])}}}\\dots"]
            for name, digest in sorted(inputs.items())
        ]
        parts.append(
            "\\paragraph{Corpus.} SHA-256 of the fetched files (first 24 hex digits):"
            "\n\n{\\scriptsize\n" + latex.tabular(["file", "sha256"], rows, "ll") + "}"
        )
    env = run_environment([r.meta for r in study.runs.values()])
    if env:
        versions = [
            f"{escape(k)} {escape(env[k])}"
            for k in ("python", "torch", "triton", "sacrebleu", "sentencepiece", "snakemake")
            if k in env
        ]
        parts.append(
            "\\paragraph{Software and device.} " + words_list(versions) + "; device"
            f" {escape(env.get('device', '?'))}"
            f" ({escape(env.get('device_name', env.get('host', '?')))})."
        )
    bench = study.benchmarks
    if not bench.empty:
        per_rule = (
            bench.groupby("rule")
            .agg(jobs=("s", "size"), total=("s", "sum"), longest=("s", "max"))
            .reset_index()
        )
        rows = [
            [
                f"\\texttt{{{escape(r['rule'])}}}",
                str(int(r["jobs"])),
                latex.number(r["total"], 1),
                latex.number(r["longest"], 1),
            ]
            for _, r in per_rule.sort_values("total", ascending=False).iterrows()
        ]
        parts.append(
            "\\paragraph{Wall time per rule} (Snakemake \\texttt{benchmark:} files"
            " under \\texttt{results/benchmarks/}):\n\n{\\scriptsize\n"
            + latex.tabular(["rule", "jobs", "total s", "longest s"], rows, "lrrr")
            + "}"
        )
    else:
        parts.append(
            "\\paragraph{Wall time per rule.} Pending: no Snakemake benchmark files"
            " under \\texttt{results/benchmarks/} in this build."
        )
    signatures = sorted(set(study.scores.get("signature", pd.Series(dtype=str)).dropna()))
    if signatures:
        parts.append(
            "\\paragraph{sacrebleu signatures.}\n\n{\\scriptsize "
            + "\\\\\n".join(f"\\texttt{{{escape(s)}}}" for s in signatures)
            + "}"
        )
    files = " ".join(f"--configfile {f}" for f in configfiles) or "--configfile config/config.yaml"
    parts.append(
        "\\paragraph{Rerun.} From a fresh clone, \\texttt{make paper} sets up the environment"
        " and runs the workflow; the same build by hand, and one figure or run again:"
        "\n\n{\\small\\begin{verbatim}\n"
        f"snakemake {files} --cores all\n"
        f"snakemake {files} --cores all --forcerun paper_sections\n"
        f"snakemake {files} --cores all --forcerun train --until collect_scores\n"
        "\\end{verbatim}}"
    )
    return "\n\n".join(parts) + "\n"


def macros(paper: Paper) -> str:
    values = {
        **environment_macros(run_environment([r.meta for r in paper.study.runs.values()])),
        **data_macros(paper.study.manifest),
        "MainTestSet": escape(paper.test_set),
    }
    return latex.macro_file(values, "softlookup.report.sections")


def write(study: Study, figures: list[Path], out_dir: Path, configfiles: list[str]) -> dict:
    paper = Paper(study, {Path(f).stem: Path(f) for f in figures if Path(f).exists()})
    files = {
        "macros.tex": macros(paper),
        "abstract.tex": abstract(paper),
        "setup.tex": setup(paper),
        "results.tex": results(paper),
        "threats.tex": threats(paper),
        "reproducibility.tex": reproducibility(paper, configfiles),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out_dir / name).write_text(
            f"% Written by softlookup.report.sections; do not edit.\n{text}"
        )
    return files


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, default=Path("results"))
    parser.add_argument("--config", type=Path, help="the merged config as JSON")
    parser.add_argument("--configfiles", nargs="*", default=[], help="config files of the build")
    parser.add_argument("--runs", nargs="*", help="the runs of the config (default: all on disk)")
    parser.add_argument("--figures", nargs="*", default=[], type=Path)
    parser.add_argument("--bench", nargs="*", type=Path, help="benchmark CSVs (default: all)")
    parser.add_argument("--out-dir", required=True, type=Path)
    args = parser.parse_args(argv)
    study = load(args.results, args.config, args.runs, args.bench)
    for name in write(study, args.figures, args.out_dir, args.configfiles):
        print(args.out_dir / name)


if __name__ == "__main__":
    main()
