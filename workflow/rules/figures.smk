# Figures of the paper, each drawn by softlookup.report.figures.<family> from the facts of the
# result tables (softlookup.report.facts) in the one style of report/figures/style.py (vector PDF,
# greyscale-readable). The paper's captions say which rule drew a figure and where the file is.
from softlookup.config import convergence_references
from softlookup.report.families import figure_families

# a sweep family gets a figure when its first key takes two swept values or more
SCORE_FIGURES = [
    "bleu_by_length",
    *(f"sweep_{family}" for family in figure_families(v.sweep for v in VARIANTS.values())),
]
# the example sentence drawn for the runs analysis.runs names (every_run adds statistics only)
ALIGNMENT_RUNS = [run for run in config["analysis"]["runs"] if run in RUNS]
# the training-budget paths of the D effects: this build's points beside the committed
# references of the converged study (config["convergence"])
CONVERGENCE = config.get("convergence") or {}
CONVERGENCE_FILES = [str(folder / name) for folder in convergence_references(config)
                     for name in ("comparisons.csv", "claims.csv", "training.csv",
                                  "provenance.json", "scores.csv")]
# claim D1's length curves in every study: only beside a reference (alone, they would repeat
# bleu_by_length)
FIGURES = expand("results/figures/{figure}.pdf",
                 figure=[*SCORE_FIGURES, "training", "cost", "alignment", "seed_variance",
                         *(["convergence"] if CONVERGENCE else []),
                         *(["length_curves"] if CONVERGENCE_FILES else [])])
RUN_FILES = expand("results/runs/{run}/{file}", run=RUNS, file=["config.json", "meta.json"])


rule figure_scores:
    input:
        config="results/paper/config.json",
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        runs=RUN_FILES,
        analysis=ANALYSIS_CSVS,  # trained-model saturation along the sweeps
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
        "{PYTHON}.report.figures.scores --results results --config {input.config:q}"
        " --figure {wildcards.figure:q} --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_training:
    input:
        config="results/paper/config.json",
        scores="results/tables/scores.csv",
        logs=expand("results/runs/{run}/log.csv", run=RUNS),
        runs=RUN_FILES,
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
        "{PYTHON}.report.figures.training --results results --config {input.config:q}"
        " --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_seed_variance:
    input:
        config="results/paper/config.json",
        seed_variance="results/tables/seed_variance.csv",  # compare writes it beside comparisons
        runs=RUN_FILES,  # the variants' labels
    output:
        report("results/figures/seed_variance.pdf", caption="../report/seed_variance.rst",
               category="Figures"),
    log:
        "results/logs/figures/seed_variance.log",
    benchmark:
        "results/benchmarks/figure_seed_variance/all.tsv"
    params:
        runs=RUNS,
    shell:
        "{PYTHON}.report.figures.seed_variance --results results --config {input.config:q}"
        " --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_length_curves:
    input:
        config="results/paper/config.json",
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        runs=RUN_FILES,
        references=CONVERGENCE_FILES,
    output:
        report("results/figures/length_curves.pdf", caption="../report/length_curves.rst",
               category="Figures"),
    log:
        "results/logs/figures/length_curves.log",
    benchmark:
        "results/benchmarks/figure_length_curves/all.tsv"
    params:
        runs=RUNS,
    shell:
        "{PYTHON}.report.figures.length_curves --results results --config {input.config:q}"
        " --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_cost:
    input:
        BENCH_CSVS,
    output:
        report("results/figures/cost.pdf", caption="../report/cost.rst", category="Figures"),
    log:
        "results/logs/figures/cost.log",
    benchmark:
        "results/benchmarks/figure_cost/all.tsv"
    shell:
        "{PYTHON}.report.figures.cost --results results --bench {input:q} --out {output:q}"
        " > {log:q} 2>&1"


rule figure_alignment:
    input:
        config="results/paper/config.json",
        alignment=expand("results/analysis/alignment_{run}.csv", run=ALIGNMENT_RUNS),
        runs=expand("results/runs/{run}/{file}", run=ALIGNMENT_RUNS,
                    file=["config.json", "meta.json"]),
    output:
        report("results/figures/alignment.pdf", caption="../report/alignment.rst",
               category="Attention"),
    log:
        "results/logs/figures/alignment.log",
    benchmark:
        "results/benchmarks/figure_alignment/all.tsv"
    params:
        runs=ALIGNMENT_RUNS,
    shell:
        "{PYTHON}.report.figures.alignment --results results --config {input.config:q}"
        " --runs {params.runs:q} --out {output:q} > {log:q} 2>&1"


rule figure_convergence:
    input:
        config="results/paper/config.json",
        comparisons="results/tables/comparisons.csv",
        references=CONVERGENCE_FILES,
    output:
        report("results/figures/convergence.pdf", caption="../report/convergence.rst",
               category="Figures"),
    log:
        "results/logs/figures/convergence.log",
    benchmark:
        "results/benchmarks/figure_convergence/all.tsv"
    shell:
        "{PYTHON}.report.figures.convergence --results results --config {input.config:q}"
        " --out {output:q} > {log:q} 2>&1"
