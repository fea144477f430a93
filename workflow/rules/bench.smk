# Benchmarks (claims D6, D7, D8), CSVs per device in config["bench"]["devices"]:
# - bench_attention: our Triton attention vs torch's SDPA vs the materialised score table, and
#   decoding one attention with a KV cache vs recomputing (kernel level); options
#   config["bench"][device], passed to `python -m softlookup.bench.kernels` as CLI options
#   (seq_lens: [128, 256] -> --seq-lens 128 256);
# - bench_generation: greedy generation by a whole random-weight Transformer with its KV cache vs
#   recomputing the prefix (model level), the last step's log-log slopes with their intervals over
#   the repeated timings (kv_step_slopes_<device>.csv), and the allocator's memory of the cache
#   against layers and heads (cache_memory_<device>.csv); options config["bench"]["generation"]
#   (optional: the defaults of `python -m softlookup.bench.generation` are config.yaml's
#   transformer dims);
# - bench_score_step: one decoder step of the GRU's attention with each score (additive, dot,
#   general), timed over repeated calls with intervals, and its FLOPs counted from the shapes
#   (claim D2's "cheaper"); the width is the config's gru_additive hidden_dim;
# - bench_train_lengths: one training step of the GRU with additive attention and of the
#   Transformer (the config's gru_additive and transformer, from their first seed's run config)
#   against sentence length, tokens per batch fixed; options config["bench"]["train_lengths"].
# The cuda variants ask the executor for one GPU (slurm: `gpu=1`, i.e. --gpus=1; a cluster that
# wants --gres instead can set `slurm_extra: "'--gres=gpu:1'"` for these rules in its profile).
# Options travel as a list param, quoted element by element ({params.options:q}).

BENCH_DEVICES = config["bench"]["devices"]
# config["bench"]["measured"]: committed CSVs of devices this workflow does not run (a lent GPU's
# scripts/gpu_check.sh), inputs of the ledger and the cost figure like the ones made here
# D6's pair, benchmarked where this config trains both (not long.yaml, not converged*.yaml)
TRAIN_LENGTHS_PAIR = ["gru_additive", "transformer"]
TRAIN_LENGTHS = ["train_step_lengths"] if set(TRAIN_LENGTHS_PAIR) <= set(VARIANTS) else []
BENCH_CSVS = expand(
    "results/bench/{kind}_{device}.csv",
    kind=["attention", "decode", "generation", "kv_step_slopes", "cache_memory", "score_step",
          *TRAIN_LENGTHS],
    device=BENCH_DEVICES,
) + measured_bench(config)


def bench_options(options_by_key):
    """A config mapping as a CLI option list (new_tokens: [25, 50] -> ["--new-tokens", "25",
    "50"]; booleans lower case)."""
    options = []
    for key, value in options_by_key.items():
        values = value if isinstance(value, list) else [value]
        options.append(f"--{key.replace('_', '-')}")
        options.extend(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
    return options


rule bench_attention:
    output:
        attention=report("results/bench/attention_{device}.csv", category="Kernel benchmarks"),
        decode=report("results/bench/decode_{device}.csv", category="Kernel benchmarks"),
    log:
        "results/logs/bench/attention_{device}.log",
    benchmark:
        "results/benchmarks/bench_attention/{device}.tsv"
    wildcard_constraints:
        device="cpu|cuda",
    params:
        options=lambda wildcards: bench_options(config["bench"].get(wildcards.device, {})),
    threads: config["bench"]["threads"]
    resources:
        gpu=lambda wildcards: int(wildcards.device == "cuda"),
    shell:
        "{PYTHON}.bench.kernels --device {wildcards.device:q} --out {output.attention:q}"
        " --decode-out {output.decode:q} --threads {threads} {params.options:q} > {log:q} 2>&1"


def generation_options():
    """The benchmarked Transformer has the config's `transformer` dimensions and BPE vocabulary,
    unless config["bench"]["generation"] says otherwise."""
    model = config["models"].get("transformer", {})
    dims = {key: model[key] for key in ("d_model", "heads", "ffn_dim") if key in model}
    if "dec_layers" in model:
        dims["layers"] = model["dec_layers"]
    dims["vocab"] = config["data"]["bpe_vocab_size"]
    return bench_options({**dims, **config["bench"].get("generation", {})})


rule bench_generation:
    output:
        generation=report("results/bench/generation_{device}.csv",
                          category="Generation benchmarks"),
        slopes=report("results/bench/kv_step_slopes_{device}.csv",
                      category="Generation benchmarks"),
        memory=report("results/bench/cache_memory_{device}.csv",
                      category="Generation benchmarks"),
    log:
        "results/logs/bench/generation_{device}.log",
    benchmark:
        "results/benchmarks/bench_generation/{device}.tsv"
    wildcard_constraints:
        device="cpu|cuda",
    params:
        options=generation_options(),
    threads: config["bench"]["threads"]
    resources:
        gpu=lambda wildcards: int(wildcards.device == "cuda"),
    shell:
        "{PYTHON}.bench.generation --device {wildcards.device:q} --out {output.generation:q}"
        " --slopes-out {output.slopes:q} --memory-out {output.memory:q} --threads {threads}"
        " {params.options:q} > {log:q} 2>&1"


def score_step_options():
    """The GRU's width (models.gru_additive's hidden_dim), where the config has that model."""
    model = config["models"].get("gru_additive", {})
    return bench_options({"dim": model["hidden_dim"]} if "hidden_dim" in model else {})


rule bench_score_step:
    output:
        report("results/bench/score_step_{device}.csv", category="Generation benchmarks"),
    log:
        "results/logs/bench/score_step_{device}.log",
    benchmark:
        "results/benchmarks/bench_score_step/{device}.tsv"
    wildcard_constraints:
        device="cpu|cuda",
    params:
        options=score_step_options(),
    threads: config["bench"]["threads"]
    resources:
        gpu=lambda wildcards: int(wildcards.device == "cuda"),
    shell:
        "{PYTHON}.bench.score_step --device {wildcards.device:q} --out {output:q}"
        " --threads {threads} {params.options:q} > {log:q} 2>&1"


rule bench_train_lengths:
    input:
        runs=expand(
            "results/runs/{variant}-s{seed}/config.json",
            variant=TRAIN_LENGTHS_PAIR,
            seed=config["seeds"][0],
        ),
    output:
        report("results/bench/train_step_lengths_{device}.csv", category="Training benchmarks"),
    log:
        "results/logs/bench/train_lengths_{device}.log",
    benchmark:
        "results/benchmarks/bench_train_lengths/{device}.tsv"
    wildcard_constraints:
        device="cpu|cuda",
    params:
        options=bench_options(config["bench"].get("train_lengths", {})),
        vocab=config["data"]["bpe_vocab_size"],
    threads: config["bench"]["threads"]
    resources:
        gpu=lambda wildcards: int(wildcards.device == "cuda"),
    shell:
        "{PYTHON}.bench.train_lengths --device {wildcards.device:q} --run-configs {input.runs:q}"
        " --vocab {params.vocab} --out {output:q} --threads {threads} {params.options:q}"
        " > {log:q} 2>&1"
