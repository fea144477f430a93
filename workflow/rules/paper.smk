# Numbers -> LaTeX macros and tables; then latexmk builds paper/paper.pdf from paper/ sources.

MAIN_TEST_SET = TEST_SETS[0]


rule paper_numbers:
    input:
        scores="results/tables/scores.csv",
        manifest=f"{DATA_DIR}/manifest.json",
        meta=f"results/runs/{RUNS[0]}/meta.json",
    output:
        macros="results/paper/generated/numbers.tex",
        table="results/paper/generated/results_table.tex",
    log:
        "results/logs/paper/numbers.log",
    shell:
        "{PYTHON}.report.paper --scores {input.scores} --manifest {input.manifest} --meta {input.meta}"
        " --test-set {MAIN_TEST_SET} --out-macros {output.macros} --out-table {output.table}"
        " > {log} 2>&1"


rule paper:
    input:
        sources=["paper/paper.tex", "paper/refs.bib", *sorted(glob("paper/sections/*.tex"))],
        generated=[*rules.paper_numbers.output, *CLAIMS_OUTPUTS, ATTENTION_MACROS],
        figures=[*FIGURES, *PROBE_FIGURES, *ANALYSIS_FIGURES],
    output:
        report("paper/paper.pdf", caption="../report/paper.rst", category="Paper"),
    log:
        "results/logs/paper/latexmk.log",
    params:
        build="results/paper/build",
    shell:
        """
        command -v latexmk > /dev/null || {{ echo "latexmk not found: install TeX Live" \
            "(make setup-tex, or apt-get install latexmk texlive-latex-extra ...)" > {log}; exit 1; }}
        rm -rf {params.build} && mkdir -p {params.build}/generated {params.build}/figures
        cp -r paper/paper.tex paper/refs.bib paper/sections {params.build}/
        cp {input.generated} {params.build}/generated/
        cp {input.figures} {params.build}/figures/
        (cd {params.build} && latexmk -pdf -interaction=nonstopmode -halt-on-error paper.tex) \
            > {log} 2>&1
        cp {params.build}/paper.pdf {output}
        """
