"""Evaluate one check of the claims file against the evidence the ledger was given.

One module per kind of check, as spec.py's dataclasses: probe and bench (NumericCheck),
comparison (ComparisonCheck), run (RunCheck), training (TrainingCheck), analysis
(AnalysisCheck); common holds the evidence files, the Outcome record and its status and reason
codes (common.REASONS documents each). Nothing missing is ever guessed, and nothing is read that
the ledger was not given explicitly: every file a verdict reads is a declared input of its rule.
"""

from __future__ import annotations

from dataclasses import replace

from ..spec import AnalysisCheck, Check, ComparisonCheck, RunCheck, TrainingCheck
from .analysis import evaluate_analysis
from .bench import crossing, evaluate_bench
from .common import (
    ALPHA,
    REASONS,
    STATUSES,
    Evidence,
    Outcome,
    Test,
    allowed_deviation,
)
from .comparison import decide, evaluate_comparison, null_p
from .probe import evaluate_probe
from .run import evaluate_run_value
from .training import evaluate_training

__all__ = [
    "ALPHA",
    "REASONS",
    "STATUSES",
    "Evidence",
    "Outcome",
    "Test",
    "allowed_deviation",
    "crossing",
    "decide",
    "evaluate",
    "null_p",
]


def evaluate(check: Check, evidence: Evidence) -> Outcome:
    if isinstance(check, ComparisonCheck):
        outcome = evaluate_comparison(check, evidence)
    elif isinstance(check, RunCheck):
        outcome = evaluate_run_value(check, evidence)
    elif isinstance(check, TrainingCheck):
        outcome = evaluate_training(check, evidence)
    elif isinstance(check, AnalysisCheck):
        outcome = evaluate_analysis(check, evidence)
    elif check.kind == "probe":
        outcome = evaluate_probe(check, evidence)
    else:
        outcome = evaluate_bench(check, evidence)
    if check.op == "report" and outcome.status == "pending":  # a missing aside stays an aside
        return replace(outcome, status="report")
    return outcome
