# Translate every test set with every run, score it, and collect one tidy table.


rule translate:
    input:
        model="results/runs/{run}/model.pt",
        meta="results/runs/{run}/meta.json",
        spm=f"{DATA_DIR}/spm.model",
        source=f"{DATA_DIR}/{{test_set}}.{SRC}",
    output:
        f"results/runs/{{run}}/hyp.{{test_set}}.{TGT}",
    log:
        "results/logs/translate/{run}.{test_set}.log",
    params:
        beam=config["evaluate"]["beam_size"],
        length_penalty=config["evaluate"]["length_penalty"],
    threads: translate_threads()
    shell:
        "{PYTHON}.evaluate.translate --model {input.model} --meta {input.meta} --spm {input.spm}"
        " --input {input.source} --out {output} --beam-size {params.beam}"
        " --length-penalty {params.length_penalty} --threads {threads} > {log} 2>&1"


rule score:
    input:
        source=f"{DATA_DIR}/{{test_set}}.{SRC}",
        hypotheses=f"results/runs/{{run}}/hyp.{{test_set}}.{TGT}",
        references=f"{DATA_DIR}/{{test_set}}.{TGT}",
    output:
        "results/runs/{run}/scores.{test_set}.csv",
    log:
        "results/logs/score/{run}.{test_set}.log",
    params:
        edges=" ".join(str(e) for e in config["evaluate"]["bucket_edges"]),
        min_sentences=config["evaluate"]["min_bucket_sentences"],
        bootstrap=config["evaluate"]["bootstrap"],
    shell:
        "{PYTHON}.evaluate.score --test-set {wildcards.test_set} --source {input.source}"
        " --hypotheses {input.hypotheses} --references {input.references}"
        " --bucket-edges {params.edges} --min-bucket-sentences {params.min_sentences}"
        " --bootstrap {params.bootstrap} --out {output} > {log} 2>&1"


rule collect_scores:
    input:
        scores=expand("results/runs/{run}/scores.{test_set}.csv", run=RUNS, test_set=TEST_SETS),
        metas=expand("results/runs/{run}/meta.json", run=RUNS),
    output:
        report(
            "results/tables/scores.csv",
            caption="../report/scores.rst",
            category="Tables",
        ),
    log:
        "results/logs/collect_scores.log",
    params:
        runs=json.dumps(run_table()),
    shell:
        "{PYTHON}.evaluate.collect --runs '{params.runs}' --results-dir results/runs"
        " --test-sets {TEST_SETS} --out {output} > {log} 2>&1"
