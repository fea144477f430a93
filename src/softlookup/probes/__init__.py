"""Probes: small measurements of the exact, statistical and counting claims (A1-C3).

One module per claim family, each measuring into a tidy CSV through the one command line
(`python -m softlookup.probes <name> --out results/probes/<name>.csv`, probes/cli.py):
worked_examples (A1-A9), spread (B1), saturation (B2), order (B3, B6), averaging (B4),
diagnostics (B5), gradients (B7), counting (C1-C3). The claims ledger (softlookup.claims) judges
them; the report draws their figures.
"""

PROBES = (
    "worked_examples",
    "spread",
    "saturation",
    "order",
    "averaging",
    "diagnostics",
    "gradients",
    "counting",
)
