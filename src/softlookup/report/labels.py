"""Human labels of variants, from one place: tables, figures and prose all name a run this way.

A variant's label is its base model's ("GRU, additive", "Transformer, 1+1 layers") followed by
what its sweep point changes ("$d_k = 128$", "unscaled"): "Transformer, 1+1 layers, $d_k = 128$,
unscaled". Labels are LaTeX that matplotlib's mathtext also reads (plain words, `$...$` math).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from .latex import Tex

ARCHITECTURES = {"gru": "GRU", "transformer": "Transformer"}
ATTENTION = {
    "none": "no attention",
    "additive": "additive",
    "dot": "dot",
    "general": "general",
    "scaled_dot": "scaled dot",
}
SWITCHES = {  # a boolean setting: its label when on, when off
    "scale": ("scaled", "unscaled"),
    "causal_mask": ("causal mask", "no causal mask"),
    "padding_mask": ("padding mask", "no padding mask"),
}
VALUES = {  # a numeric setting: its label for a value
    "d_k": lambda v: f"$d_k = {v}$",
    "heads": lambda v: f"{v} head" + ("" if v == "1" else "s"),
    "max_source_words": lambda v: f"trained on $\\leq {v}$ words",
}


AXES = {  # a swept setting as the axis of a figure
    "d_k": "$d_k$ (width of a head)",
    "heads": "heads",
    "scale": "scaled scores",
    "causal_mask": "causal mask",
    "padding_mask": "padding mask",
    "max_source_words": "longest training source (words)",
}


FAMILY_TITLES = {"scaling": "$d_k$ and scaling", "heads": "heads", "masking": "masks"}


def axis_label(key: str) -> str:
    return AXES.get(key, key.replace("_", " "))


def family_label(name: str) -> str:
    """A sweep family (report.families) as a panel title."""
    return FAMILY_TITLES.get(name, axis_label(name))


def run_family_label(family: str) -> str:
    """A family of runs whose seed variance is pooled (evaluate.compare.family_of: architecture
    and training budget) for a reader: 'gru, 10 epochs' -> 'GRU, 10 epochs'."""
    arch, *rest = str(family).split(", ", 1)
    return ", ".join([ARCHITECTURES.get(arch, arch), *rest])


def own_parts(labels) -> tuple[str, dict[str, str]]:
    """(shared, {label: own}): the leading comma-separated parts every label shares, and what
    each label adds ("base model" for a label that adds nothing): ["GRU, additive", "GRU, dot"]
    -> ("GRU", {"GRU, additive": "additive", "GRU, dot": "dot"})."""
    split = {label: str(label).split(", ") for label in labels}
    shared = []
    for column in zip(*split.values(), strict=False):
        if len(set(column)) > 1:
            break
        shared.append(column[0])
    if len(split) < 2:
        shared = []  # one label: no part is shared with another
    return ", ".join(shared), {
        label: ", ".join(parts[len(shared) :]) or "base model" for label, parts in split.items()
    }


def value_text(value) -> str:
    """A setting as the config spells it: 2.0 -> '2', True -> 'true'."""
    if str(value) in ("True", "False"):  # a bool, numpy's too
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def setting_label(key: str, value) -> Tex:
    """('d_k', 128) -> '$d_k = 128$'; ('scale', False) -> 'unscaled'; an unknown key reads
    'key words = value'."""
    text = value_text(value)
    if key in SWITCHES and text in ("true", "false"):
        return Tex(SWITCHES[key][text == "false"])
    if key == "attention":
        return Tex(ATTENTION.get(text, text.replace("_", " ")))
    if key in VALUES:
        return Tex(VALUES[key](text))
    return Tex(f"{key.replace('_', ' ')} = {text.replace('_', ' ')}")


def sweep_label(sweep: dict) -> Tex:
    """What a sweep point changes: {'d_k': 8, 'scale': False} -> '$d_k = 8$, unscaled'."""
    return Tex(", ".join(setting_label(key, value) for key, value in sweep.items()))


def model_kind(settings: dict) -> str:
    """'GRU, additive' or 'Transformer' from a model's settings."""
    arch = str(settings.get("arch", ""))
    kind = ARCHITECTURES.get(arch, arch.replace("_", " ").capitalize())
    if arch == "gru" and settings.get("attention"):
        kind += ", " + setting_label("attention", settings["attention"])
    return kind


def layers(settings: dict) -> str:
    enc, dec = settings.get("enc_layers"), settings.get("dec_layers")
    return f"{value_text(enc)}+{value_text(dec)} layers" if enc and dec else ""


def base_labels(models: dict[str, dict]) -> dict[str, Tex]:
    """{base model: label} for the base models of one study ({name: model settings}).

    Two models of one kind are told apart by their layer counts, else by the words of their
    name that do not name the kind ('sweep_transformer' -> 'Transformer, sweep model')."""
    kinds = {name: model_kind(settings) for name, settings in models.items()}
    labels = {}
    for name, kind in kinds.items():
        twins = [other for other, k in kinds.items() if k == kind and other != name]
        extra = ""
        if twins:
            differ = any(layers(models[t]) != layers(models[name]) for t in twins)
            words = [w for w in name.split("_") if w.lower() not in kind.lower()]
            extra = layers(models[name]) if differ else " ".join(words) + " model" * bool(words)
        labels[name] = Tex(kind + (f", {extra}" if extra else ""))
    return labels


def variant_label(base: str, sweep: dict) -> Tex:
    """A variant's label from its base model's label and its sweep point."""
    return Tex(", ".join([base, *(setting_label(k, v) for k, v in sweep.items())]))


def pair_labels(labels: Mapping[str, str], models: dict, a: str, b: str) -> tuple[Tex, Tex]:
    """The labels of variants a and b (`<base>.<key>-<value>...`) side by side: a base run that
    keeps its model's value of a key the other side's sweep changes names that value ('Transformer,
    1+1 layers, 4 heads' beside '..., 8 heads', not '...' alone); any other label is labels'."""

    def named(variant: str, other: str) -> Tex:
        base, *points = variant.split(".")
        other_base, *other_points = other.split(".")
        settings = models.get(base) or {}
        keys = [p.split("-", 1)[0] for p in other_points if "-" in p]
        if points or base != other_base or not all(k in settings for k in keys) or not keys:
            return Tex(labels.get(variant, variant))
        own = labels.get(variant, variant)
        return Tex(", ".join([own, *(setting_label(k, settings[k]) for k in keys)]))

    return named(a, b), named(b, a)


BACKENDS = {  # an attention benchmark's backend (bench/kernels.py) or a layer the counting probe
    # builds (probes/counting.py), as a reader names it
    "naive": "naive (scores materialised)",
    "reference": "reference",
    "torch_sdpa": "PyTorch SDPA",
    "torch_sdpa_unmasked": "PyTorch SDPA, no mask",
    "torch_cudnn": "PyTorch cuDNN",
    "torch_mha": "PyTorch MHA",
    "softlookup_mha": "our MHA",
    "triton": "Triton",
    "triton_atomic": "Triton, atomic dQ",
}
DEVICES = {"cpu": "CPU", "cuda": "GPU"}


def backend_label(backend: str) -> str:
    return BACKENDS.get(backend, backend.replace("_", " "))


def device_label(device: str, name: str = "") -> str:
    """'cuda', 'NVIDIA H200' -> 'GPU (NVIDIA H200)'; a name's own parenthesis left out (the
    setup gives it whole): 'AMD EPYC (family 23 model 1, AVX2 kernels)' -> 'CPU (AMD EPYC)'."""
    kind, name = DEVICES.get(device, device), name.split(" (")[0]
    return f"{kind} ({name})" if name and name != kind else kind


PROBE_METHODS = {  # a probe (src/softlookup/probes/<name>.py) as a reader is told what it computes
    "worked_examples": "the essay's arithmetic, recomputed in float64",
    "spread": "dot products of random unit-variance vectors",
    "saturation": "softmax rows of random scores, unscaled and scaled",
    "order": "attention on shuffled inputs, with and without a causal mask",
    "averaging": "stacks of random attention layers, with and without a ReLU or a skip",
    "diagnostics": "rows of random attention, one key doubled",
    "gradients": "gradients through softmax and through a hard arg-max",
    "counting": "parameters of PyTorch's attention layer; cells of the score table",
}


def probe_method(probe: str) -> str:
    """What a probe computes, in words ('' for evidence that is not a probe's)."""
    return PROBE_METHODS.get(probe, "")


CORPORA = {"multi30k": "Multi30k", "europarl": "Europarl", "wmt": "WMT"}  # name prefix -> label
CORPUS_CITATIONS = {"multi30k": "elliott2016,elliott2017", "europarl": "koehn2005"}  # refs.bib


def corpus_label(name: str) -> str:
    """A corpus as a reader knows it: 'europarl-it-en' -> 'Europarl it-en'; unknown names kept."""
    for prefix, label in CORPORA.items():
        if str(name).startswith(prefix):
            rest = str(name)[len(prefix) :].strip("-_")
            return f"{label} {rest}" if rest else label
    return str(name)


def corpus_citation(name: str) -> str:
    """The refs.bib keys of the corpus's own papers ('' for a corpus without an entry)."""
    return next((keys for prefix, keys in CORPUS_CITATIONS.items() if name.startswith(prefix)), "")


SPLITS = {  # a split's name as a reader is told it (the article is the sentence's)
    "train": "training split",
    "valid": "validation split",
    "test_long": "joined long test set",
    "test_europarl": "Europarl test days",
}
DATED_TEST = re.compile(r"test_(\d{4})_(\w+)")  # test_2016_flickr: a corpus's test set of a year


def test_set_label(name: str) -> str:
    """A split or test set as a reader is told it, without its article: 'test_2016_flickr' ->
    '2016 Flickr test set', 'test_long' -> 'joined long test set' (the setup says what it
    joins); any other name with its underscores as spaces."""
    name = str(name)
    dated = DATED_TEST.fullmatch(name)
    if dated:
        return f"{dated[1]} {dated[2].replace('_', ' ').title()} test set"
    return SPLITS.get(name, name.replace("_", " "))


CHECK_ID = re.compile(r"(\w+)\[([^\]]*)\]")  # a check labelled by its quantity and settings


def check_words(label: str) -> str:
    """A check's label a reader can read: 'weight[soft_lookup,q,1]' -> 'weight (soft lookup, q,
    1)', 'attention_params[torch_mha,512]' -> 'attention params (PyTorch MHA, 512)'; any other
    label with its underscores as spaces."""
    found = CHECK_ID.fullmatch(str(label))
    if not found:
        return str(label).replace("_", " ")
    settings = ", ".join(backend_label(part) for part in found[2].split(","))
    return f"{found[1].replace('_', ' ')} ({settings})"


def versus(b: str, a: str) -> str:
    """A paired comparison B - A as a reader reads it: 'GRU, additive vs GRU, no attention'
    (labels hold commas: the two sides are joined by 'vs', never by a comma)."""
    return f"{b} vs {a}"
