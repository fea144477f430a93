"""Facts of the abstract and the setup: the ledger's counts, the best model, the length effect,
the data manifest, the models and their training settings, the hardware."""

from __future__ import annotations

from ..labels import base_labels
from ..study import Study
from . import claims, convergence, cost, results, tables


def run_environment(study: Study) -> dict:
    """The environment the first run with one recorded ({} when none did)."""
    for run in study.runs.values():
        if isinstance(run.meta.get("environment"), dict):
            return run.meta["environment"]
    return {}


def abstract(study: Study) -> dict:
    found = claims.claims(study)
    per_base = tables.pooled(tables.metric_rows(study, tables.main_test_set(study)), ["base_model"])
    labels = base_labels(tables.base_models(study))
    best = per_base.sort_values("value").iloc[-1].to_dict() if len(per_base) else None
    if best:
        best["label"] = labels.get(best["base_model"], best["base_model"])
    generation = cost.generation_rows(study)
    return {
        "verdicts": {v: len(found.with_verdict(v)) for v in claims.VERDICTS},
        "total": len(found),
        "best": best,
        "length": results.length_effect(study),
        "convergence": convergence.section(study),
        "speedup": generation[-1] if generation else None,
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


def setup(study: Study) -> dict:
    manifest, config = study.manifest, study.config
    data = config.get("data", {})
    splits = manifest.get("splits", {})
    runs = tables.runs(study)
    train = config.get("train", {})
    longest = runs["epochs"].max() if "epochs" in runs else train.get("epochs")
    join = data.get("join") or {}
    return {
        "corpus": data.get("corpus", "parallel"),
        "source": manifest.get("source", data.get("src", "")),
        "target": manifest.get("target", data.get("tgt", "")),
        "splits": [{"name": n, "pairs": info.get("pairs", 0)} for n, info in splits.items()],
        "train_words": splits.get("train", {}).get("source_words", {}),
        "joined": [n for n in splits if ".concat" in n or n in data.get("joined_tests", {})],
        "join_k": join.get("k", []),
        "join_weights": join.get("weights") or [],
        "vocab": data.get("bpe_vocab_size"),
        "runs": len(runs),
        "variants": runs["variant"].nunique() if len(runs) else 0,
        "seeds": sorted({int(s) for s in runs["seed"].dropna()}) if len(runs) else [],
        "models": list(dict.fromkeys(runs["base_label"])) if len(runs) else [],
        "train": train,
        "early_stopping": bool(
            train.get("patience") is not None
            and longest is not None
            and train["patience"] < longest
        ),
        "own_settings": own_training_settings(study),
        "environment": run_environment(study),
        "signatures": "signature" in study.scores and study.scores["signature"].notna().any(),
    }
