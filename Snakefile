# softlookup: attention as a soft lookup, reproduced. Every number, table and figure of
# paper/paper.pdf is produced by the rules included below from the runs the config names.
from snakemake.utils import min_version, validate

min_version("8.20")


configfile: "config/config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/probes.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/paper.smk"


rule all:
    input:
        "results/tables/scores.csv",
        FIGURES,
        PROBE_FIGURES,
        BENCH_CSVS,
        CLAIMS_OUTPUTS,
        ANALYSIS_OUTPUTS,
        "paper/paper.pdf",
