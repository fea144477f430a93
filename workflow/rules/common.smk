# Config lookups shared by every rule file: the runs a config names, and where their files live.
import json
from glob import glob


DATA_DIR = "results/data/{corpus}-{src}-{tgt}".format(**config["data"])
SRC, TGT = config["data"]["src"], config["data"]["tgt"]
PYTHON = "python -m softlookup"


def sweep_value_name(value):
    """A sweep value as it appears in a run name: true/false, 64, 0.5."""
    return str(value).lower() if isinstance(value, bool) else str(value)


def variants():
    """{variant name: (base model, swept key or "", value or "", model config)} for the config.

    A base model `transformer` runs as itself; a sweep {model: transformer, key: heads,
    values: [1, 8]} adds `transformer.heads-1` and `transformer.heads-8`, so adding a value adds
    only the new runs.
    """
    found = {name: (name, "", "", dict(cfg)) for name, cfg in config["models"].items()}
    for sweep in config.get("sweeps", {}).values():
        base = config["models"][sweep["model"]]
        for value in sweep["values"]:
            name = f"{sweep['model']}.{sweep['key']}-{sweep_value_name(value)}"
            found[name] = (sweep["model"], sweep["key"], sweep_value_name(value),
                           {**base, sweep["key"]: value})
    return found


VARIANTS = variants()
RUNS = [f"{variant}-s{seed}" for variant in VARIANTS for seed in config["seeds"]]
TEST_SETS = config["evaluate"]["test_sets"]


def run_config(variant, seed):
    """What train.py needs for one run: model config, train config (defaults + overrides), seed."""
    model = dict(VARIANTS[variant][3])
    train = {**config["train"], **model.pop("train", {})}
    return {"model": model, "train": train, "seed": int(seed), "src": SRC, "tgt": TGT}


def run_table():
    """Run id -> what the scores table says about the run's settings."""
    table = {}
    for variant, (model, key, value, cfg) in VARIANTS.items():
        for seed in config["seeds"]:
            table[f"{variant}-s{seed}"] = {
                "model": model, "arch": cfg["arch"], "attention": cfg.get("attention", "dot"),
                "sweep": key, "sweep_value": value, "seed": seed,
            }
    return table


def translate_threads():
    return config["resources"]["threads"]["translate"]


def training_threads(variant):
    """Threads of one training job: resources.threads.train, unless train_by_model names the
    variant's base model."""
    threads = config["resources"]["threads"]
    return threads.get("train_by_model", {}).get(VARIANTS[variant][0], threads["train"])


wildcard_constraints:
    run=r"[^/]+-s\d+",
    variant=r"[^/]+",
    seed=r"\d+",
    test_set=r"[^/]+",
