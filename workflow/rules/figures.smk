# Figures of the paper, each drawn by softlookup.report.figures.<family> from result tables in the
# one style of report/figures/style.py (vector PDF, greyscale-readable). The paper's sections say
# in each caption which rule drew a figure and where the file is.

SWEEP_KEYS = sorted({key for sweep in config.get("sweeps", {}).values()
                     for key in sweep.get("grid", {sweep.get("key"): None}) if key})
SCORE_FIGURES = ["bleu_by_length", *(f"sweep_{key}" for key in SWEEP_KEYS)]
COST_FIGURES = ["generation_steps", "kernel_cost"]
# the example sentence drawn for the runs analysis.runs names (every_run adds statistics only)
ALIGNMENT_FIGURES = expand("results/figures/alignment_{run}.pdf",
                           run=[run for run in config["analysis"]["runs"] if run in RUNS])
# the training-budget paths of the D effects: this build's points beside the committed
# references of the converged study (config["convergence"])
CONVERGENCE = config.get("convergence") or {}
CONVERGENCE_FIGURES = ["results/figures/convergence.pdf"] if CONVERGENCE else []
FIGURES = [
    *expand("results/figures/{figure}.pdf", figure=[*SCORE_FIGURES, "training", *COST_FIGURES]),
    *ALIGNMENT_FIGURES,
    *CONVERGENCE_FIGURES,
]


rule figure_scores:
    input:
        scores="results/tables/scores.csv",
        configs=expand("results/runs/{run}/config.json", run=RUNS),
        metas=expand("results/runs/{run}/meta.json", run=RUNS),
        analysis=ANALYSIS_CSVS,  # trained-model saturation along the d_k and scale sweeps
    output:
        report("results/figures/{figure}.pdf", caption="../report/figures.rst", category="Figures"),
    log:
        "results/logs/figures/{figure}.log",
    benchmark:
        "results/benchmarks/figure_scores/{figure}.tsv"
    wildcard_constraints:
        figure="|".join(SCORE_FIGURES),
    params:
        runs=RUNS,
    shell:
        "{PYTHON}.report.figures.scores --results results --figure {wildcards.figure:q}"
        " --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_training:
    input:
        logs=expand("results/runs/{run}/log.csv", run=RUNS),
        metas=expand("results/runs/{run}/meta.json", run=RUNS),
    output:
        report("results/figures/training.pdf", caption="../report/training.rst",
               category="Figures"),
    log:
        "results/logs/figures/training.log",
    benchmark:
        "results/benchmarks/figure_training/all.tsv"
    params:
        runs=RUNS,
    shell:
        "{PYTHON}.report.figures.training --results results --runs {params.runs:q}"
        " --out {output:q} > {log:q} 2>&1"


rule figure_cost:
    input:
        BENCH_CSVS,
    output:
        report("results/figures/{figure}.pdf", caption="../report/cost.rst", category="Figures"),
    log:
        "results/logs/figures/{figure}.log",
    benchmark:
        "results/benchmarks/figure_cost/{figure}.tsv"
    wildcard_constraints:
        figure="|".join(COST_FIGURES),
    shell:
        "{PYTHON}.report.figures.cost --results results --figure {wildcards.figure:q}"
        " --bench {input:q} --out {output:q} > {log:q} 2>&1"


rule figure_alignment:
    input:
        "results/analysis/alignment_{run}.csv",
    output:
        report("results/figures/alignment_{run}.pdf", caption="../report/alignment.rst",
               category="Attention"),
    log:
        "results/logs/figures/alignment_{run}.log",
    benchmark:
        "results/benchmarks/figure_alignment/{run}.tsv"
    shell:
        "{PYTHON}.report.figures.alignment --csv {input:q} --out {output:q} > {log:q} 2>&1"


rule figure_convergence:
    input:
        config="results/paper/config.json",
        comparisons="results/tables/comparisons.csv",
        references=[f"{folder}/{name}" for folder in CONVERGENCE.get("references", [])
                    for name in ("comparisons.csv", "claims.csv", "training.csv",
                                 "provenance.json")],
    output:
        report("results/figures/convergence.pdf", caption="../report/convergence.rst",
               category="Figures"),
    log:
        "results/logs/figures/convergence.log",
    benchmark:
        "results/benchmarks/figure_convergence/all.tsv"
    params:
        references=CONVERGENCE.get("references", []),
    shell:
        "{PYTHON}.report.figures.convergence --config {input.config:q}"
        " --comparisons {input.comparisons:q} --references {params.references:q}"
        " --out {output:q} > {log:q} 2>&1"
