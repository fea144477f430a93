# Config lookups shared by all stages: the runs a config names, where their files live, and
# what each job asks of the machine (threads, GPUs, runtime). Checking the config is
# softlookup.config's job (called from the Snakefile); nothing here runs a job.
import json
import shlex
import sys
from glob import glob

from softlookup.config import (all_variants, data_dir, ladder_points, measured_bench, run_seeds,
                               select)
from softlookup.rundir import split_run, variant_of


DATA_DIR = data_dir(config)
SRC, TGT = config["data"]["src"], config["data"]["tgt"]
# The interpreter running Snakemake (the project's .venv when called as .venv/bin/snakemake,
# activated or not): every rule calls `{PYTHON}.<pkg>.<module>`.
PYTHON = f"{shlex.quote(sys.executable)} -m softlookup"


# {variant name: Variant(name, base_model, sweep {key: value}, model config)}: the base models and
# sweep points this config trains (`run_only` applied). A sweep point whose settings equal its base
# model's is the base run; see softlookup/config.py for the naming rule. The Snakefile has checked
# every point already (config.check): here they are only named, not checked again.
VARIANTS = select(all_variants(config), config.get("run_only"))
# (variant, seed) of each run: the config's `seeds`, and a variant's own `more_seeds` too
VARIANT_SEEDS = [(variant, seed) for variant in VARIANTS for seed in run_seeds(config, variant)]
RUNS = [f"{variant}-s{seed}" for variant, seed in VARIANT_SEEDS]
TEST_SETS = config["evaluate"]["test_sets"]


def run_config(variant, seed):
    """One run's settings (results/runs/<run>/config.json): model config, train config (defaults
    + the model's overrides), seed, languages, and which base model and sweep point it is."""
    found = VARIANTS[variant]
    model = dict(found.model)
    train = {**config["train"], **model.pop("train", {})}
    # keys sorted: the same settings written in another key order (a config file dumped with
    # sorted keys, say) are the same params, so Snakemake does not rerun the run
    return {
        "run": f"{variant}-s{seed}", "variant": variant, "base_model": found.base_model,
        "sweep": dict(found.sweep), "seed": int(seed), "src": SRC, "tgt": TGT,
        "model": dict(sorted(model.items())), "train": dict(sorted(train.items())),
    }


# What a job asks of the machine: config["resources"] (config.yaml: CPU; paper.yaml: GPU cluster).
# Locally only threads matter; under profiles/slurm threads become --cpus-per-task, `gpu` becomes
# --gpus (0 asks for none), runtime (minutes) -t and mem_mb --mem.
RESOURCES = config["resources"]


def translate_threads():
    return RESOURCES["threads"]["translate"]


def _by_model(settings, key, variant):
    """settings[key], unless settings[key + '_by_model'] names the variant's base model."""
    return settings.get(f"{key}_by_model", {}).get(VARIANTS[variant].base_model, settings[key])


def training_threads(variant):
    """Threads of one training job: resources.threads.train, unless train_by_model names the
    variant's base model."""
    return _by_model(RESOURCES["threads"], "train", variant)


def training_priority(wildcards):
    """Longest training jobs first (Snakemake's `priority:`): threads x epochs, a job's expected
    share of the machine, so that no long job is left to run alone at the end. A job needing
    more cores than are free still waits (Snakemake gives a freed core to the best job that
    fits), which is why config.yaml gives every job one thread."""
    run = run_config(wildcards.variant, wildcards.seed)
    return training_threads(wildcards.variant) * run["train"]["epochs"]


# GPUs of each job that runs a model (train, translate): one switch, 0 on CPU.
MODEL_GPUS = RESOURCES["gpus_per_training_job"]
# Retries of a failed training job (it resumes from its checkpoint): a job killed at its time
# limit is resubmitted with attempt x its runtime.
TRAIN_RETRIES = RESOURCES.get("train_retries", 0)


def training_runtime(wildcards, attempt):
    """Minutes of one training job: resources.runtime.train (or train_by_model), x attempt."""
    runtime = RESOURCES.get("runtime", {"train": 60})
    return _by_model(runtime, "train", wildcards.variant) * attempt


def training_mem_mb(wildcards):
    return _by_model(RESOURCES.get("mem_mb", {"train": 8000}), "train", wildcards.variant)


def get_final_output():
    """What `snakemake` without a target builds (rule all): every file a finished build keeps,
    named by its stage beside the rules that write it: the prepared corpora (data.extra's too,
    which no part of the paper reads yet), every run's weights, hypotheses and scores, the tables,
    analyses, benchmarks, probes, the ledger, the figures and the paper; and this build compared
    with the committed references, where there are any (reference.smk).

    Each file is asked for by name, not only through the paper: Snakemake reruns a job whose
    output is missing only when a target or a job that runs anyway needs it, so a deleted
    model.pt, hypotheses file or table under an up-to-date paper would stay missing ("Nothing to
    be done"). Named here, it is rebuilt with what depends on it, and nothing else. The fetched
    corpus files (resources/) are a download cache, not a product: fetched when a job needs them."""
    return [*DATA_OUTPUTS, *RUN_OUTPUTS, *EVALUATE_OUTPUTS, *ANALYSIS_OUTPUTS, *BENCH_CSVS,
            *PROBE_CSVS, *PROBE_FIGURES, *CLAIMS_OUTPUTS, *FIGURES, *PAPER_OUTPUTS,
            *COMPARE_OUTPUTS]
