"""Facts of the training-budget section: how each D claim's effect and verdict move from this
build's budget to the committed references of longer studies (config/converged.yaml, in parts).

The references are read as they are, from `convergence.references` (folders made by `make
reference`, relative to the checkout: comparisons.csv with its `epoch` column, claims.csv,
training.csv, provenance.json, and scores.csv for claim D1's length curves),
as the GPU rows are read from `bench.measured`; each names the commit and config it came from.
`convergence.effects` says which comparison carries each claim's effect:

    effects: {D3: [{comparison: d3_scaled_vs_unscaled_dk128}], D1: [{comparison: ...,
              bucket: ">60", metric: bleu_share}]}

(bucket defaults to "all", metric to "bleu").
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import yaml

from ... import intervals
from ...config import convergence_references
from ...data.buckets import ALL
from ...tables import FINAL
from ..labels import base_labels, corpus_label, own_parts, pair_labels, variant_label, versus
from ..latex import Tex, escape, tex
from ..study import Reference, Study, per_study, read_reference
from . import claims, tables

PATH_COLUMNS = [
    "claim",
    "comparison",
    "bucket",
    "metric",
    "study",
    "epoch",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "seeds",
]
STUDY = "main study"
# a run still improving by more than this share of its validation loss at its last epoch has
# not converged (issue 22's bar)
STILL_IMPROVING = 0.01


def effect_rows(comparisons: pd.DataFrame, claim: str, effect: dict, study: str) -> pd.DataFrame:
    """The rows of one claim's effect in one study, every budget point (a table from before
    budget points holds its final models only)."""
    bucket, metric = effect.get("bucket", ALL), effect.get("metric", "bleu")
    rows = comparisons[
        (comparisons.comparison == effect["comparison"])
        & (comparisons.bucket == bucket)
        & (comparisons.metric == metric)
    ]
    epoch = rows["epoch"].astype(str) if "epoch" in rows else FINAL
    return rows.assign(claim=claim, study=study, epoch=epoch).reindex(columns=PATH_COLUMNS)


def effect_paths(
    comparisons: pd.DataFrame,
    references: list[Reference],
    effects: dict[str, list[dict]],
    epochs: int | None = None,
) -> pd.DataFrame:
    """Every claim's effect at every budget point of this build and of each reference. With
    `epochs` (this build's epoch cap, which its runs train to: no early stop at 2 epochs), this
    build's final models are its point at that budget; a reference's final models stopped early,
    each at its own epoch, and stay "final"."""
    here = comparisons
    if epochs is not None and "epoch" in here:
        here = here.assign(epoch=here.epoch.astype(str).replace(FINAL, str(epochs)))
    studies = [(STUDY, here), *((ref.name, ref.comparisons) for ref in references)]
    parts = [
        effect_rows(table, claim, effect, study)
        for claim, claim_effects in effects.items()
        for effect in claim_effects
        for study, table in studies
    ]
    return pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=PATH_COLUMNS)


LENGTH_CLAIM = "D1"


def length_curves(study: Study, references: list[Reference]) -> pd.DataFrame:
    """Claim D1's length curves in every study, as Bahdanau et al.'s Figure 2: BLEU per
    source-length bucket of the two systems its effect compares (the fixed vector and
    attention), final models, seeds pooled, on the test set of that comparison (joined captions
    here, natural sentences in a Europarl reference). Columns: study, study_label (as
    figure_names gives it), test_set, variant, label, bucket, value, ci_low, ci_high, seeds."""
    effects = ((study.config.get("convergence") or {}).get("effects") or {}).get(LENGTH_CLAIM)
    labels = variant_labels(study)
    studies = [
        (STUDY, study.comparisons, study.scores),
        *((ref.name, ref.comparisons, ref.scores) for ref in references),
    ]
    named = [effect["comparison"] for effect in effects or []]
    names = figure_names(study, references)
    parts = []
    for name, comparisons, scores in studies:
        pair, rows = pair_bleu(comparisons, scores, named)
        rows = rows[rows.bucket.astype(str) != ALL]
        if rows.empty:
            continue
        curve = tables.pooled(rows, ["variant", "bucket"])
        parts.append(
            curve.assign(
                study=name,
                study_label=names[name],
                test_set=pair.test_set,
                label=[labels.get(v, v) for v in curve.variant],
            )
        )
    columns = [
        "study",
        "study_label",
        "test_set",
        "variant",
        "label",
        "bucket",
        "value",
        "ci_low",
        "ci_high",
        "seeds",
    ]
    return pd.concat(parts, ignore_index=True)[columns] if parts else pd.DataFrame(columns=columns)


class VariantLabels(dict):
    """Variant -> its human label: this build's variants, and a variant only a reference trains
    read from its name ('<base>.<key>-<value>...') and the config's base models."""

    def __init__(self, labels: dict[str, str], bases: dict[str, str]):
        super().__init__(labels)
        self.bases = bases

    def __missing__(self, name: str) -> str:
        base, *points = str(name).split(".")
        if base not in self.bases:
            return str(name)
        sweep = dict(point.split("-", 1) for point in points if "-" in point)
        return variant_label(self.bases[base], {key: yaml.safe_load(v) for key, v in sweep.items()})

    def get(self, name, default=None):
        return self[name]


def variant_labels(study: Study) -> VariantLabels:
    """Variant -> its human label (VariantLabels): this build's, then any a reference names."""
    variants = tables.variants(study)
    labels = dict(zip(variants["variant"], variants["label"], strict=True)) if len(variants) else {}
    return VariantLabels(labels, base_labels(study.config.get("models") or {}))


def pair_bleu(comparisons: pd.DataFrame, scores: pd.DataFrame, names: list[str]):
    """(pair, BLEU rows) of the first comparison of `names` a study ran (its comparisons.csv
    row) and the final models' rows of its two systems on its test set, every bucket; (None, no
    rows) when it ran none."""
    pairs = comparisons[comparisons.comparison.isin(names)] if len(comparisons) else comparisons
    if pairs.empty or scores.empty:
        return None, pd.DataFrame(columns=["variant", "bucket"])
    pair = pairs.iloc[0]
    rows = tables.final(scores)
    return pair, rows[
        (rows.metric == "bleu")
        & (rows.test_set == pair.test_set)
        & rows.variant.isin([pair.system_a, pair.system_b])
    ]


def system_levels(ref: Reference, comparison: str, labels: dict[str, str]) -> dict:
    """The BLEU of the two systems `comparison` pairs in a reference, whole test set, final
    models, seeds pooled: {test_set, systems: [{label, bleu}]}; {} when it was not scored."""
    pair, rows = pair_bleu(ref.comparisons, ref.scores, [comparison])
    rows = rows[rows.bucket.astype(str) == ALL]
    if rows.empty:
        return {}
    bleu = tables.pooled(rows, ["variant"]).set_index("variant").value
    systems = [
        {"label": labels.get(v, v), "bleu": bleu[v]}
        for v in (pair.system_a, pair.system_b)
        if v in bleu
    ]
    return {"test_set": pair.test_set, "systems": systems}


def fixed_budget(config: dict) -> int | None:
    """This build's epoch budget when every run trains to it (early stopping cannot trigger:
    patience >= epochs), else None: its final models then stopped each at its own epoch."""
    train = config.get("train", {})
    epochs, patience = train.get("epochs"), train.get("patience", 0)
    return epochs if epochs is not None and patience >= epochs else None


def point_order(epochs) -> list[str]:
    """Budget points in training order: epochs ascending, then "final"."""
    numbers = sorted({int(e) for e in epochs if str(e) != FINAL})
    return [*map(str, numbers), *([FINAL] if FINAL in set(map(str, epochs)) else [])]


def deciding_verdicts(claim: str, references: list[Reference]) -> list[tuple[str, Reference]]:
    """(verdict, reference) of every reference that decides `claim` (not pending there), in the
    order of `convergence.references`: the converged study on Multi30k and the long-sentence
    study on Europarl both decide D1."""
    decided = []
    for ref in references:
        row = ref.claims[ref.claims.id == claim]
        if len(row) and row.verdict.iloc[0] not in ("pending", ""):
            decided.append((row.verdict.iloc[0], ref))
    return decided


def verdict_table(
    claims: pd.DataFrame, references: list[Reference], ids: list[str]
) -> pd.DataFrame:
    """Per claim and reference deciding it: this build's verdict, the verdict with longer
    training, whether it moved and the reference's reason; one "not run" row for a claim no
    reference decides."""
    rows = []
    for claim in ids:
        here = claims[claims.id == claim]
        verdict = here.verdict.iloc[0] if len(here) else "absent"
        for converged, ref in deciding_verdicts(claim, references) or [("not run", None)]:
            reason = str(ref.claims[ref.claims.id == claim].reason.iloc[0]) if ref else ""
            rows.append(
                {
                    "claim": claim,
                    "verdict": verdict,
                    "converged": converged,
                    "reference": ref.name if ref else "",
                    "reason": reason,
                    "reference_label": ref.label if ref else "",
                    "moved": ref is not None and converged != verdict,
                }
            )
    return pd.DataFrame(rows)


def convergence_of_runs(training: pd.DataFrame) -> pd.DataFrame:
    """Per run of a study's training.csv: epochs trained, best epoch, whether it stopped early
    or hit the cap, and the relative improvement of validation loss at its last epoch."""
    rows = []
    for run, log in training.sort_values("epoch").groupby("run"):
        losses = log.val_loss.tolist()
        last_gain = (losses[-2] - losses[-1]) / losses[-2] if len(losses) > 1 else float("nan")
        cap = int(log.epochs.iloc[0]) if "epochs" in log else len(losses)
        rows.append(
            {
                "run": run,
                "variant": log.variant.iloc[0],
                "epochs_trained": len(losses),
                "best_epoch": int(log.epoch.iloc[log.val_loss.argmin()]),
                "cap": cap,
                "hit_cap": len(losses) >= cap,
                "last_gain": last_gain,
                "still_improving": bool(last_gain > STILL_IMPROVING),
            }
        )
    return pd.DataFrame(rows)


def study_paths(study: Study, references: list[Reference]) -> pd.DataFrame:
    """Every D effect of `convergence.effects` per study and budget point, in reading order."""
    effects = (study.config.get("convergence") or {}).get("effects") or {}
    here = study.comparisons if len(study.comparisons) else pd.DataFrame(columns=PATH_COLUMNS)
    paths = effect_paths(here, references, effects, epochs=fixed_budget(study.config))
    order = point_order(paths.epoch) if len(paths) else []
    return paths.assign(order=paths.epoch.map(order.index)).sort_values(
        ["claim", "comparison", "study", "order"]
    )


@per_study
def committed_references(study: Study) -> list[Reference]:
    return [read_reference(folder) for folder in convergence_references(study.config)]


def paths_appendix(study: Study) -> dict:
    """The appendix's table: every D effect with its interval, per study (this build, or a
    reference by its label) and budget point."""
    references = committed_references(study)
    where = {STUDY: STUDY, **{ref.name: ref.label for ref in references}}
    return {
        "enabled": bool(study.config.get("convergence")),
        "paths": [
            {
                **row,
                "what": comparison_label(study, row["comparison"]),
                "where": where.get(row["study"], row["study"]),
            }
            for row in study_paths(study, references).to_dict("records")
        ],
    }


def legend_paths(study: Study) -> pd.DataFrame:
    """study_paths with each line's legend entry (`series`): the comparison as short_label gives
    it (`pair`) and the build or reference as a reader names it (a bucket is the panel's to
    name)."""
    references = committed_references(study)
    paths = study_paths(study, references)
    where = figure_names(study, references)
    what = {name: short_label(study, name) for name in paths.comparison.unique()}
    return paths.assign(
        pair=paths.comparison.map(what),
        series=[
            f"{what[c]} ({where.get(s, s)})"
            for c, s in zip(paths.comparison, paths.study, strict=True)
        ],
    )


def figure_names(study: Study, references: list[Reference]) -> dict[str, str]:
    """Study name -> how a figure names it: this build, and each reference by its short label
    (plain text: an en dash, not LaTeX's '--')."""
    corpus = corpus_label((study.config.get("data") or {}).get("corpus", ""))
    return {
        STUDY: STUDY,
        **{ref.name: ref.short_label(corpus).replace("--", "\u2013") for ref in references},
    }


def short_label(study: Study, name: str) -> str:
    """A configured comparison in a legend's few words: what each side adds to what the two
    share, and any setting both share beyond their base model ('8 heads vs 1 head', 'base model
    vs unscaled at $d_k = 128$', 'additive vs no attention')."""
    pair = (study.config.get("comparisons") or {}).get(name) or {}
    if not pair:
        return name.replace("_", " ")
    labels = variant_labels(study)
    a, b = map(str, pair_labels(labels, study.config.get("models") or {}, pair["a"], pair["b"]))
    shared, own = own_parts([b, a])
    base = max(
        (str(label) for label in labels.bases.values() if shared.startswith(str(label))),
        key=len,
        default=shared,  # the two sides differ in their base model: nothing shared beyond it
    )
    extra = shared[len(base) :].lstrip(", ")
    return versus(own[b], own[a]) + (f" at {extra}" if extra else "")


def comparison_label(study: Study, name: str) -> Tex:
    """A configured comparison as a reader reads it, in LaTeX: 'GRU, additive vs GRU, no
    attention' (a label's math, '$d_k = 128$', typeset as math, not printed as text)."""
    pair = (study.config.get("comparisons") or {}).get(name) or {}
    if not pair:
        return escape(name.replace("_", " "))
    a, b = pair_labels(
        variant_labels(study), study.config.get("models") or {}, pair["a"], pair["b"]
    )
    return Tex(versus(tex(b), tex(a)))


@per_study
def section(study: Study) -> dict:
    """The training-budget section: this build's budget, each committed reference (its commit,
    config, runs that hit their cap or were still improving), whether any D effect was drawn,
    and the verdict at this budget against the verdict at convergence."""
    config = study.config.get("convergence") or {}
    effects = config.get("effects") or {}
    references = committed_references(study)
    epochs = fixed_budget(study.config)
    paths = study_paths(study, references)
    found = claims.claims(study)
    verdicts = (
        verdict_table(study.claims, references, list(effects))
        if len(study.claims)
        else (pd.DataFrame(columns=["claim"]))
    )
    by_name = {ref.name: ref for ref in references}
    labels = variant_labels(study)
    rows = []
    for row in verdicts.to_dict("records"):
        effect = effects[row["claim"]][0]  # the claim's first effect: its metric and systems
        ref = by_name.get(row["reference"])
        rows.append(
            {
                **row,
                "short": found[row["claim"]].short if row["claim"] in found else "",
                **check_counts(ref, row["claim"]),
                "metric": effect.get("metric", "bleu"),
                "levels": system_levels(ref, effect["comparison"], labels) if ref else {},
            }
        )
    facts = [reference_facts(ref) for ref in references]
    corpus = {ref["name"]: corpus_label(ref["corpus"]) for ref in facts}
    for row in rows:
        row["corpus"] = corpus.get(row["reference"], "")
    for claim in {row["claim"] for row in rows}:  # where: the corpus, or the reference if shared
        own = [row for row in rows if row["claim"] == claim]
        shared = len({row["corpus"] for row in own}) < len(own)
        for row in own:
            row["where"] = row["reference_label"] if shared else row["corpus"]
    return {
        "enabled": bool(config),
        "budget": epochs or study.config.get("train", {}).get("epochs"),
        "references": facts,
        "caps": cap_summary(facts),
        "by_claim": {
            claim: [row for row in rows if row["claim"] == claim]
            for claim in dict.fromkeys(row["claim"] for row in rows)
        },
        "paths": bool(len(paths)),
        "seed_parts": seed_parts(study, references),
        "verdicts": rows,
        "moved": [row for row in rows if row["moved"]],
        **fates(rows),
        "improving_bar": STILL_IMPROVING,
    }


def check_counts(ref, claim: str) -> dict[str, int | None]:
    """How many of a claim's decisive checks pass in a reference (None: not recorded)."""
    row = ref.claims[ref.claims.id == claim] if ref else pd.DataFrame()
    if row.empty or not {"checks_passed", "checks_decisive"} <= set(row.columns):
        return {"passed": None, "decisive": None}
    return {
        name: int(pd.to_numeric(row[f"checks_{name}"].iloc[0])) for name in ("passed", "decisive")
    }


def cap_summary(references: list[dict]) -> dict:
    """What "trained to convergence" meant across the references: their runs, how many hit the
    epoch cap, and the caps ({runs: 0} without references)."""
    return {
        "runs": sum(ref["runs"] for ref in references),
        "hit_cap": sum(ref["hit_cap"] for ref in references),
        "caps": sorted({ref["cap"] for ref in references if ref["cap"] is not None}),
    }


def fates(rows: list[dict]) -> dict[str, list[str]]:
    """The claims of verdict-table rows by what longer training did: moved (in any reference
    deciding them), held (in every one) and not_run (no reference decides them)."""
    moved = list(dict.fromkeys(row["claim"] for row in rows if row["moved"]))
    held = [
        row["claim"]
        for row in rows
        if row["converged"] == row["verdict"] and row["claim"] not in moved
    ]
    return {
        "moved_claims": moved,
        "held": list(dict.fromkeys(held)),
        "not_run": [row["claim"] for row in rows if row["converged"] == "not run"],
    }


def reference_facts(ref: Reference) -> dict:
    runs = convergence_of_runs(ref.training)
    train = ref.provenance.get("config", {}).get("train", {})
    return {
        "cap": train.get("epochs"),
        "patience": train.get("patience"),
        "ladder": [str(point) for point in train.get("ladder") or [FINAL]],
        "name": ref.name,
        "label": ref.label,
        "config": ref.config_name,
        "commit": ref.commit,
        "runs": len(runs),
        "judged_by": interval_rule(ref.comparisons),
        "corpus": ref.provenance.get("config", {}).get("data", {}).get("corpus", ""),
        "variants": runs.variant.nunique() if len(runs) else 0,
        "hit_cap": int(runs.hit_cap.sum()) if len(runs) else 0,
        "still_improving": sorted(runs[runs.still_improving].run) if len(runs) else [],
        "epochs": (int(runs.epochs_trained.min()), int(runs.epochs_trained.max()))
        if len(runs)
        else None,
    }


def interval_rule(comparisons: pd.DataFrame) -> str:
    """The rule a reference's intervals were made by, told by the columns it wrote: "own seeds"
    (each comparison's own seeds, Section 3; it writes each system's interval, ci_low_a),
    "pooled" (a seed variance pooled over the variants of a family: se_seed alone) or
    "bootstrap" (over seeds and sentences, before either)."""
    if "ci_low_a" in comparisons.columns:
        return "own seeds"
    return "pooled" if "se_seed" in comparisons.columns else "bootstrap"


def seeds_together(parts: list[Reference], comparison: str) -> dict | None:
    """One comparison (whole test set, BLEU, final models) over every seed of a study trained in
    parts: the mean of the parts' per-seed differences B - A, its standard error from their
    spread (t on seeds - 1 df) and the common sentence part (the largest `se_sentence` of the
    parts: the test sentences are the same), Welch-Satterthwaite df; and each part's own row.
    None when a part lacks the comparison. Two parts sharing a seed are an error naming both."""
    deltas, own = {}, []
    for ref in parts:
        rows = ref.comparisons
        rows = rows[
            (rows.comparison == comparison)
            & (rows.bucket.astype(str) == ALL)
            & (rows.metric == "bleu")
            & (rows.epoch.astype(str) == FINAL)
        ]
        if rows.empty:
            return None
        row = rows.iloc[0]
        seeds = {int(seed): float(delta) for seed, delta in json.loads(row.seed_deltas).items()}
        shared = set(seeds) & set(deltas)
        if shared:
            raise ValueError(f"convergence.seed_parts: {ref.name} repeats seeds {sorted(shared)}")
        deltas.update(seeds)
        sentence = float(row.get("se_sentence", math.nan))
        own.append(
            {
                "label": ref.label,
                "seeds": sorted(seeds),
                "delta": float(row.delta),
                "ci_low": float(row.ci_low),
                "ci_high": float(row.ci_high),
                "se_sentence": sentence,
            }
        )
    values = pd.Series(deltas, dtype=float)
    seed_variance = values.var(ddof=1) / len(values)
    sentence = max(
        (part["se_sentence"] for part in own if math.isfinite(part["se_sentence"])), default=0.0
    )
    df = intervals.calibrated_df([(seed_variance, len(values) - 1)], sentence**2)
    se = math.sqrt(seed_variance + sentence**2)
    low, high = intervals.interval(values.mean(), se, df)
    return {
        "seeds": len(values),
        "delta": values.mean(),
        "ci_low": low,
        "ci_high": high,
        "df": df,
        "parts": own,
    }


def seed_parts(study: Study, references: list[Reference]) -> list[dict]:
    """Per claim of `convergence.effects` whose study `convergence.seed_parts` names in parts:
    its effects over all the parts' seeds (seeds_together), labelled for a reader (every part is
    among the references: config.convergence_references checks it)."""
    config = study.config.get("convergence") or {}
    by_folder = {ref.name: ref for ref in references}
    found = []
    for group in config.get("seed_parts") or []:
        parts = [by_folder[Path(folder).name] for folder in group]
        for claim, effects in (config.get("effects") or {}).items():
            for effect in effects:
                together = seeds_together(parts, effect["comparison"])
                if together:
                    found.append(
                        {
                            "claim": claim,
                            "what": comparison_label(study, effect["comparison"]),
                            **together,
                        }
                    )
    return found
