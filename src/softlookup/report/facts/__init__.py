"""Facts: what the paper says, computed from one study (report.study) and nothing else.

This layer is the only reader of the tidy tables for the prose and the figures: each section
template of paper/sections/<name>.tex gets the dict that SECTIONS[<name>] returns, and every
template also sees the shared facts of `common` (the claims, the main test set, the figures
drawn). Facts are numbers, rows and booleans; the templates word them, and choose which
sentence a verdict or a measurement gets. A new section is a template plus a function here.
"""

from __future__ import annotations

from ..study import Study
from . import (
    back,
    claims,
    convergence,
    cost,
    essays,
    front,
    pooling,
    quantities,
    results,
    tables,
    thresholds,
    training,
)

# the confidence level of every interval: sacrebleu's bootstrap (evaluate/score.py) and the
# paired bootstrap's 2.5-97.5 percentiles (evaluate/compare.py)
INTERVAL_LEVEL = 95
FIGURE_RULES = {  # figure file stem -> the rule that draws it (sweep_*: figure_scores)
    "bleu_by_length": "figure_scores",
    "training": "figure_training",
    "cost": "figure_cost",
    "alignment": "figure_alignment",
    "convergence": "figure_convergence",
    "length_curves": "figure_length_curves",
    "probes": "probe_figures",
    "seed_variance": "figure_seed_variance",
}

SECTIONS = {
    "abstract": front.abstract,
    "essays": essays.section,
    "setup": front.setup,
    "results": results.overview,
    "length": results.length,
    "scores": results.score_functions,
    "scaling": results.scaling,
    "heads": results.heads,
    "masking": results.masking,
    "sweeps": results.other_sweeps,
    "training": training.training,
    "convergence": convergence.section,
    "convergence_details": convergence.section,
    "cost": cost.cost,
    "attention": results.attention,
    "crossattention": results.attention,
    "probes": back.probes,
    "discussion": back.discussion,
    "claims": back.ledger,
    "ledger": back.ledger,
    "threats": back.threats,
    "comparisons": back.comparisons,
    "pooling": pooling.section,
    "budget": training.budget,
    "paths": convergence.paths_appendix,
    "checks": back.checks,
    "thresholds": thresholds.section,
    "reproducibility": back.reproducibility,
    "sources": back.sources,
    "macros": back.macros,
}


def common(study: Study, figures: list[str], configfiles: list[str]) -> dict:
    """The facts every template sees."""
    found = claims.claims(study)
    return {
        "claims": found,
        "quantities": quantities.quantities(found),
        "test_set": tables.main_test_set(study),
        "level": INTERVAL_LEVEL,
        "figures": {stem: FIGURE_RULES.get(stem, "figure_scores") for stem in figures},
        "configfiles": configfiles,
    }
