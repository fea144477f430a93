"""Probes: small measurements of the exact, statistical and counting claims, plus the claims ledger.

One module per claim family, each a command-line entry writing a tidy CSV
(`python -m softlookup.probes.<name> --out results/probes/<name>.csv`):
worked_examples (A1-A8), spread (B1), saturation (B2), order (B3), averaging (B4),
diagnostics (B5), counting (C1-C3). `plots` draws the figures; `ledger` turns the probe CSVs,
the scores table and the benchmark CSVs into verdicts for every claim in config/claims.yaml.
"""

PROBES = (
    "worked_examples",
    "spread",
    "saturation",
    "order",
    "averaging",
    "diagnostics",
    "counting",
)
