"""The columns of the evaluate stage's tidy tables, and the values their cells can take: what
evaluate/ writes and claims/, reference/ and report/ read, in one place below them all.

- results/tables/scores.csv (`SCORES_COLUMNS`, written by evaluate/collect.py; a run's own
  scores.<test set>.csv has `SCORE_FIELDS`, evaluate/score.py);
- results/tables/comparisons.csv (`COMPARISON_COLUMNS`) and results/tables/seed_variance.csv
  (`SEED_VARIANCE_COLUMNS`), written by evaluate/compare.py;
- `FINAL`, the `epoch` of the final models' rows (`final_point` keeps them), and `RANGES`, the
  values each metric can take.
"""

from __future__ import annotations

import math

# results/tables/scores.csv: one row per run x test set x bucket x metric; every setting a column
SETTING_COLUMNS = [
    "run",
    "variant",
    "base_model",
    "arch",
    "attention",
    "d_model",
    "heads",
    "d_k",
    "scale",
    "causal_mask",
    "padding_mask",
    "max_train_words",
    "epochs",
    "seed",
    "parameters",
    "status",
]
# one run's scores.<test_set>.csv (the run's columns are added by collect)
SCORE_FIELDS = [
    "test_set",
    "bucket",
    "metric",
    "value",
    "ci_low",
    "ci_high",
    "n_sentences",
    "signature",
]
# epoch: the training-budget point the scores belong to ("final": the run's model; "k": its
# weights after k epochs, see softlookup.train); readers of final results take epoch == FINAL
SCORES_COLUMNS = [
    *SETTING_COLUMNS,
    "epoch",
    *SCORE_FIELDS,
    "device",
    "train_seconds",
    "tokens_per_s",
]
FINAL = "final"


def final_point(table):
    """The rows of a scores or comparisons table that belong to the final models (a table from
    before budget points, without an `epoch` column, holds only those)."""
    if "epoch" not in table.columns:
        return table
    return table[table["epoch"].astype(str) == FINAL].reset_index(drop=True)


# results/tables/comparisons.csv: one row per comparison x test set x budget point x bucket x
# metric (evaluate.compare's docstring says what each column holds)
COMPARISON_COLUMNS = [
    "comparison",
    "system_a",
    "system_b",
    "test_set",
    "epoch",
    "bucket",
    "metric",
    "mean_a",
    "mean_b",
    "delta",
    "ci_low",
    "ci_high",
    "p_value",
    "se",
    "se_seed",
    "se_sentence",
    "df",
    "seed_df",
    "se_a",
    "df_a",
    "ci_low_a",
    "ci_high_a",
    "se_b",
    "df_b",
    "ci_low_b",
    "ci_high_b",
    "seed_deltas",
    "seeds",
    "n_sentences",
    "family",
    "method",
]

# results/tables/seed_variance.csv: each compared variant's seeds and seed SD per family and cell
SEED_VARIANCE_COLUMNS = [
    "family",
    "variant",
    "test_set",
    "epoch",
    "bucket",
    "metric",
    "seeds",
    "seed_sd",
]

# The values each metric can take: a system's interval is cut to it, a difference's to +-its width.
RANGES = {
    "bleu": (0.0, 100.0),
    "chrf": (0.0, 100.0),
    "length_ratio": (0.0, math.inf),
    "empty_share": (0.0, 1.0),
    "bleu_share": (0.0, math.inf),
}
