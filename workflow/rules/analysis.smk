# Attention weights of trained runs as evidence (claims B5, D1): per map, row entropy and where
# the largest weight lands, over the first sentences of one test set; an alignment figure per run;
# LaTeX macros for the paper from all of them. Runs, sentences and test set: config["analysis"].

ANALYSIS_RUNS = config["analysis"]["runs"]
ANALYSIS_TEST_SET = config["analysis"]["test_set"]
ANALYSIS_CSVS = expand("results/analysis/attention_{run}.csv", run=ANALYSIS_RUNS)
ANALYSIS_FIGURES = expand("results/figures/alignment_{run}.pdf", run=ANALYSIS_RUNS)
ATTENTION_MACROS = "results/analysis/attention_macros.tex"
ANALYSIS_OUTPUTS = [*ANALYSIS_CSVS, *ANALYSIS_FIGURES, ATTENTION_MACROS]

_unknown_runs = sorted(set(ANALYSIS_RUNS) - set(RUNS))
if _unknown_runs:
    raise ValueError(f"config analysis.runs names runs this config does not train: {_unknown_runs}"
                     f" (runs: {RUNS})")
_prepared_splits = sorted({*config["data"]["splits"], *TEST_SETS})
if ANALYSIS_TEST_SET not in _prepared_splits:
    raise ValueError(f"config analysis.test_set {ANALYSIS_TEST_SET!r} is not a prepared split:"
                     f" use one of {_prepared_splits}")
if not 0 <= config["analysis"]["example"] < config["analysis"]["sentences"]:
    raise ValueError(f"config analysis.example ({config['analysis']['example']}) must be below"
                     f" analysis.sentences ({config['analysis']['sentences']})")


rule attention_maps:
    input:
        model="results/runs/{run}/model.pt",
        meta="results/runs/{run}/meta.json",
        spm=f"{DATA_DIR}/spm.model",
        test=expand(f"{DATA_DIR}/{ANALYSIS_TEST_SET}.{{lang}}", lang=[SRC, TGT]),
    output:
        csv="results/analysis/attention_{run}.csv",
        figure=report(
            "results/figures/alignment_{run}.pdf",
            caption="../report/alignment.rst",
            category="Attention",
        ),
    log:
        "results/logs/analysis/{run}.log",
    params:
        run_dir="results/runs/{run}",
        sentences=config["analysis"]["sentences"],
        example=config["analysis"]["example"],
    threads: 1
    shell:
        "{PYTHON}.analysis.attention_maps --run-dir {params.run_dir} --spm {input.spm}"
        " --data-dir " + DATA_DIR + " --test-set {ANALYSIS_TEST_SET} --src {SRC} --tgt {TGT}"
        " --sentences {params.sentences} --example {params.example} --threads {threads}"
        " --out-csv {output.csv} --out-figure {output.figure} > {log} 2>&1"


rule attention_macros:
    input:
        ANALYSIS_CSVS,
    output:
        ATTENTION_MACROS,
    log:
        "results/logs/analysis/macros.log",
    shell:
        "{PYTHON}.report.attention_macros --csvs {input} --test-set {ANALYSIS_TEST_SET}"
        " --out {output} > {log} 2>&1"
