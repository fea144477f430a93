"""The report generator on small synthetic result tables: sentences chosen by the measurement,
pending sentences for missing evidence, LaTeX that compiles for any set of runs and seeds."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from softlookup.report import build, latex, macros_claims, sections
from softlookup.report.figures import alignment, cost, scores, style, training
from softlookup.report.study import load

ROOT = Path(__file__).resolve().parents[1]
BUCKETS = ["1-10", "11-15", "16-20", "21-30", "31-45", "46-60", ">60"]


def variant_settings(variant: str) -> tuple[str, dict, dict]:
    """(base model, model settings, sweep) of a synthetic variant name."""
    base, *points = variant.split(".")
    model = {
        "gru_none": {"arch": "gru", "attention": "none"},
        "gru_additive": {"arch": "gru", "attention": "additive"},
        "gru_dot": {"arch": "gru", "attention": "dot"},
        "transformer": {"arch": "transformer", "attention": "dot", "heads": 4, "causal_mask": True},
    }[base]
    sweep = {}
    for point in points:
        key, value = point.split("-")
        sweep[key] = {"false": False, "true": True}.get(value, value)
    model = {**model, **sweep}
    return base, model, sweep


def make_results(
    root: Path,
    bleu: dict[str, float],
    *,
    seeds=(1,),
    drop: dict[str, float] | None = None,
    train_loss: dict[str, float] | None = None,
    verdicts: dict[str, str] | None = None,
) -> Path:
    """results/ with a scores table, runs, a ledger and a generation benchmark.

    bleu: variant -> overall BLEU; drop: variant -> BLEU lost from the first to the last bucket.
    """
    drop, train_loss = drop or {}, train_loss or {}
    results = root / "results"
    rows = []
    for variant, value in bleu.items():
        base, model, sweep = variant_settings(variant)
        for seed in seeds:
            run = f"{variant}-s{seed}"
            folder = results / "runs" / run
            folder.mkdir(parents=True)
            (folder / "config.json").write_text(
                json.dumps(
                    {
                        "run": run,
                        "variant": variant,
                        "base_model": base,
                        "sweep": sweep,
                        "seed": seed,
                        "model": model,
                        "train": {"epochs": 2},
                    }
                )
            )
            loss = train_loss.get(variant, 3.0)
            (folder / "meta.json").write_text(
                json.dumps(
                    {
                        "status": "ok",
                        "epochs": 2,
                        "parameters": 1000,
                        "train_wall_s": 5.0,
                        "train_tokens_per_s": 2000.0 if model["attention"] == "dot" else 1500.0,
                        "final_train_loss": loss,
                        "best_val_loss": loss + 0.5,
                        "environment": {
                            "python": "3.11",
                            "torch": "2",
                            "device": "cpu",
                            "device_name": "test cpu",
                            "threads": 1,
                        },
                    }
                )
            )
            pd.DataFrame(
                {
                    "epoch": [1, 2],
                    "steps": [10, 20],
                    "train_loss": [loss + 1, loss],
                    "val_loss": [loss + 1.2, loss + 0.5],
                    "target_tokens": [500, 500],
                    "wall_s": [2.5, 2.5],
                }
            ).to_csv(folder / "log.csv", index=False)
            common = {
                "run": run,
                "variant": variant,
                "base_model": base,
                "seed": seed,
                "status": "ok",
                "metric": "bleu",
                "signature": "nrefs:1|bs:100",
            }
            for test_set in ("test", "test.concat3"):
                rows.append(
                    {
                        **common,
                        "test_set": test_set,
                        "bucket": "all",
                        "value": value,
                        "ci_low": value - 1,
                        "ci_high": value + 1,
                    }
                )
                rows.append(
                    {
                        **common,
                        "test_set": test_set,
                        "bucket": "all",
                        "metric": "chrf",
                        "value": value + 20,
                        "ci_low": value + 19,
                        "ci_high": value + 21,
                    }
                )
                for i, bucket in enumerate(BUCKETS):
                    v = value - drop.get(base, 2.0) * i / (len(BUCKETS) - 1)
                    rows.append(
                        {
                            **common,
                            "test_set": test_set,
                            "bucket": bucket,
                            "value": v,
                            "ci_low": v - 1,
                            "ci_high": v + 1,
                        }
                    )
    (results / "tables").mkdir(parents=True)
    pd.DataFrame(rows).to_csv(results / "tables" / "scores.csv", index=False)
    verdicts = verdicts or {}
    claims = [
        {
            "id": cid,
            "group": cid[0],
            "short": f"claim {cid} in a few words",
            "source": "E1",
            "expected": "more than 0.5",
            "measured": "0.75",
            "ci_low": 0.7,
            "ci_high": 0.8,
            "verdict": verdicts.get(cid, "reproduced"),
            "reason": "1 of 1 checks pass",
            "where": "sec:results",
            "rule": "probe",
            "outputs": "results/probes/x.csv",
            "config_hash": "abc",
            "python": "3.11",
        }
        for cid in ("A1", "B1", "C1", "D1", "D2", "D4", "D5")
    ]
    (results / "claims").mkdir(parents=True)
    pd.DataFrame(claims).to_csv(results / "claims" / "claims.csv", index=False)
    checks = [
        {
            "id": c["id"],
            "check": "value",
            "expected": "0.5",
            "measured": "0.75",
            "status": "pass",
            "output": "results/probes/x.csv",
        }
        for c in claims
    ]
    pd.DataFrame(checks).to_csv(results / "claims" / "checks.csv", index=False)
    (results / "bench").mkdir(parents=True)
    pd.DataFrame(
        {
            "device": "cpu",
            "new_tokens": [25, 50, 100, 200],
            "speedup": [1.5, 2, 3, 5],
            "identical": True,
            "last_step_cache_s": [1e-3, 1.1e-3, 1.2e-3, 1.3e-3],
            "last_step_recompute_s": [1e-3, 2e-3, 4e-3, 8e-3],
        }
    ).to_csv(results / "bench" / "generation_cpu.csv", index=False)
    return results


CONFIG = {
    "data": {"corpus": "multi30k", "bpe_vocab_size": 500},
    "evaluate": {"test_sets": ["test", "test.concat3"]},
    "bench": {"devices": ["cpu"]},
}


def generate(results: Path, figures: list[Path] = (), config: dict = CONFIG) -> dict[str, str]:
    config_file = results / "config.json"
    config_file.write_text(json.dumps(config))
    return sections.write(
        load(results, config_file), list(figures), results / "generated", ["config/test.yaml"]
    )


def text_of(files: dict[str, str]) -> str:
    return "\n".join(files.values())


def assert_no_placeholders(text: str) -> None:
    for bad in ("not measured", "??", "nan", "None", "n/a"):
        assert bad not in text, bad


BASE = {"gru_none": 10.0, "gru_additive": 20.0, "gru_dot": 21.0, "transformer": 25.0}


def test_length_sentence_follows_the_measurement(tmp_path):
    shown = generate(
        make_results(tmp_path / "a", BASE, drop={"gru_none": 8, "gru_additive": 1, "gru_dot": 1})
    )
    hidden = generate(
        make_results(tmp_path / "b", BASE, drop={"gru_none": 1, "gru_additive": 4, "gru_dot": 4})
    )
    # the shares follow the measurement; the direction is the ledger's verdict sentence
    assert "the fixed-vector model keeps 20\\% of its short-sentence BLEU" in shown["results.tex"]
    assert "the fixed-vector model keeps 90\\% of its short-sentence BLEU" in hidden["results.tex"]
    for files in (shown, hidden):
        assert_no_placeholders(text_of(files))


def test_masking_sentence_follows_the_measurement(tmp_path):
    bleu = {**BASE, "transformer.causal_mask-false": 2.0}
    copying = generate(
        make_results(tmp_path / "a", bleu, train_loss={"transformer.causal_mask-false": 0.5})
    )
    no_copying = generate(
        make_results(
            tmp_path / "b",
            {**bleu, "transformer.causal_mask-false": 25.0},
            train_loss={"transformer.causal_mask-false": 3.5},
        )
    )
    assert "the pattern of a decoder that copies" in copying["results.tex"]
    assert "does not show the copying pattern" in no_copying["results.tex"]


def test_score_function_sentence_follows_the_intervals(tmp_path):
    apart = generate(make_results(tmp_path / "a", BASE))  # dot 21 +-1 vs additive 20 +-1
    ahead = generate(make_results(tmp_path / "b", {**BASE, "gru_dot": 30.0}))
    assert "not different within the 95\\% intervals from the additive" in apart["results.tex"]
    assert "higher than the additive" in ahead["results.tex"]


def test_a_sweep_on_two_models_compares_each_with_its_own_base(tmp_path):
    capped = {**BASE, "gru_none.max_source_words-20": 9.5, "gru_additive.max_source_words-20": 19.0}
    results = make_results(tmp_path, capped)
    text = generate(results)["results.tex"]
    # unpaired intervals (+-1) overlap: each cap is "not different" from its own base model
    none = text[text.index("none with max\\_source\\_words = 20") :]
    assert none.startswith("none with max\\_source\\_words = 20 BLEU is 9.5 [8.5, 10.5], not")
    assert "the base model's 10.0 [9.0, 11.0]" in none  # gru_none's, not gru_additive's 20.0
    drawn = scores.sweep_data(load(results, results / "config.json"), "max_source_words")
    assert set(drawn["series"]) == {"gru_none", "gru_additive"}  # one line per model
    # a paired comparison of the same pair on the paper's test set decides instead
    row = {"comparison": "cap", "system_a": "gru_additive.max_source_words-20",
           "system_b": "gru_additive", "test_set": "test", "bucket": "all", "metric": "bleu",
           "mean_a": 19.0, "mean_b": 20.0, "delta": 1.0, "ci_low": 0.6, "ci_high": 1.4,
           "p_value": 0.001, "seeds": 1, "n_sentences": 100, "method": "paired bootstrap"}  # fmt: skip
    (results / "tables").mkdir(exist_ok=True)
    pd.DataFrame([row]).to_csv(results / "tables" / "comparisons.csv", index=False)
    text = generate(results)["results.tex"]
    assert "lower than (paired difference -1.00 [-1.40, -0.60])" in text


def test_padding_weight_names_only_the_runs_where_it_is_not_zero(tmp_path):
    results = make_results(tmp_path, BASE)
    (results / "analysis").mkdir()
    for run, mass in [("gru_additive-s1", 0.0), ("gru_dot-s1", 0.0), ("transformer-s1", 0.06)]:
        pd.DataFrame([{"map": "cross", "quantity": "padding_mass_mean", "value": mass}]).to_csv(
            results / "analysis" / f"attention_{run}.csv", index=False
        )
    text = generate(results)["results.tex"]
    assert "In 2 of the 3 analysed runs padding keys receive exactly zero weight" in text
    assert "mean weight per row of transformer-\\allowbreak{}s1 0.060 in the others" in text
    assert "dot-\\allowbreak{}s1 0" not in text  # the masked runs are counted, not listed


def test_missing_evidence_reads_as_pending(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    files = generate(results)
    text = text_of(files)
    assert "pending" in text and "Claim D1 has no row in the claims ledger" in text
    assert_no_placeholders(text)
    assert "no Snakemake benchmark files" in files["reproducibility.tex"]


def test_a_diverged_run_is_said_in_words(tmp_path):
    results = make_results(tmp_path, BASE)
    meta = results / "runs" / "gru_dot-s1" / "meta.json"
    meta.write_text(json.dumps({**json.loads(meta.read_text()), "status": "diverged"}))
    (results / "runs" / "gru_none-s1" / "meta.json").unlink()  # a run that never finished
    files = generate(results)
    assert r"gru\_\allowbreak{}dot-\allowbreak{}s1 (diverged)" in files["results.tex"]
    assert r"gru\_\allowbreak{}none-\allowbreak{}s1 (missing)" in files["results.tex"]
    assert "\\emph{diverged}" in files["results.tex"]


def test_a_pending_claim_says_what_is_missing(tmp_path):
    results = make_results(tmp_path, BASE, verdicts={"D1": "pending"})
    claims = pd.read_csv(results / "claims" / "claims.csv")
    claims.loc[claims["id"] == "D1", "reason"] = (
        "nothing measured yet: not measured in this configuration: no comparison d1 in"
        " results/tables/comparisons.csv"
    )
    claims.to_csv(results / "claims" / "claims.csv", index=False)
    files = generate(results)
    text = files["results.tex"]
    assert "Claim D1 (claim D1 in a few words) is pending in this build: no comparison d1" in text
    assert_no_placeholders(text)
    assert "1 claim (D1) has no verdict in this build; the ledger says why." in text_of(files)


def test_claims_table_macros_and_checks(tmp_path):
    results = make_results(tmp_path, BASE, verdicts={"D4": "not reproduced"})
    out = macros_claims.write(
        results / "claims" / "claims.csv", results / "claims" / "checks.csv", tmp_path / "gen"
    )
    table = out["claims_table.tex"].read_text()
    assert "0.75 [0.7, 0.8]" in table and r"\ref{sec:results}" in table
    assert r"\textbf{not reproduced}" in table
    macros = out["claims_macros.tex"].read_text()
    assert r"\newcommand{\ClaimVerdictDFour}{not reproduced}" in macros
    assert r"\newcommand{\ClaimsNotReproduced}{1}" in macros
    assert "tab:checks" in out["checks_table.tex"].read_text()
    missing = macros_claims.write(tmp_path / "none.csv", None, tmp_path / "gen2")
    assert "was not written" in missing["claims_table.tex"].read_text()


def test_latex_helpers():
    assert latex.macro_name("bleu", "gru_additive-s1") == "BleuGruAdditiveSOne"
    assert latex.macro_name("A1") == "AOne"
    assert latex.escape("a_b & 50%") == r"a\_b \& 50\%"
    assert latex.escape("1.5e-07") == r"\ensuremath{1.5\times10^{-7}}"
    assert latex.interval(21.04, 20, 22.5) == "21.0 [20.0, 22.5]"
    assert "not measured" not in latex.escape("x: not measured in this configuration")
    assert latex.small(0) == "0" and latex.small(1.2e-6) == r"\ensuremath{1.2\times10^{-6}}"
    with pytest.raises(ValueError):
        latex.newcommand("Bad1", "x")


def hand_typed_numbers(tex: str) -> list[str]:
    """Digits in the prose of a hand-written .tex: after comments, options, dimensions,
    references and arguments of \\input/\\label/\\cite are removed."""
    body = tex.split(r"\begin{document}")[-1]
    body = re.sub(r"(?<!\\)%.*", "", body)
    body = re.sub(
        r"\\(input|label|ref|cite[pt]?|includegraphics|bibliography\w*|"
        r"begin|end|section|appendix)\*?(\[[^\]]*\])?\{[^}]*\}",
        "",
        body,
    )
    body = re.sub(r"\[[^\]]*\]", "", body)
    return re.findall(r"[^\n]*\d[^\n]*", body)


def test_no_number_is_typed_by_hand_in_the_paper():
    sources = [ROOT / "paper" / "paper.tex", *sorted((ROOT / "paper" / "sections").glob("*.tex"))]
    for path in sources:
        assert hand_typed_numbers(path.read_text()) == [], path


def test_every_figure_draws_on_synthetic_and_on_empty_results(tmp_path):
    style.setup()
    for root, bleu in (
        (tmp_path / "full", {**BASE, "transformer.heads-1": 24.0}),
        (tmp_path / "empty", {}),
    ):
        results = make_results(root, bleu)
        study = load(results)
        figures = {
            "bleu_by_length": scores.draw(study, "bleu_by_length"),
            "sweep_heads": scores.draw(study, "sweep_heads"),
            "training": training.training_figure(study),
            "generation_steps": cost.generation_figure(study),
            "kernel_cost": cost.kernel_figure(study),
            "alignment": alignment.alignment_figure(pd.DataFrame()),
        }
        for name, fig in figures.items():
            out = style.save(fig, root / f"{name}.pdf")
            assert out.read_bytes()[:5] == b"%PDF-"
    assert not scores.sweep_data(load(tmp_path / "full" / "results"), "heads").empty


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
@pytest.mark.parametrize("case", ["two seeds, no fixed-vector model", "nothing measured"])
def test_the_paper_compiles_for_any_set_of_runs(tmp_path, case):
    if case == "nothing measured":
        results = tmp_path / "results"
        results.mkdir()
    else:
        bleu = {k: v for k, v in BASE.items() if k != "gru_none"}
        bleu["transformer.heads-1"] = 24.0
        results = make_results(tmp_path, bleu, seeds=(1, 2))
    style.setup()
    study = load(results)
    drawn = [
        style.save(fig, tmp_path / "figures" / f"{name}.pdf")
        for name, fig in (
            ("bleu_by_length", scores.draw(study, "bleu_by_length")),
            ("sweep_heads", scores.draw(study, "sweep_heads")),
            ("training", training.training_figure(study)),
            ("generation_steps", cost.generation_figure(study)),
        )
    ]
    generated = tmp_path / "generated"
    sections.write(study, drawn, generated, ["config/test.yaml"])
    macros_claims.write(
        results / "claims" / "claims.csv", results / "claims" / "checks.csv", generated
    )
    pdf = tmp_path / "paper.pdf"
    sources = [ROOT / "paper" / part for part in ("paper.tex", "refs.bib", "sections")]
    code = build.build(sources, sorted(generated.glob("*.tex")), drawn, tmp_path / "build", pdf)
    assert code == 0, (tmp_path / "build" / "paper.log").read_text()[-3000:]
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "Claims ledger" in text
    if case != "nothing measured":
        assert "gru_dot" in text and "dot-s2" in text  # the second seed's run is named
    assert_no_placeholders(text.replace("None", ""))


@pytest.mark.parametrize("measured", [True, False])
def test_every_section_a_ledger_row_can_name_exists(tmp_path, measured):
    results = make_results(tmp_path, BASE) if measured else tmp_path / "results"
    results.mkdir(exist_ok=True)
    text = text_of(generate(results))
    sources = "".join(p.read_text() for p in (ROOT / "paper").rglob("*.tex"))
    for label in macros_claims.SECTION_LABELS:
        assert f"\\label{{{label}}}" in text + sources, label


def test_the_latex_hint_names_a_make_target_that_exists():
    rules = build.HINT
    makefile = (ROOT / "Makefile").read_text()
    targets = re.findall(r"make ([\w-]+)", rules)
    assert targets
    for target in targets:
        assert re.search(rf"^{target}:", makefile, re.MULTILINE), target


def test_a_grid_sweep_draws_one_line_per_other_setting(tmp_path):
    bleu = {
        **BASE,
        "transformer.d_k-8.scale-true": 24.0,
        "transformer.d_k-8.scale-false": 20.0,
        "transformer.d_k-64.scale-true": 25.0,
        "transformer.d_k-64.scale-false": 10.0,
    }
    results = make_results(tmp_path, bleu)
    (results / "analysis").mkdir()
    for variant, weight in (("transformer.d_k-64.scale-false", 0.97), ("transformer", 0.4)):
        pd.DataFrame({"run": f"{variant}-s1", "map": "cross", "quantity": ["max_weight_mean"],
                      "value": [weight]}).to_csv(
            results / "analysis" / f"attention_{variant}-s1.csv", index=False)
    study = load(results)
    assert scores.sweep_keys(study) == ["d_k", "scale"]
    assert scores.second_panel("d_k", scores.sweep_data(study, "d_k")) == "max_weight"
    assert scores.second_panel("heads", scores.sweep_data(study, "d_k")) == "parameters"
    data = scores.sweep_data(study, "d_k")
    assert set(data["series"]) == {"scale = true", "scale = false", "scale = default"}
    assert set(data["swept"]) == {"8", "64", "default"}
    text = generate(results)["results.tex"]
    assert r"d\_k = 64, scale = false BLEU is 10.0 [9.0, 11.0], lower than" in text
    assert "scale = false 0.970" in text  # the trained-model saturation
    style.setup()
    assert style.save(scores.draw(study, "sweep_d_k"), tmp_path / "f.pdf").exists()


@pytest.mark.skipif(shutil.which("latexmk") is None, reason="needs latexmk")
def test_a_latex_failure_prints_the_first_tex_errors(tmp_path, capsys):
    paper = tmp_path / "paper.tex"
    paper.write_text("\\documentclass{article}\\begin{document}\\AttnMissingMacro\\end{document}\n")
    code = build.build([paper], [], [], tmp_path / "build", tmp_path / "out.pdf")
    assert code != 0 and not (tmp_path / "out.pdf").exists()
    err = capsys.readouterr().err
    assert "! Undefined control sequence." in err and "AttnMissingMacro" in err


def test_gpu_rows_measured_elsewhere_name_their_source(tmp_path):
    """bench.measured: the committed H200 rows, named with device, versions, commit and folder."""
    results = make_results(tmp_path, BASE)
    measured = ROOT / "benchmarks" / "gpu" / "NVIDIA_H200" / "attention_cuda.csv"
    shutil.copy(measured, results / "bench" / "attention_cuda.csv")
    config = {**CONFIG, "bench": {"devices": ["cpu"], "measured": ["benchmarks/gpu/NVIDIA_H200"]}}
    files = generate(results, config=config)
    text = files["results.tex"]
    assert "The GPU kernel rows come from one run of" in text_of(files)  # threats to validity
    assert (
        "The cuda rows come from outside this build: \\texttt{scripts/gpu\\_check.sh} measured"
        " them on NVIDIA H200 (torch 2.11.0, Triton 3.6.0) at commit \\texttt{c698d93}"
    ) in text
    assert "No GPU benchmark is configured" not in text
    assert "GPU benchmark is configured" in generate(make_results(tmp_path / "b", BASE))["results.tex"]


def test_the_attention_table_has_one_row_per_model_averaged_over_seeds(tmp_path):
    results = make_results(tmp_path, BASE)
    (results / "analysis").mkdir()
    stats = {"entropy_mean": 0.5, "argmax_on_top_key_share": 0.3, "chance_share": 0.1}
    for run, weight in [("gru_additive-s1", 0.4), ("gru_additive-s2", 0.6), ("gru_dot-s1", 0.9)]:
        quantities = {**stats, "max_weight_mean": weight}
        pd.DataFrame({"run": run, "map": "cross", "quantity": list(quantities),
                      "value": list(quantities.values())}).to_csv(
            results / "analysis" / f"attention_{run}.csv", index=False)  # fmt: skip
    text = generate(results)["results.tex"]
    table = text[text.index("\\begin{tabular}{lrrrrr}") : text.index("\\label{tab:attention}")]
    assert "gru\\_\\allowbreak{}additive & 2 & 0.500 & 0.500 & 0.300 & 0.100" in table
    assert "gru\\_\\allowbreak{}dot & 1 & 0.500 & 0.900" in table
    assert "s1" not in table and "s2" not in table
    assert "In every model (2) that share is more than twice chance" in text


def test_a_tiny_difference_does_not_fill_the_panel():
    style.setup()
    _, (ax,) = style.subplots(1)
    ax.plot([0, 1], [3.704, 3.711])
    style.min_span(ax, [3.704, 3.711])
    low, high = ax.get_ylim()
    assert high - low == pytest.approx(0.05 * 3.7075) and low < 3.704 and high > 3.711
    _, (ax,) = style.subplots(1)
    ax.plot([0, 1], [2.0, 4.0])
    style.min_span(ax, [2.0, 4.0])  # a large difference keeps matplotlib's own limits
    assert ax.get_ylim()[0] < 2.0 and ax.get_ylim()[1] > 4.0 and ax.get_ylim()[1] < 4.5


def test_sequence_lengths_are_labelled_short():
    labels = [style.tick_label(v) for v in (64, 1000, 1024, 16384, 25.0)]
    assert labels == ["64", "1000", "1k", "16k", "25"]


def test_head_panels_share_the_first_panels_piece_labels():
    rows = [{"layer": 0, "head": head, "query_pos": q, "key_pos": k, "query_token": f"q{q}",
             "key_token": f"k{k}", "weight": 0.5} for head in (0, 1) for q in (0, 1) for k in (0, 1)]  # fmt: skip
    style.setup()
    fig = alignment.alignment_figure(pd.DataFrame(rows))
    panels = [ax for ax in fig.axes if ax.get_title()]
    assert [ax.get_title() for ax in panels] == ["mean over heads", "head 0", "head 1"]
    assert [t.get_text() for t in panels[0].get_xticklabels()] == ["k0", "k1"]
    assert all(not any(t.get_text() for t in ax.get_xticklabels()) for ax in panels[1:])
    assert [ax.get_xlabel() for ax in panels] == ["source piece (key)", "", ""]


def test_the_setup_names_the_models_with_their_own_training_settings():
    models = {
        "gru_none": {"arch": "gru", "train": {"lr": 0.003}},
        "gru_dot": {"arch": "gru", "train": {"lr": 0.003}},
        "transformer": {"arch": "transformer", "train": {"epochs": 3, "lr": 0.003}},
        "untrained": {"arch": "gru", "train": {"lr": 0.1}},
        "plain": {"arch": "gru"},
    }
    facts = pd.DataFrame({"base_model": ["gru_none", "gru_dot", "transformer", "plain"]})
    text = sections.own_training_settings(models, facts)
    assert "gru\\_\\allowbreak{}none and gru\\_\\allowbreak{}dot: lr 0.003" in text
    assert "transformer: epochs 3, lr 0.003" in text
    assert "untrained" not in text and "plain" not in text and "0.1" not in text
    assert sections.own_training_settings({"plain": {"arch": "gru"}}, facts) == ""


@pytest.mark.parametrize("patience, said", [(2, False), (1, True)])
def test_early_stopping_is_named_where_the_longest_run_could_stop(tmp_path, patience, said):
    results = make_results(tmp_path, BASE)  # every run trains 2 epochs
    config = {**CONFIG, "train": {"epochs": 1, "patience": patience, "lr": 0.002}}
    setup_text = generate(results, config=config)["setup.tex"]
    assert "for 1 epoch," in setup_text or "for 1 epoch." in setup_text
    assert ("stopping early after 1 epoch without" in setup_text) is said
    assert "after 2 epochs" not in setup_text
