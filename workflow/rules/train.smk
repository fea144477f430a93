# One training job per run: variant (base model or a sweep point) x seed.


rule train:
    input:
        spm=f"{DATA_DIR}/spm.model",
        data=expand(f"{DATA_DIR}/{{split}}.{{lang}}", split=["train", "valid"], lang=[SRC, TGT]),
    output:
        model="results/runs/{variant}-s{seed}/model.pt",
        meta="results/runs/{variant}-s{seed}/meta.json",
        log_csv="results/runs/{variant}-s{seed}/log.csv",
    log:
        "results/logs/train/{variant}-s{seed}.log",
    params:
        run=lambda w: json.dumps(run_config(w.variant, w.seed), sort_keys=True),
        out_dir="results/runs/{variant}-s{seed}",
    threads: lambda wildcards: training_threads(wildcards.variant)
    resources:
        gpu=config["resources"]["gpus_per_training_job"],
    shell:
        "{PYTHON}.train --run-json '{params.run}' --data-dir " + DATA_DIR +
        " --spm {input.spm} --out-dir {params.out_dir} --threads {threads} > {log} 2>&1"
