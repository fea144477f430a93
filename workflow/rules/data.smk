# Corpus files (mirror or upstream, sha256-checked) -> normalised splits + manifest -> BPE model.


rule fetch_corpus_file:
    output:
        "resources/corpora/{corpus}/{file}",
    log:
        "results/logs/fetch/{corpus}/{file}.log",
    params:
        mirror=f"--mirror {config['mirror']}" if config.get("mirror") else "",
    shell:
        "{PYTHON}.data.sources --corpus {wildcards.corpus} --file {wildcards.file}"
        " --out {output} {params.mirror} > {log} 2>&1"


rule prepare_corpus:
    input:
        expand(
            "resources/corpora/{corpus}/{stem}.{lang}.gz",
            corpus=config["data"]["corpus"],
            stem=config["data"]["splits"].values(),
            lang=[SRC, TGT],
        ),
    output:
        manifest=report(
            f"{DATA_DIR}/manifest.json",
            caption="../report/manifest.rst",
            category="Data",
        ),
        splits=expand(
            f"{DATA_DIR}/{{split}}.{{lang}}",
            split=list(config["data"]["splits"]) + TEST_SETS,
            lang=[SRC, TGT],
        ),
    log:
        "results/logs/data/prepare.log",
    params:
        raw=f"resources/corpora/{config['data']['corpus']}",
        splits=json.dumps(config["data"]["splits"], sort_keys=True),
        max_pairs=(
            f"--max-train-pairs {config['data']['max_train_pairs']}"
            if config["data"].get("max_train_pairs")
            else ""
        ),
        concat=" ".join(str(k) for k in config["data"].get("concat", [])),
    shell:
        "{PYTHON}.data.prepare --raw-dir {params.raw} --out-dir " + DATA_DIR +
        " --src {SRC} --tgt {TGT} --splits '{params.splits}' {params.max_pairs}"
        " --concat {params.concat} > {log} 2>&1"


rule train_bpe:
    input:
        f"{DATA_DIR}/train.{SRC}",
        f"{DATA_DIR}/train.{TGT}",
    output:
        f"{DATA_DIR}/spm.model",
    log:
        "results/logs/data/bpe.log",
    params:
        prefix=f"{DATA_DIR}/spm",
        vocab_size=config["data"]["bpe_vocab_size"],
    shell:
        "{PYTHON}.data.bpe --inputs {input} --model-prefix {params.prefix}"
        " --vocab-size {params.vocab_size} > {log} 2>&1"
