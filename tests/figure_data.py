"""A results/ folder as the figures read it, from the committed reference of the default config
(results/reference/config/: its scores, comparisons, ledger and training logs, the merged config
in provenance.json), the convergence references the default config reads now, the committed GPU rows
(benchmarks/gpu/), and small synthetic stand-ins for
what a reference does not keep (the CPU benchmarks, the probes, the attention analysis, and the
seed SDs of its comparisons' variants, from its scores by evaluate.compare's code)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from softlookup import tables
from softlookup.evaluate import compare
from softlookup.evaluate.paired import SeedScores

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "results" / "reference" / "config"
GPU = ROOT / "benchmarks" / "gpu" / "NVIDIA_H200"
LOG_COLUMNS = ["epoch", "steps", "train_loss", "val_loss", "target_tokens", "wall_s"]


def reference_results(root: Path) -> Path:
    """root/results from the committed reference; root/results/paper/config.json its config."""
    results = root / "results"
    config = json.loads((REFERENCE / "provenance.json").read_text())["config"]
    default = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    config["convergence"] = default["convergence"]  # the references this config reads now
    (results / "paper").mkdir(parents=True)
    (results / "paper" / "config.json").write_text(json.dumps(config))
    for folder, names in (
        ("tables", ["scores.csv", "comparisons.csv"]),
        ("claims", ["claims.csv", "checks.csv"]),
    ):
        (results / folder).mkdir()
        for name in names:
            shutil.copy(REFERENCE / name, results / folder / name)
    write_runs(results, config)
    write_seed_variance(results, config["comparisons"])
    write_bench(results)
    write_probes(results)
    write_analysis(results, config["analysis"]["runs"])
    return results


def write_runs(results: Path, config: dict) -> None:
    """runs/<run>/config.json, meta.json and log.csv from the reference's training.csv."""
    training = pd.read_csv(REFERENCE / "training.csv")
    for run, log in training.groupby("run"):
        first = log.iloc[0]
        base, variant = first["base_model"], first["variant"]
        folder = results / "runs" / run
        folder.mkdir(parents=True)
        settings = {k: v for k, v in config["models"][base].items() if k != "train"}
        (folder / "config.json").write_text(
            json.dumps(
                {
                    "run": run,
                    "variant": variant,
                    "base_model": base,
                    "seed": int(first["seed"]),
                    "model": settings,
                }
            )
        )
        (folder / "meta.json").write_text(
            json.dumps(
                {
                    "status": "ok",
                    "epochs": int(log["epoch"].max()),
                    "parameters": int(first["parameters"]),
                }
            )
        )
        log[LOG_COLUMNS].to_csv(folder / "log.csv", index=False)


def write_seed_variance(results: Path, comparisons: dict) -> None:
    """tables/seed_variance.csv as evaluate.compare writes it, from the reference's whole-set
    BLEU per seed (final models): each family (architecture, epochs) and test set of the
    configured comparisons, by compare_point, on ten made-up sentence draws."""
    scores = pd.read_csv(REFERENCE / "scores.csv")
    bleu = scores[(scores.metric == "bleu") & (scores.bucket == "all") & (scores.epoch == "final")]
    family = {
        v: f"{rows.arch.iloc[0]}, {rows.epochs.iloc[0]} epochs"
        for v, rows in bleu.groupby("variant")
    }
    groups: dict[str, list] = {}
    for name, pair in comparisons.items():
        groups.setdefault(pair["test_set"], []).append((name, pair["a"], pair["b"]))
    test = compare.TestSet([], {"all": np.arange(100)}, {})
    rows = []
    for test_set, pairs in groups.items():
        cells = {}
        for variant in sorted({v for _, a, b in pairs for v in (a, b)}):
            runs = bleu[(bleu.variant == variant) & (bleu.test_set == test_set)].sort_values("seed")
            observed = runs["value"].to_numpy()
            drawn = observed[:, None] + np.linspace(-0.5, 0.5, 10)
            cells[variant] = {("all", "bleu"): SeedScores(tuple(runs["seed"]), observed, drawn)}
        rows += compare.compare_point(pairs, family, test_set, "final", cells, test, 10)[1]
    pd.DataFrame(rows, columns=tables.SEED_VARIANCE_COLUMNS).to_csv(
        results / "tables" / "seed_variance.csv", index=False
    )


def write_bench(results: Path) -> None:
    """The committed GPU attention rows, and CPU attention and generation rows of the default
    config's shape (naive and SDPA at 128-1024 tokens, times growing as N^2)."""
    bench = results / "bench"
    bench.mkdir()
    shutil.copy(GPU / "attention_cuda.csv", bench / "attention_cuda.csv")
    rows = [
        {
            "device": "cpu",
            "backend": backend,
            "pass": "forward_backward",
            "seq_len": n,
            "time_ms": factor * (n / 128) ** 2,
            "status": "ok",
            "peak_mem_per_seq_mib": float("nan"),
            "saved_for_backward_mib": 0.06 * n / 128,
        }
        for backend, factor in (("naive", 2.0), ("torch_sdpa", 1.2))
        for n in (128, 256, 512, 1024)
    ]
    pd.DataFrame(rows).to_csv(bench / "attention_cpu.csv", index=False)
    steps = [25, 50, 100, 200]
    pd.DataFrame(
        {
            "device": "cpu",
            "new_tokens": steps,
            "identical": True,
            "last_step_cache_s": [1.0e-3 + 1e-6 * n for n in steps],
            "last_step_recompute_s": [4e-5 * n for n in steps],
        }
    ).to_csv(bench / "generation_cpu.csv", index=False)


def write_probes(results: Path) -> None:
    """The three probes the probe figure draws, shaped as probes/*.py writes them."""
    probes = results / "probes"
    probes.mkdir()
    dims = [4, 16, 64, 256, 1024]
    spread = [
        {
            "probe": "spread",
            "quantity": "std_score",
            "d": d,
            "scaling": s,
            "value": math.sqrt(d) if s == "unscaled" else 1.0,
        }
        for d in dims
        for s in ("unscaled", "scaled")
    ]
    saturation = [
        {
            "probe": "saturation",
            "quantity": q,
            "d": d,
            "scaling": s,
            "value": (0.1 + 0.2 * i if s == "unscaled" else 0.01)
            if q.startswith("frac")
            else (0.3 / (i + 1) if s == "unscaled" else 0.4),
        }
        for q in ("frac_rows_saturated", "mean_softmax_jacobian_norm")
        for i, d in enumerate(dims)
        for s in ("unscaled", "scaled")
    ]
    collapse = {
        "attention": 1e-16,
        "attention_relu": 2e-16,
        "attention_residual": 0.9,
        "linear": 1.0,
    }
    averaging = [
        {
            "probe": "averaging",
            "quantity": "token_uniformity_residual",
            "stack": stack,
            "depth": depth,
            "value": max(floor, 0.99**depth if floor > 0.5 else 10.0 ** (-4 * depth)),
        }
        for stack, floor in collapse.items()
        for depth in range(13)
    ]
    for name, rows in (("spread", spread), ("saturation", saturation), ("averaging", averaging)):
        pd.DataFrame(rows).to_csv(probes / f"{name}.csv", index=False)


SENTENCE = (
    [
        "▁Ein",
        "▁Mann",
        "▁mit",
        "▁einem",
        "▁orangefarbenen",
        "▁Hut",
        "▁,",
        "▁der",
        "▁etwas",
        "▁an",
        "st",
        "ar",
        "r",
        "t",
        "▁.",
        "</s>",
    ],
    [
        "▁A",
        "▁man",
        "▁in",
        "▁an",
        "▁orange",
        "▁hat",
        "▁st",
        "ar",
        "r",
        "ing",
        "▁at",
        "▁something",
        "▁.",
        "</s>",
    ],
)


def write_analysis(results: Path, runs: list[str]) -> None:
    """The example sentence's cross attention of each analysed run (a soft diagonal), and every
    sweep run's mean largest weight (the saturation the sweep figures draw)."""
    analysis = results / "analysis"
    analysis.mkdir()
    keys, queries = SENTENCE
    for run in (run for run in runs if not run.startswith("gru_none")):  # no attention: no map
        weights = [
            [1.0 / (1 + abs(q * len(keys) / len(queries) - k)) ** 2 for k in range(len(keys))]
            for q in range(len(queries))
        ]
        rows = [
            {
                "layer": 0,
                "head": 0,
                "query_pos": q,
                "key_pos": k,
                "query_token": queries[q],
                "key_token": keys[k],
                "weight": w / sum(row),
            }
            for q, row in enumerate(weights)
            for k, w in enumerate(row)
        ]
        pd.DataFrame(rows).to_csv(analysis / f"alignment_{run}.csv", index=False)
    for i, run in enumerate(sorted(p.name for p in (results / "runs").iterdir())):
        pd.DataFrame(
            [{"map": "cross", "quantity": "max_weight_mean", "value": 0.5 + 0.01 * i}]
        ).to_csv(analysis / f"attention_{run}.csv", index=False)
