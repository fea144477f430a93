# The reviewer kit: this build against the committed reference of the same config
# (results/reference/<config name>/, made by `make reference`), and against the committed builds
# of other configs (which verdicts hold across scale). The config name is the stem of the last
# --configfile ("config" for the default). Nothing here runs unless a reference exists.
import os
from pathlib import Path

REPO_DIR = os.path.dirname(os.path.abspath(workflow.main_snakefile))
# the config files given on the command line (workflow.configfiles also lists the Snakefile's own)
COMMAND_LINE_CONFIGFILES = list(workflow.overwrite_configfiles or [])
REFERENCE_NAME = Path(COMMAND_LINE_CONFIGFILES[-1]).stem if COMMAND_LINE_CONFIGFILES else "config"
REFERENCES = os.path.join(REPO_DIR, "results", "reference")
REFERENCE_DIR = os.path.join(REFERENCES, REFERENCE_NAME)
OTHER_BUILDS = sorted(
    name for name in (os.listdir(REFERENCES) if os.path.isdir(REFERENCES) else [])
    if name != REFERENCE_NAME and os.path.isfile(os.path.join(REFERENCES, name, "claims.csv"))
)
# the comparisons this build makes (both files of each: rule all asks for every one)
COMPARE_OUTPUTS = expand(
    "results/compare/{name}.{ext}",
    name=[*(["compare"] if os.path.isfile(os.path.join(REFERENCE_DIR, "claims.csv")) else []),
          *(f"across_{other}" for other in OTHER_BUILDS)],
    ext=["csv", "md"],
)


rule compare_reference:
    input:
        reference=expand(os.path.join(REFERENCE_DIR, "{table}.csv"),
                         table=["scores", "comparisons", "claims"]),
        scores="results/tables/scores.csv",
        comparisons="results/tables/comparisons.csv",
        claims="results/claims/claims.csv",
    output:
        csv="results/compare/compare.csv",
        report=report("results/compare/compare.md", caption="../report/compare.rst",
                      category="Reference"),
    log:
        "results/logs/compare/reference.log",
    benchmark:
        "results/benchmarks/compare_reference/all.tsv"
    params:
        reference=REFERENCE_DIR,
    shell:
        "{PYTHON}.reference.compare --reference {params.reference:q} --scores {input.scores:q}"
        " --comparisons {input.comparisons:q} --claims {input.claims:q} --out {output.csv:q}"
        " --report {output.report:q} --no-fail > {log:q} 2>&1"


rule compare_across:
    input:
        this="results/claims/claims.csv",
        other=os.path.join(REFERENCES, "{other}", "claims.csv"),
    output:
        csv="results/compare/across_{other}.csv",
        report=report("results/compare/across_{other}.md", caption="../report/compare.rst",
                      category="Reference"),
    log:
        "results/logs/compare/across_{other}.log",
    benchmark:
        "results/benchmarks/compare_across/{other}.tsv"
    wildcard_constraints:
        other="|".join(OTHER_BUILDS) or "(?!)",
    params:
        this=REFERENCE_NAME,
    shell:
        "{PYTHON}.reference.compare --across {input.this:q} {input.other:q}"
        " --names {params.this:q} {wildcards.other:q} --out {output.csv:q}"
        " --report {output.report:q} > {log:q} 2>&1"
