# softlookup: attention as a soft lookup, reproduced. Every number, table and figure of
# paper/paper.pdf is produced by the rules included below, in pipeline order, from the runs the
# config names. Rules live in workflow/rules/<stage>.smk; config lookups in common.smk.
from snakemake.utils import min_version, validate

from softlookup.config import ConfigError, check, load_schema

min_version("8.20")

# `snakemake --lint` findings kept on purpose:
# - "Specify a conda environment or container for each rule": every rule runs the one project
#   environment (.venv from pyproject.toml, or environment.yml), not one per step.
# - "Shell command directly uses variable PYTHON": PYTHON is the interpreter running Snakemake
#   (common.smk), not a setting; provenance records versions (softlookup.provenance).
# - "Param ... is a prefix of input or output file but hardcoded": the workflow assumes a shared
#   filesystem (local runs, profiles/slurm), where these directory parameters are valid.
# - "Migrate long run directives into scripts": run_config/paper_config only write a JSON file.
# - "Mixed rules and functions" (data, train, evaluate, bench): each helper turns that stage's
#   config section into its rule's options, used by that one rule; common.smk keeps what several
#   stages share.


configfile: "config/config.yaml"


# Before any job: every problem in one line (key and where it sits), then the schema's own check.
# Sweep points are checked as merged model configs, test sets against the prepared splits.
try:
    check(config, load_schema(workflow.source_path("workflow/schemas/config.schema.yaml")),
          files=[*workflow.configfiles])
except ConfigError as error:
    raise WorkflowError(str(error)) from None
validate(config, "workflow/schemas/config.schema.yaml")


# Names that become paths: the schema allows letters, digits, _ (and . - inside run names).
wildcard_constraints:
    run=r"[A-Za-z0-9_.-]+-s\d+",
    variant=r"[A-Za-z0-9_.-]+",
    seed=r"\d+",
    test_set=r"[A-Za-z0-9_.]+",


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/train.smk"
include: "workflow/rules/evaluate.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/bench.smk"
include: "workflow/rules/probes.smk"
include: "workflow/rules/claims.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/paper.smk"
include: "workflow/rules/reference.smk"


# Light jobs run where Snakemake runs, never through a cluster queue: fetching needs the network
# (compute nodes often lack it), the LaTeX build needs TeX; the others take seconds.
localrules:
    all,
    fetch_corpus_file,
    run_config,
    collect_scores,
    compare,
    probe_figures,
    claims_ledger,
    figure_scores,
    figure_training,
    figure_cost,
    figure_alignment,
    paper_config,
    paper_sections,
    paper,
    compare_reference,
    compare_across,


rule all:
    input:
        get_final_output(),
