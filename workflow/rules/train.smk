# One training job per run: variant (base model or a sweep point) x seed. A run's settings are
# written once, to results/runs/<run>/config.json, and read from there by train, collect and
# compare; a changed setting rewrites that file (Snakemake sees the changed params), which reruns
# the run, and train.py resumes a checkpoint only when it was trained on exactly these settings
# and data (else it starts fresh and its log says why). A rerun of a finished run with unchanged
# settings (--forcerun train, a deleted model.pt) rebuilds its outputs from the finished
# checkpoint and best.pt: the same weights, no training; delete checkpoint.pt to retrain.


def run_settings(wildcards):
    """results/runs/<run>/config.json's content (contract item 3) as JSON, keys sorted: one
    quoted argument of the job that writes it."""
    return json.dumps(run_config(wildcards.variant, wildcards.seed), sort_keys=True)


rule run_config:
    output:
        "results/runs/{variant}-s{seed}/config.json",
    log:
        "results/logs/run_config/{variant}-s{seed}.log",
    benchmark:
        "results/benchmarks/run_config/{variant}-s{seed}.tsv"
    params:
        settings=run_settings,
    shell:
        "{PYTHON}.config write-json --json {params.settings:q} --out {output:q} > {log:q} 2>&1"


rule train:
    input:
        config="results/runs/{variant}-s{seed}/config.json",
        spm=f"{DATA_DIR}/spm.model",
        data=expand(f"{DATA_DIR}/{{split}}.{{lang}}", split=["train", "valid"], lang=[SRC, TGT]),
    output:
        model="results/runs/{variant}-s{seed}/model.pt",
        meta="results/runs/{variant}-s{seed}/meta.json",
        log_csv="results/runs/{variant}-s{seed}/log.csv",
    log:
        "results/logs/train/{variant}-s{seed}.log",
    benchmark:
        "results/benchmarks/train/{variant}-s{seed}.tsv"
    params:
        data_dir=DATA_DIR,
    threads: lambda wildcards: training_threads(wildcards.variant)
    priority: training_priority
    resources:
        gpu=MODEL_GPUS,
        runtime=training_runtime,
        mem_mb=training_mem_mb,
    retries: TRAIN_RETRIES
    shell:
        "{PYTHON}.train --config {input.config:q} --data-dir {params.data_dir:q}"
        " --spm {input.spm:q} --threads {threads} > {log:q} 2>&1"


# What this stage keeps (rule all asks for each file: common.smk, get_final_output): every run's
# settings, weights, metadata and log.
RUN_OUTPUTS = expand([*rules.run_config.output, *rules.train.output], zip,
                     variant=[variant for variant, _ in VARIANT_SEEDS],
                     seed=[seed for _, seed in VARIANT_SEEDS])
