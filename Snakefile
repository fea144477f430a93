# softlookup: attention as a soft lookup, reproduced. Every number, table and figure of
# paper/paper.pdf is produced by the rules included below, in pipeline order, from the runs the
# config names. Rules live in workflow/rules/<stage>.smk; config lookups in common.smk.
import fnmatch
import signal
import sys
from pathlib import Path

from snakemake.logging import logger
from snakemake.utils import min_version, validate

from softlookup.claims.references import check_claim_names
from softlookup.config import ConfigError, check, load_schema, read_config_file

min_version("8.20")

# `snakemake --lint` findings kept on purpose:
# - "Specify a conda environment or container for each rule": every rule runs the one project
#   environment (.venv from pyproject.toml, or environment.yml), not one per step.
# - "Shell command directly uses variable PYTHON": PYTHON is the interpreter running Snakemake
#   (common.smk), not a setting; provenance records versions (softlookup.provenance).
# - "Param ... is a prefix of input or output file but hardcoded": the workflow assumes a shared
#   filesystem (local runs, profiles/slurm), where these directory parameters are valid.
# - "Mixed rules and functions" (data, train, evaluate, bench): each helper turns that stage's
#   config section into its rule's options, used by that one rule; common.smk keeps what several
#   stages share.


# A config error stops the run with its own line(s) and exit status 1 (sys.exit): a WorkflowError
# would wrap them in Snakemake's frames, "WorkflowError in file .../Snakefile, line 51".
# The default config file, read here first: a syntax error is named with its file and line
# (Snakemake's own message names neither). Files given with --configfile are read by Snakemake
# before this file runs: `make paper` checks them (docs/troubleshooting.md).
try:
    read_config_file("config/config.yaml")
except ConfigError as error:
    sys.exit(str(error))


configfile: "config/config.yaml"


# Before any job: every problem in one line (key and where it sits), then the schema's own check.
# Sweep points are checked as merged model configs, test sets against the prepared splits.
# First the null entries by which a merged config removes one of config.yaml's are dropped
# (softlookup.config.REMOVABLE: a split, data.join, a joined test set, a comparison...).
# Then every comparison, test set and probe a claim of config/claims.yaml names must be defined
# by some config (a misspelt name would leave its check pending without a word); one that this
# config removes or does not train stays pending in the ledger.
try:
    check(config, load_schema(workflow.source_path("workflow/schemas/config.schema.yaml")),
          files=[*workflow.configfiles])
    check_claim_names(config, "config/claims.yaml", files=[*workflow.configfiles])
except ConfigError as error:
    sys.exit(str(error))
validate(config, "workflow/schemas/config.schema.yaml")


# Names that become paths: the schema allows letters, digits, _ (and . - inside run names).
wildcard_constraints:
    run=r"[A-Za-z0-9_.-]+-s\d+",
    variant=r"[A-Za-z0-9_.-]+",
    seed=r"\d+",
    test_set=r"[A-Za-z0-9_.]+",
    epoch=r"\d+",


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


rule all:
    input:
        get_final_output(),


# Jobs that go through a cluster queue (profiles/slurm): those that prepare a corpus, build a
# subword model, train, translate, score or measure (names or glob patterns: prepare_* is every
# corpus's preparation, data.extra's included). Every other rule is light and runs where Snakemake
# runs, derived here so that a new rule never reaches the queue unless named: fetching needs the
# network (compute nodes often lack it), the LaTeX build needs TeX, the rest take seconds.
# (tests/test_slurm.py: a rule that asks for threads or resources is named here.)
CLUSTER_RULES = (
    "prepare_*",
    "train_bpe*",
    "train",
    "translate",
    "translate_point",
    "score",
    "score_point",
    "attention_maps",
    "bench_attention",
    "bench_generation",
    "bench_score_step",
    "bench_train_lengths",
    "probe",
)
workflow.localrules(*(rule.name for rule in workflow.rules
                      if not any(fnmatch.fnmatchcase(rule.name, p) for p in CLUSTER_RULES)))


def last_line(log):
    """The last non-blank line of a job's log: the error, where the job says it in one line."""
    lines = Path(log).read_text(errors="replace").split("\n") if Path(log).is_file() else []
    return next((line.strip() for line in reversed(lines) if line.strip()), "(empty)")


def failure_line(job):
    """A failed job in one line: its rule, its log and the log's last line."""
    logs = "; ".join(f"{log}: {last_line(log)}" for log in job.log)
    return f"failed: rule {job.rule.name}, log {logs or '(none)'}"


def stopped_job(job):
    """A job stopped by Ctrl-C: its rule and its first output."""
    return f"{job.rule.name} ({next(iter(job.output), 'no output')})"


def interruption_line(jobs):
    """A run stopped by Ctrl-C in one line: the jobs it stopped, and that the same command
    resumes (it reruns only what is missing or unfinished; training from its checkpoint)."""
    stopped = ", ".join(sorted(map(stopped_job, jobs))) or "no job was running"
    return (f"interrupted: stopped {stopped}; run the same command again to resume"
            " (it reruns only what is missing or unfinished)")


# Ctrl-C: Snakemake stops the running jobs and ends as a failed run does (onerror below), with
# the jobs it was running still in `scheduler.running`. The signal is noted here, once the jobs
# start, then handled as Python does (KeyboardInterrupt), so that onerror can tell the two apart.
INTERRUPTED = []


def note_interrupt(signum, frame):
    """Ctrl-C noted for onerror, then Python's own KeyboardInterrupt, which Snakemake handles."""
    INTERRUPTED.append(signum)
    signal.default_int_handler(signum, frame)


onstart:
    signal.signal(signal.SIGINT, note_interrupt)


# After a failed run, its last lines before Snakemake's own "At least one job did not complete
# successfully": each failed job in one line. keep-going runs every job it can first, so the
# error itself sits far above. (`scheduler.failed`: the jobs that failed their last attempt.)
# After Ctrl-C, one line naming the jobs it stopped.
onerror:
    for line in sorted(map(failure_line, workflow.scheduler.failed)):
        logger.error(line)
    if INTERRUPTED:
        logger.error(interruption_line(workflow.scheduler.running))
