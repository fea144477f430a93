# The paper: paper/paper.tex orders its parts; each part is a template of paper/sections/ that
# softlookup.report.render fills with the facts of the result tables (every number, run label and
# result sentence) into results/paper/generated/; latexmk then builds paper/paper.pdf.

import os

PAPER_FIGURES = [*FIGURES, *PROBE_FIGURES]

def config_path(path):
    """A config file as the paper's rerun commands name it: relative to the working directory,
    through its config/ folder where that is the same file (a run directory's config/ links to
    the project's), so that a reader in a fresh clone can type it."""
    local = Path("config") / Path(path).name
    return str(local) if local.exists() and os.path.samefile(local, path) else os.path.relpath(path)


# The config files given on the command line (the Snakefile's own config/config.yaml loads first
# anyway): what the paper's rerun commands name.
PAPER_CONFIGFILES = [
    config_path(path) for path in workflow.configfiles if config_path(path) != "config/config.yaml"
] or ["config/config.yaml"]
# one generated part per template; `_*.tex` hold the macros the templates share
PAPER_TEMPLATES = sorted(glob("paper/sections/*.tex"))
PAPER_PARTS = [f"results/paper/generated/{Path(path).name}" for path in PAPER_TEMPLATES
               if not Path(path).name.startswith("_")]


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


rule paper_sections:
    input:
        templates=PAPER_TEMPLATES,
        published="paper/published.yaml",  # what each claim's source published
        config="results/paper/config.json",
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        seed_variance="results/tables/seed_variance.csv",
        coverage="results/tables/coverage.csv",
        manifest=f"{DATA_DIR}/manifest.json",
        runs=expand("results/runs/{run}/{file}", run=RUNS,
                    file=["config.json", "meta.json", "log.csv"]),
        claims=CLAIMS_OUTPUTS,
        bench=BENCH_CSVS,
        probes=PROBE_CSVS,
        analysis=ANALYSIS_OUTPUTS,
        figures=PAPER_FIGURES,
        references=CONVERGENCE_FILES,
        thresholds="config/threshold_history.csv",  # reference.thresholds, from git
    output:
        PAPER_PARTS,
    log:
        "results/logs/paper/sections.log",
    benchmark:
        "results/benchmarks/paper_sections/all.tsv"
    params:
        runs=RUNS,
        configfiles=PAPER_CONFIGFILES,
    shell:
        "{PYTHON}.report.render --results results --config {input.config:q}"
        " --configfiles {params.configfiles:q} --runs {params.runs:q}"
        " --figures {input.figures:q} --bench {input.bench:q} --manifest {input.manifest:q}"
        " --templates paper/sections"
        " --out-dir results/paper/generated > {log:q} 2>&1"


rule paper:
    input:
        sources=["paper/paper.tex", "paper/refs.bib"],
        generated=PAPER_PARTS,
        figures=PAPER_FIGURES,
    output:
        report("paper/paper.pdf", caption="../report/paper.rst", category="Paper"),
    log:
        "results/logs/paper/latexmk.log",
    benchmark:
        "results/benchmarks/paper/all.tsv"
    params:
        build="results/paper/build",
    shell:
        "{PYTHON}.report.build --sources {input.sources:q} --generated {input.generated:q}"
        " --figures {input.figures:q} --build-dir {params.build:q} --out {output:q}"
        " > {log:q} 2>&1 || {{ tail -n 40 {log:q} >&2; exit 1; }}"


# What this stage keeps (rule all asks for each file: common.smk, get_final_output).
PAPER_OUTPUTS = [*map(str, rules.paper_config.output), *PAPER_PARTS, *map(str, rules.paper.output)]
