# Seaborn figures, each computed from the tidy scores table.

FIGURE_NAMES = ["bleu_by_length"]
FIGURES = expand("results/figures/{figure}.pdf", figure=FIGURE_NAMES)


rule figure:
    input:
        "results/tables/scores.csv",
    output:
        report(
            "results/figures/{figure}.pdf",
            caption="../report/figures.rst",
            category="Figures",
        ),
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join(FIGURE_NAMES),
    shell:
        "{PYTHON}.report.figures.scores --scores {input} --figure {wildcards.figure} --out {output} > {log} 2>&1"
