# Corpus files (mirror or upstream, sha256-checked) -> normalised splits + manifest -> BPE model.
# Every config value reaches the shell quoted (`:q`, lists element by element); the splits
# mapping travels as NAME=STEM items, never as JSON in a shell string. Which splits prepare
# writes is softlookup.config's one list (prepared_splits), which also checks the test sets.
# The main corpus is either files per split (Multi30k: rule prepare_corpus below) or, with
# data.archive, a day archive of whole sitting days (config/long.yaml: Europarl), prepared by
# the rule that prepares the data.extra corpora (the loop at the end).
from softlookup.config import prepared_splits
from softlookup.data.sources import export_mirror


def split_options(data):
    """Options of `softlookup.data.prepare` for the splits of one corpus (config["data"] or an
    entry of data.extra): --splits NAME=STEM (or NAME=day patterns), --max-train-pairs."""
    options = ["--splits", *[f"{split}={value}" for split, value in data["splits"].items()]]
    if data.get("max_train_pairs"):
        options += ["--max-train-pairs", str(data["max_train_pairs"])]
    return options


def bucket_options():
    """--bucket-edges: the manifest counts each split's examples per source-length bucket."""
    return ["--bucket-edges", *map(str, config["evaluate"]["bucket_edges"])]


def prepare_options():
    """Options of `softlookup.data.prepare` for config["data"] (a list: each item quoted)."""
    data = config["data"]
    options = split_options(data)
    if data.get("concat"):
        options += ["--concat", *map(str, data["concat"])]
    join = data.get("join")
    if join:
        options += ["--join-k", *map(str, join["k"]), "--join-seed", str(join.get("seed", 0))]
        if join.get("weights"):
            options += ["--join-weights", *map(str, join["weights"])]
    joined = data.get("joined_tests") or {}
    if joined:
        options += ["--joined-test",
                    *[f"{name}={'+'.join(stems)}" for name, stems in joined.items()]]
    return options + bucket_options()


def corpus_stems():
    """Corpus file stems the main data set reads: its splits and the joined test sets' sources."""
    data = config["data"]
    stems = list(data["splits"].values())
    for sources in (data.get("joined_tests") or {}).values():
        stems += [stem for stem in sources if stem not in stems]
    return stems


def day_options(days):
    """Options of `softlookup.data.prepare --archive` for a corpus of sitting days (an entry of
    data.extra, or config["data"] with data.archive)."""
    return ["--src", days["src"], "--tgt", days["tgt"], *split_options(days), *bucket_options()]


# Extra corpora of sitting days (config/paper.yaml: Europarl it-en, the length axis), each
# prepared with whole days held out into results/data/<name>/ with its own BPE model.
EXTRA_DATA = config["data"].get("extra") or {}
# Every corpus of sitting days: name -> (its settings, its data directory). With data.archive the
# main corpus is one of them, named `corpus` (its rule: prepare_corpus, as for Multi30k); its
# BPE model is rule train_bpe's, as for Multi30k.
DAY_CORPORA = {name: (extra, f"results/data/{name}") for name, extra in EXTRA_DATA.items()}
if config["data"].get("archive"):
    DAY_CORPORA["corpus"] = (config["data"], DATA_DIR)


# The corpus mirror, resolved once: $SOFTLOOKUP_MIRROR, else the config's `mirror`; a relative one
# means Snakemake's working directory (`make` has made its own $SOFTLOOKUP_MIRROR absolute, for a
# RUN= build in runs/<name>/ too). Every job gets the absolute path as $SOFTLOOKUP_MIRROR, which
# wins over the rule's --mirror (that param stays as it was: a changed param reruns the job, and a
# refetched corpus file every job after it).
export_mirror(config.get("mirror"))


rule fetch_corpus_file:
    output:
        "resources/corpora/{corpus}/{file}",
    log:
        "results/logs/fetch/{corpus}/{file}.log",
    benchmark:
        "results/benchmarks/fetch_corpus_file/{corpus}.{file}.tsv"
    params:
        mirror=["--mirror", config["mirror"]] if config.get("mirror") else [],
    shell:
        "{PYTHON}.data.sources --corpus {wildcards.corpus:q} --file {wildcards.file:q}"
        " --out {output:q} {params.mirror:q} > {log:q} 2>&1"


if "corpus" not in DAY_CORPORA:

    rule prepare_corpus:
        input:
            expand(
                "resources/corpora/{corpus}/{stem}.{lang}.gz",
                corpus=config["data"]["corpus"],
                stem=corpus_stems(),
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
                split=prepared_splits(config),
                lang=[SRC, TGT],
            ),
        log:
            "results/logs/data/prepare.log",
        benchmark:
            "results/benchmarks/prepare_corpus/all.tsv"
        params:
            raw=f"resources/corpora/{config['data']['corpus']}",
            out_dir=DATA_DIR,
            languages=["--src", SRC, "--tgt", TGT],
            options=prepare_options(),
        shell:
            "{PYTHON}.data.prepare --raw-dir {params.raw:q} --out-dir {params.out_dir:q}"
            " {params.languages:q} {params.options:q} > {log:q} 2>&1"


rule train_bpe:
    input:
        f"{DATA_DIR}/train.{SRC}",
        f"{DATA_DIR}/train.{TGT}",
    output:
        f"{DATA_DIR}/spm.model",
    log:
        "results/logs/data/bpe.log",
    benchmark:
        "results/benchmarks/train_bpe/all.tsv"
    params:
        prefix=f"{DATA_DIR}/spm",
        vocab_size=config["data"]["bpe_vocab_size"],
    shell:
        "{PYTHON}.data.bpe --inputs {input:q} --model-prefix {params.prefix:q}"
        " --vocab-size {params.vocab_size:q} > {log:q} 2>&1"


for _name, (_days, _dir) in DAY_CORPORA.items():

    rule:
        name:
            f"prepare_{_name}"
        input:
            f"resources/corpora/{_days['corpus']}/{_days['archive']}",
        output:
            manifest=f"{_dir}/manifest.json",
            splits=expand(
                f"{_dir}/{{split}}.{{lang}}",
                split=_days["splits"],
                lang=[_days["src"], _days["tgt"]],
            ),
        log:
            f"results/logs/data/prepare_{_name}.log",
        benchmark:
            f"results/benchmarks/prepare_{_name}/all.tsv"
        params:
            out_dir=_dir,
            options=day_options(_days),
        shell:
            "{PYTHON}.data.prepare --archive {input:q} --out-dir {params.out_dir:q}"
            " {params.options:q} > {log:q} 2>&1"

    if _name in EXTRA_DATA:  # the main corpus's BPE model: rule train_bpe

        rule:
            name:
                f"train_bpe_{_name}"
            input:
                f"results/data/{_name}/train.{_days['src']}",
                f"results/data/{_name}/train.{_days['tgt']}",
            output:
                f"results/data/{_name}/spm.model",
            log:
                f"results/logs/data/bpe_{_name}.log",
            benchmark:
                f"results/benchmarks/train_bpe_{_name}/all.tsv"
            params:
                prefix=f"results/data/{_name}/spm",
                vocab_size=_days["bpe_vocab_size"],
            shell:
                "{PYTHON}.data.bpe --inputs {input:q} --model-prefix {params.prefix:q}"
                " --vocab-size {params.vocab_size:q} > {log:q} 2>&1"


# What this stage keeps (rule all asks for each file: common.smk, get_final_output): every
# corpus's splits, manifest and BPE model.
DATA_OUTPUTS = [
    str(path)
    for rule in ["prepare_corpus", "train_bpe",
                 *(f"{kind}_{name}" for name in EXTRA_DATA for kind in ("prepare", "train_bpe"))]
    for path in getattr(rules, rule).output
]
