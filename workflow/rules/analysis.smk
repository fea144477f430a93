# Attention weights of trained runs as evidence (claims B5, D1, D3, A8): per map, row entropy,
# largest weight (saturation), the gradient reaching the attention logits and the weight landing
# on padding, over the first sentences of one test set (results/analysis/attention_<run>.csv);
# and the example sentence's cross attention in long format (results/analysis/alignment_<run>.csv),
# which the report draws. Runs, sentences, test set: config["analysis"] (every_run: all runs).

# analysis.runs that this config does not train (run_only, a model left out) are skipped, said once
_unknown_runs = sorted(set(config["analysis"]["runs"]) - set(RUNS))
if _unknown_runs:
    print(f"analysis.runs: skipping runs this config does not train: {_unknown_runs}",
          file=sys.stderr)
ANALYSIS_RUNS = (list(RUNS) if config["analysis"].get("every_run")
                 else [run for run in config["analysis"]["runs"] if run in RUNS])
ANALYSIS_TEST_SET = config["analysis"]["test_set"]
ANALYSIS_CSVS = expand("results/analysis/attention_{run}.csv", run=ANALYSIS_RUNS)
ANALYSIS_ALIGNMENT_CSVS = expand("results/analysis/alignment_{run}.csv", run=ANALYSIS_RUNS)
ANALYSIS_OUTPUTS = [*ANALYSIS_CSVS, *ANALYSIS_ALIGNMENT_CSVS]

# a config error in one line, as the Snakefile's checks stop (sys.exit: no Snakemake frames)
if ANALYSIS_TEST_SET not in prepared_splits(config):
    sys.exit(f"config: analysis.test_set {ANALYSIS_TEST_SET!r} is not a prepared split:"
             f" use one of {prepared_splits(config)}")
if not 0 <= config["analysis"]["example"] < config["analysis"]["sentences"]:
    sys.exit(f"config: analysis.example ({config['analysis']['example']}) must be below"
             f" analysis.sentences ({config['analysis']['sentences']})")


rule attention_maps:
    input:
        model="results/runs/{run}/model.pt",
        meta="results/runs/{run}/meta.json",
        config="results/runs/{run}/config.json",
        spm=f"{DATA_DIR}/spm.model",
        test=expand(f"{DATA_DIR}/{ANALYSIS_TEST_SET}.{{lang}}", lang=[SRC, TGT]),
    output:
        csv="results/analysis/attention_{run}.csv",
        alignment="results/analysis/alignment_{run}.csv",
    log:
        "results/logs/analysis/{run}.log",
    benchmark:
        "results/benchmarks/attention_maps/{run}.tsv"
    params:
        run_dir="results/runs/{run}",
        data_dir=DATA_DIR,
        test_set=ANALYSIS_TEST_SET,
        sentences=config["analysis"]["sentences"],
        example=config["analysis"]["example"],
    threads: 1
    shell:
        "{PYTHON}.analysis.attention_maps --run-dir {params.run_dir:q} --spm {input.spm:q}"
        " --data-dir {params.data_dir:q} --test-set {params.test_set:q} --src {SRC:q}"
        " --tgt {TGT:q} --sentences {params.sentences:q} --example {params.example:q}"
        " --threads {threads} --out-csv {output.csv:q} --out-alignment {output.alignment:q}"
        " > {log:q} 2>&1"
