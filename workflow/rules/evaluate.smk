# Translate every test set with every run, score it, collect the tidy tables, and compare the
# pairs of variants config["comparisons"] names, paired on the same test sentences.


from snakemake.logging import logger

from softlookup.intervals import COVERAGE


def comparison_pairs():
    """config["comparisons"] as (name, a, b, test set); pairs this config cannot compare (a
    variant it does not train, a test set it does not translate) are left out, with a warning."""
    pairs = []
    for name, pair in (config.get("comparisons") or {}).items():
        unknown = [v for v in (pair["a"], pair["b"]) if v not in VARIANTS]
        if pair["test_set"] not in TEST_SETS:
            unknown.append(f"test set {pair['test_set']}")
        if unknown:
            logger.warning(f"comparison {name} skipped: this config has no {', '.join(unknown)}")
            continue
        pairs.append((name, pair["a"], pair["b"], pair["test_set"]))
    return pairs


COMPARISONS = comparison_pairs()
COMPARED_RUNS = sorted({f"{variant}-s{seed}" for _, a, b, _ in COMPARISONS for variant in (a, b)
                        for seed in run_seeds(config, variant)})


# Training-budget points (train.ladder): a run's weights at each point below its epoch cap are
# translated and scored on the test sets its comparisons use (so every comparison, and every
# verdict, exists per point), and compared per point; the final model is translated on every
# test set as before.
def run_ladder(run):
    """The budget points of a run, from its settings (softlookup.config.ladder_points)."""
    variant, seed = split_run(run)
    return ladder_points(run_config(variant, seed)["train"])


def point_test_sets(run):
    variant = variant_of(run)
    return sorted({test_set for _, a, b, test_set in COMPARISONS if variant in (a, b)})


def point_files(kind, runs):
    """results/runs/<run>/ladder/<kind>.e<k>.<test set>.<tgt|csv> of every point of `runs`."""
    suffix = TGT if kind == "hyp" else "csv"
    return [f"results/runs/{run}/ladder/{kind}.e{point}.{test_set}.{suffix}" for run in runs
            for point in run_ladder(run) for test_set in point_test_sets(run)]


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
    benchmark:
        "results/benchmarks/translate/{run}.{test_set}.tsv"
    params:
        run_dir="results/runs/{run}",
        weights="results/runs/{run}/model.pt",
        beam=config["evaluate"]["beam_size"],
        length_penalty=config["evaluate"]["length_penalty"],
    threads: translate_threads()
    resources:
        gpu=MODEL_GPUS,
    shell:
        "{PYTHON}.evaluate.translate --run-dir {params.run_dir:q} --weights {params.weights:q}"
        " --spm {input.spm:q}"
        " --input {input.source:q} --out {output:q} --beam-size {params.beam:q}"
        " --length-penalty {params.length_penalty:q} --threads {threads} > {log:q} 2>&1"


rule score:
    input:
        source=f"{DATA_DIR}/{{test_set}}.{SRC}",
        hypotheses=f"results/runs/{{run}}/hyp.{{test_set}}.{TGT}",
        references=f"{DATA_DIR}/{{test_set}}.{TGT}",
    output:
        "results/runs/{run}/scores.{test_set}.csv",
    log:
        "results/logs/score/{run}.{test_set}.log",
    benchmark:
        "results/benchmarks/score/{run}.{test_set}.tsv"
    params:
        edges=[str(edge) for edge in config["evaluate"]["bucket_edges"]],
        min_sentences=config["evaluate"]["min_bucket_sentences"],
        bootstrap=config["evaluate"]["bootstrap"],
    shell:
        "{PYTHON}.evaluate.score --test-set {wildcards.test_set:q} --source {input.source:q}"
        " --hypotheses {input.hypotheses:q} --references {input.references:q}"
        " --bucket-edges {params.edges:q} --min-bucket-sentences {params.min_sentences:q}"
        " --bootstrap {params.bootstrap:q} --out {output:q} > {log:q} 2>&1"


# A budget point's weights (ladder/e<k>.pt) are written by train beside its outputs, as
# checkpoint.pt is; its meta.json says which epoch's weights each point holds.
use rule translate as translate_point with:
    input:
        meta="results/runs/{run}/meta.json",
        spm=f"{DATA_DIR}/spm.model",
        source=f"{DATA_DIR}/{{test_set}}.{SRC}",
    output:
        f"results/runs/{{run}}/ladder/hyp.e{{epoch}}.{{test_set}}.{TGT}",
    log:
        "results/logs/translate/{run}.e{epoch}.{test_set}.log",
    benchmark:
        "results/benchmarks/translate_point/{run}.e{epoch}.{test_set}.tsv"
    params:
        run_dir="results/runs/{run}",
        weights="results/runs/{run}/ladder/e{epoch}.pt",
        beam=config["evaluate"]["beam_size"],
        length_penalty=config["evaluate"]["length_penalty"],


use rule score as score_point with:
    input:
        source=f"{DATA_DIR}/{{test_set}}.{SRC}",
        hypotheses=f"results/runs/{{run}}/ladder/hyp.e{{epoch}}.{{test_set}}.{TGT}",
        references=f"{DATA_DIR}/{{test_set}}.{TGT}",
    output:
        "results/runs/{run}/ladder/scores.e{epoch}.{test_set}.csv",
    log:
        "results/logs/score/{run}.e{epoch}.{test_set}.log",
    benchmark:
        "results/benchmarks/score_point/{run}.e{epoch}.{test_set}.tsv"


rule collect_scores:
    input:
        scores=expand("results/runs/{run}/scores.{test_set}.csv", run=RUNS, test_set=TEST_SETS),
        configs=expand("results/runs/{run}/config.json", run=RUNS),
        metas=expand("results/runs/{run}/meta.json", run=RUNS),
        logs=expand("results/runs/{run}/log.csv", run=RUNS),
        points=point_files("scores", RUNS),
    output:
        scores=report(
            "results/tables/scores.csv",
            caption="../report/scores.rst",
            category="Tables",
        ),
        training="results/tables/training.csv",
    log:
        "results/logs/collect_scores.log",
    benchmark:
        "results/benchmarks/collect_scores/all.tsv"
    params:
        runs=RUNS,
        test_sets=TEST_SETS,
    shell:
        "{PYTHON}.evaluate.collect --runs-dir results/runs --runs {params.runs:q}"
        " --test-sets {params.test_sets:q} --point-scores {input.points:q} --out {output.scores:q}"
        " --training-out {output.training:q} > {log:q} 2>&1"


rule compare:
    input:
        hypotheses=[f"results/runs/{variant}-s{seed}/hyp.{test_set}.{TGT}"
                    for _, a, b, test_set in COMPARISONS for variant in (a, b)
                    for seed in run_seeds(config, variant)],
        points=point_files("hyp", COMPARED_RUNS),
        configs=expand("results/runs/{run}/config.json", run=COMPARED_RUNS),
        metas=expand("results/runs/{run}/meta.json", run=COMPARED_RUNS),
        texts=sorted({f"{DATA_DIR}/{test_set}.{lang}" for *_, test_set in COMPARISONS
                      for lang in (SRC, TGT)}),
    output:
        comparisons=report(
            "results/tables/comparisons.csv",
            caption="../report/comparisons.rst",
            category="Tables",
        ),
        seed_variance="results/tables/seed_variance.csv",
    log:
        "results/logs/compare.log",
    benchmark:
        "results/benchmarks/compare/all.tsv"
    params:
        runs=COMPARED_RUNS,
        pairs=[field for pair in COMPARISONS for field in ("--pair", *pair)],
        data_dir=DATA_DIR,
        edges=[str(edge) for edge in config["evaluate"]["bucket_edges"]],
        min_sentences=config["evaluate"]["min_bucket_sentences"],
        resamples=config["evaluate"]["bootstrap"],
    shell:
        "{PYTHON}.evaluate.compare --runs-dir results/runs --runs {params.runs:q} {params.pairs:q}"
        " --data-dir {params.data_dir:q} --src {SRC:q} --tgt {TGT:q}"
        " --bucket-edges {params.edges:q} --min-bucket-sentences {params.min_sentences:q}"
        " --resamples {params.resamples:q} --out {output.comparisons:q}"
        " --seed-variance-out {output.seed_variance:q} > {log:q} 2>&1"


# The coverage the comparisons' intervals keep, measured by simulated studies through the same
# code (evaluate.coverage) at the tests' numbers of seeds and at each one this study trains a
# variant on; the paper's Statistics paragraph prints its range. Reruns when the study count or
# the seed counts change, or by hand (-R coverage) after a change of evaluate/paired.py.
COVERAGE_SEEDS = sorted(
    {*COVERAGE["seeds"], *(len(run_seeds(config, variant)) for variant in VARIANTS)} - {1}
)


rule coverage:
    output:
        "results/tables/coverage.csv",
    log:
        "results/logs/coverage.log",
    benchmark:
        "results/benchmarks/coverage/all.tsv"
    params:
        studies=config["evaluate"]["coverage_studies"],
        seeds=COVERAGE_SEEDS,
    shell:
        "{PYTHON}.evaluate.coverage --studies {params.studies:q} --seeds {params.seeds}"
        " --out {output:q} > {log:q} 2>&1"


# What this stage keeps (rule all asks for each file: common.smk, get_final_output): every run's
# hypotheses and scores, per test set and budget point, and the tables.
EVALUATE_OUTPUTS = [
    *expand([*rules.translate.output, *rules.score.output], run=RUNS, test_set=TEST_SETS),
    *point_files("hyp", RUNS),
    *point_files("scores", RUNS),
    *map(str, rules.collect_scores.output),
    *map(str, rules.compare.output),
    *map(str, rules.coverage.output),
]
