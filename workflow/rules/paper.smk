# The paper: every number, run name and result sentence is generated into
# results/paper/generated/ (softlookup.report.sections and .macros_claims) from the result
# tables; latexmk then builds paper/paper.pdf from paper/ and those files.

import os

PAPER_FIGURES = [*FIGURES, *PROBE_FIGURES]
# The config files given on the command line (the Snakefile's own config/config.yaml loads first
# anyway), relative to the working directory: what the paper's rerun commands name.
PAPER_CONFIGFILES = [
    os.path.relpath(path) for path in workflow.configfiles
    if os.path.relpath(path) != "config/config.yaml"
] or ["config/config.yaml"]
PAPER_SECTIONS = expand("results/paper/generated/{name}.tex",
                        name=["macros", "abstract", "setup", "results", "threats",
                              "reproducibility"])
PAPER_CLAIMS = expand("results/paper/generated/{name}.tex",
                      name=["claims_table", "checks_table", "claims_macros"])


rule paper_config:
    output:
        "results/paper/config.json",
    log:
        "results/logs/paper/config.log",
    benchmark:
        "results/benchmarks/paper_config/all.tsv"
    params:
        config=json.dumps(config, sort_keys=True),
    shell:
        "{PYTHON}.config write-json --json {params.config:q} --out {output:q} > {log:q} 2>&1"


rule paper_claims:
    input:
        claims="results/claims/claims.csv",
        checks="results/claims/checks.csv",
    output:
        PAPER_CLAIMS,
    log:
        "results/logs/paper/claims.log",
    benchmark:
        "results/benchmarks/paper_claims/all.tsv"
    shell:
        "{PYTHON}.report.macros_claims --claims {input.claims:q} --checks {input.checks:q}"
        " --out-dir results/paper/generated > {log:q} 2>&1"


rule paper_sections:
    input:
        config="results/paper/config.json",
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        manifest=f"{DATA_DIR}/manifest.json",
        runs=expand("results/runs/{run}/{file}", run=RUNS,
                    file=["config.json", "meta.json", "log.csv"]),
        claims="results/claims/claims.csv",
        bench=BENCH_CSVS,
        probes=PROBE_CSVS,
        analysis=ANALYSIS_OUTPUTS,
        figures=PAPER_FIGURES,
    output:
        PAPER_SECTIONS,
    log:
        "results/logs/paper/sections.log",
    benchmark:
        "results/benchmarks/paper_sections/all.tsv"
    params:
        runs=RUNS,
        configfiles=PAPER_CONFIGFILES,
    shell:
        "{PYTHON}.report.sections --results results --config {input.config:q}"
        " --configfiles {params.configfiles:q} --runs {params.runs:q}"
        " --figures {input.figures:q} --bench {input.bench:q}"
        " --out-dir results/paper/generated > {log:q} 2>&1"


rule paper:
    input:
        sources=["paper/paper.tex", "paper/refs.bib", *sorted(glob("paper/sections/*.tex"))],
        generated=[*PAPER_SECTIONS, *PAPER_CLAIMS],
        figures=PAPER_FIGURES,
    output:
        report("paper/paper.pdf", caption="../report/paper.rst", category="Paper"),
    log:
        "results/logs/paper/latexmk.log",
    benchmark:
        "results/benchmarks/paper/all.tsv"
    params:
        build="results/paper/build",
        sources=["paper/paper.tex", "paper/refs.bib", "paper/sections"],
    shell:
        "{PYTHON}.report.build --sources {params.sources:q} --generated {input.generated:q}"
        " --figures {input.figures:q} --build-dir {params.build:q} --out {output:q}"
        " > {log:q} 2>&1 || {{ tail -n 40 {log:q} >&2; exit 1; }}"
