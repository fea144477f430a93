# Kernel benchmarks (claims D7, D8): our Triton attention vs torch's SDPA vs the materialised score
# table, and decoding with a KV cache vs recomputing, one pair of CSVs per device in
# config["bench"]["devices"]. The options for a device are config["bench"][device], passed to
# `python -m softlookup.bench` as CLI options (seq_lens: [128, 256] -> --seq-lens 128 256).
# The cuda variant asks the executor for one GPU (slurm: `gpu=1`, i.e. --gpus=1; a cluster that
# wants --gres instead can set `slurm_extra: "'--gres=gpu:1'"` for bench_attention in its profile).

BENCH_DEVICES = config["bench"]["devices"]
BENCH_CSVS = expand(
    "results/bench/{kind}_{device}.csv", kind=["attention", "decode"], device=BENCH_DEVICES
)


def bench_options(device):
    """config["bench"][device] as CLI options of softlookup.bench (causal: true -> --causal true)."""
    options = []
    for key, value in config["bench"].get(device, {}).items():
        values = value if isinstance(value, list) else [value]
        text = " ".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
        options.append(f"--{key.replace('_', '-')} {text}")
    return " ".join(options)


rule bench_attention:
    output:
        attention=report("results/bench/attention_{device}.csv", category="Kernel benchmarks"),
        decode=report("results/bench/decode_{device}.csv", category="Kernel benchmarks"),
    log:
        "results/logs/bench/attention_{device}.log",
    wildcard_constraints:
        device="cpu|cuda",
    params:
        options=lambda wildcards: bench_options(wildcards.device),
    threads: config["bench"]["threads"]
    resources:
        gpu=lambda wildcards: int(wildcards.device == "cuda"),
    shell:
        "{PYTHON}.bench --device {wildcards.device} --out {output.attention}"
        " --decode-out {output.decode} --threads {threads} {params.options} > {log} 2>&1"
