"""Where the project's own files sit: the one module that knows the checkout's layout.

The package is installed from the checkout (`pip install -e .`), so the checkout is two folders
above this file; the workflow's schemas, the configs and the paper's templates are found from it.
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]  # the checkout: src/softlookup/paths.py -> .
CONFIG_DIR = ROOT / "config"
CLAIMS_FILE = CONFIG_DIR / "claims.yaml"
THRESHOLD_HISTORY = CONFIG_DIR / "threshold_history.csv"  # reference.thresholds, from git
SCHEMAS = ROOT / "workflow" / "schemas"
CONFIG_SCHEMA = SCHEMAS / "config.schema.yaml"
CLAIMS_SCHEMA = SCHEMAS / "claims.schema.yaml"
TEMPLATES = ROOT / "paper" / "sections"
PAPER_MAIN = ROOT / "paper" / "paper.tex"  # inputs the rendered sections, in order
PUBLISHED = ROOT / "paper" / "published.yaml"  # what each claim's source published, for the paper
