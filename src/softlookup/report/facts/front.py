"""Facts of the abstract and the setup: the ledger's counts, the best model, the length effect,
the data manifest, the models and their training settings, the hardware."""

from __future__ import annotations

import inspect

from ...config import convergence_references
from ...evaluate import translate
from ...intervals import COVERAGE
from ..labels import base_labels, corpus_citation, corpus_label
from ..study import Study
from . import claims, convergence, cost, tables


def run_environment(study: Study) -> dict:
    """The environment the first run with one recorded ({} when none did)."""
    for run in study.runs.values():
        if isinstance(run.meta.get("environment"), dict):
            return run.meta["environment"]
    return {}


def abstract(study: Study) -> dict:
    """The verdict counts and the longer training's summary; the measurements the abstract
    states are the shared `quantities` (facts.quantities), the same numbers the sections print."""
    found = claims.claims(study)
    counts = [(v, len(found.with_verdict(v))) for v in claims.VERDICTS]
    return {
        "verdicts": [(verdict, count) for verdict, count in counts if count],  # none of 0
        "total": len(found),
        "design_tokens": cost.design_tokens(study),
        "train_steps": cost.train_step_ratios(study),
        "convergence": convergence.section(study),
    }


def own_training_settings(study: Study) -> list[dict]:
    """[{models: [labels], settings: 'lr 0.003'}] for the trained base models whose config
    overrides the training defaults (their sweep points inherit them)."""
    labels = base_labels(tables.base_models(study))
    groups: dict[str, list] = {}
    for name, model in study.config.get("models", {}).items():
        if name in labels and model.get("train"):
            settings = ", ".join(f"{k} {v}" for k, v in sorted(model["train"].items()))
            groups.setdefault(settings, []).append(labels[name])
    return [{"models": models, "settings": settings} for settings, models in groups.items()]


def architecture(name: str, model: dict, label: str, parameters: float | None) -> dict:
    """One base model as the setup's table gives it: width, layers, heads and head width d_k
    (a GRU: one attention 'head' as wide as its hidden state, none without attention)."""
    if model.get("arch") == "transformer":
        width, heads = model.get("d_model"), model.get("heads")
        d_k = model.get("d_k") or (width // heads if width and heads else None)
        layers = f"{model.get('enc_layers', '?')}+{model.get('dec_layers', '?')}"
        return {
            "label": label,
            "width": width,
            "layers": layers,
            "heads": heads,
            "d_k": d_k,
            "ffn": model.get("ffn_dim"),
            "embedding": width,  # tied embeddings, as wide as the model
            "dropout": model.get("dropout"),
            "parameters": parameters,
        }
    attends = model.get("attention", "none") != "none"
    return {
        "label": label,
        "width": model.get("hidden_dim"),
        "layers": "1+1",
        "heads": 1 if attends else 0,
        "d_k": model.get("hidden_dim") if attends else None,
        "ffn": None,
        "embedding": model.get("emb_dim"),
        "dropout": model.get("dropout"),
        "parameters": parameters,
    }


def architectures(study: Study) -> list[dict]:
    """The trained base models, one row each: width, layers, heads, d_k, parameters (a base
    run's, mean over seeds)."""
    runs = tables.runs(study)
    labels = base_labels(tables.base_models(study))
    rows = []
    for name, model in tables.base_models(study).items():
        own = runs[(runs["base_model"] == name) & (runs["sweep_key"] == "")] if len(runs) else runs
        parameters = own["parameters"].dropna().mean() if len(own) else None
        rows.append(architecture(name, model, labels.get(name, name), parameters))
    return rows


def join_shares(join: dict) -> list[dict]:
    """[{ks, share}]: the share of the pairs that sit in examples of k joined pairs, from the
    unnormalised per-example weights of k (k w_k / sum k w_k; equal weights without any);
    consecutive k of one share (to a tenth of a percent) are one row."""
    ks = join.get("k", [])
    weights = join.get("weights") or [1] * len(ks)
    total = sum(k * w for k, w in zip(ks, weights, strict=True))
    rows: list[dict] = []
    for k, w in zip(ks, weights, strict=True):
        share = k * w / total
        if rows and abs(rows[-1]["share"] - share) < 1e-3:
            rows[-1]["ks"].append(k)
        else:
            rows.append({"ks": [k], "share": share})
    return rows


def joined_tests(manifest: dict, data: dict) -> list[dict]:
    """Each test set made by joining consecutive pairs: the splits it joins, its pairs, its
    inputs and the pairs per input on average, and its source length."""
    rows = []
    for name, info in manifest.get("splits", {}).items():
        joined_from = info.get("joined_from") or data.get("joined_tests", {}).get(name)
        if not joined_from and ".concat" not in name:
            continue
        pairs, inputs = info.get("pairs", 0), info.get("examples", 0)
        rows.append(
            {
                "name": name,
                "joined_from": list(joined_from or []),
                "pairs": pairs,
                "inputs": inputs,
                "per_input": pairs / inputs if inputs else None,
                "words": info.get("source_words", {}),
                "buckets": len(info.get("buckets", {})),
            }
        )
    return rows


def decode_length() -> dict:
    """The longest output decoding may write: max_len_ratio x the source's tokens +
    max_len_extra (evaluate.translate's defaults, which every translation uses)."""
    defaults = inspect.signature(translate.translate).parameters
    return {name: defaults[name].default for name in ("max_len_ratio", "max_len_extra")}


def other_corpora(study: Study) -> list[dict]:
    """The corpora of committed references of longer studies that are not the main corpus:
    {corpus, source, target, citation, splits: [{name, pairs, words}]}, from each reference's
    data manifest (one entry per corpus)."""
    main = corpus_label(study.config.get("data", {}).get("corpus", ""))
    found: dict[str, dict] = {}
    if not study.config.get("convergence"):
        return []
    for folder in convergence_references(study.config):
        reference = convergence.read_reference(folder)
        name = reference.provenance.get("config", {}).get("data", {}).get("corpus", "")
        data = reference.manifest
        if corpus_label(name) == main or corpus_label(name) in found or not data:
            continue
        found[corpus_label(name)] = {
            "corpus": corpus_label(name),
            "citation": corpus_citation(name),
            "source": data.get("source", ""),
            "target": data.get("target", ""),
            "splits": [
                {"name": split, "pairs": info.get("pairs", 0), "words": info.get("source_words")}
                for split, info in data.get("splits", {}).items()
            ],
        }
    return list(found.values())


def seed_sets(runs) -> tuple[list[int], list[dict]]:
    """(the seeds most variants trained on, [{labels, seeds}] of the variants that trained on
    more: their extra seeds, variants with the same extra seeds together)."""
    if not len(runs):
        return [], []
    by_variant = runs.groupby("variant", sort=False)
    seeds = by_variant["seed"].agg(lambda s: tuple(sorted(int(x) for x in s.dropna())))
    common = seeds.value_counts().index[0]
    more: dict[tuple, list[str]] = {}
    for variant, own in seeds.items():
        if own != common:
            label = by_variant.get_group(variant)["label"].iloc[0]
            more.setdefault(tuple(s for s in own if s not in common), []).append(label)
    return list(common), [
        {"labels": labels, "seeds": list(extra)} for extra, labels in more.items()
    ]


def can_stop_early(train: dict, longest: float | None) -> bool:
    """Early stopping can end a run before its cap only when the best epoch (1 at the earliest)
    plus `patience` epochs without improvement come before the longest run's last epoch."""
    patience = train.get("patience")
    return patience is not None and longest is not None and 1 + patience < longest


def setup(study: Study) -> dict:
    manifest, config = study.manifest, study.config
    data = config.get("data", {})
    splits = manifest.get("splits", {})
    runs = tables.runs(study)
    seeds, more_seeds = seed_sets(runs)
    train = config.get("train", {})
    longest = runs["epochs"].max() if "epochs" in runs else train.get("epochs")
    join = data.get("join") or {}
    return {
        "corpus": corpus_label(data.get("corpus", "parallel")),
        "corpus_cite": corpus_citation(data.get("corpus", "")),
        "source": manifest.get("source", data.get("src", "")),
        "target": manifest.get("target", data.get("tgt", "")),
        "splits": [{"name": n, "pairs": info.get("pairs", 0)} for n, info in splits.items()],
        "train_words": splits.get("train", {}).get("source_words", {}),
        "joined": joined_tests(manifest, data),
        "other_corpora": other_corpora(study),
        "join_k": join.get("k", []),
        "join_weights": join.get("weights") or [],
        "join_shares": join_shares(join),
        "architectures": architectures(study),
        "decoding": {
            "beam": study.config.get("evaluate", {}).get("beam_size", 1),
            "length_penalty": study.config.get("evaluate", {}).get("length_penalty"),
            **decode_length(),
        },
        "main_test": tables.main_test_set(study),
        "vocab": data.get("bpe_vocab_size"),
        "runs": len(runs),
        "variants": runs["variant"].nunique() if len(runs) else 0,
        "seeds": seeds,
        "more_seeds": more_seeds,
        "models": list(dict.fromkeys(runs["base_label"])) if len(runs) else [],
        "train": train,
        "early_stopping": can_stop_early(train, longest),
        "own_settings": own_training_settings(study),
        "environment": run_environment(study),
        "signatures": "signature" in study.scores and study.scores["signature"].notna().any(),
        "coverage": coverage(study),
    }


def coverage(study: Study) -> dict:
    """The intervals' promise (intervals.COVERAGE, kept by tests/test_coverage.py) and the
    coverage this build measured (results/tables/coverage.csv): per number of seeds, the lowest
    and highest share covering the truth over every pair and system of every scenario."""
    table = study.coverage
    measured = []
    if not table.empty and {"seeds", "covered", "studies", "scenario"} <= set(table):
        for seeds, rows in table.groupby("seeds"):
            measured.append(
                {
                    "seeds": int(seeds),
                    "low": float(rows["covered"].min()),
                    "high": float(rows["covered"].max()),
                    "estimates": len(rows),
                }
            )
    return {
        **COVERAGE,
        "measured": measured,
        "measured_studies": int(table["studies"].iloc[0]) if measured else 0,
        "scenarios": int(table["scenario"].nunique()) if measured else 0,
    }
