"""The quantities the paper prints in more than one place (the abstract, a section, a table, the
discussion), each read once: from the ledger's check that measures it, so every place prints
the same number and interval, in the check's own format. A template prints one with the
`measured` macro of _wording.tex, which tags it (`\\Quantity{D7.3}{...}`) for the test that a
quantity never reads two ways (tests/test_paper.py)."""

from __future__ import annotations

from .claims import Check, Claims

# name -> (claim, the start of its check's label in config/claims.yaml)
QUANTITIES = {
    "collapse_attention": ("B4", "token-uniformity residual, attention-only"),
    "collapse_relu": ("B4", "residual, attention + ReLU"),
    "collapse_skip": ("B4", "residual, attention with skip connection"),
    "additive_share": ("D1", "additive attention: share of its shortest-bucket BLEU"),
    "fixed_share": ("D1", "fixed vector: share of its shortest-bucket BLEU"),
    "dot_vs_additive": ("D2", "dot vs additive (BLEU)"),
    "scaling_slope": ("D3", "scaled minus unscaled BLEU, slope"),
    "copying_weight": ("D4", "unmasked decoder: weight on the next position"),
    "unmasked_bleu": ("D4", "unmasked model's BLEU"),
    "heads_gain": ("D5", "8 heads vs 1 head"),
    "train_step_ratio": ("D6", "training-step time at the longest length"),
    "cache_ratio_slope": ("D7", "recompute / cache step time against the prefix"),
    "cache_slope": (
        "D7",
        "last step's time against the prefix (log-log slope, 95% interval), cache",
    ),
    "recompute_slope": (
        "D7",
        "last step's time against the prefix (log-log slope, 95% interval), recompute",
    ),
    "cache_speedup": ("D7", "recompute / cache time at 100 new tokens, CPU"),
    "cache_speedup_largest": ("D7", "recompute / cache time (largest over settings)"),
    "kernel_error": ("D8", "largest error of our kernel"),
    "kernel_vs_materialised": ("D8", "materialised / our kernel time (mean"),
    "kernel_vs_library": ("D8", "fastest library kernel"),
}


def quantities(found: Claims) -> dict[str, Check | None]:
    """{name: the check measuring it}, None where the ledger has no such check (or it is
    pending)."""
    picked = {}
    for name, (claim_id, label) in QUANTITIES.items():
        check = next((c for c in found[claim_id].checks if c.label.startswith(label)), None)
        usable = check is not None and check.status != "pending" and check.value is not None
        picked[name] = check if usable else None
    return picked
