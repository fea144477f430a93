"""The claims ledger: spec (config/claims.yaml, validated by workflow/schemas/claims.schema.yaml),
checks (one measured number or paired comparison each), verdicts, ledger (claims.csv, checks.csv).
"""
