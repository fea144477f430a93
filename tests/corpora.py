"""Where the tests find the corpus mirror: $SOFTLOOKUP_MIRROR, else ../shared/corpora."""

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def mirror() -> Path:
    path = Path(os.environ.get("SOFTLOOKUP_MIRROR") or ROOT.parent / "shared" / "corpora")
    if not (path / "multi30k").is_dir():
        raise FileNotFoundError(
            f"corpus mirror not found at {path}: set SOFTLOOKUP_MIRROR to a directory holding "
            "multi30k/ (as ../shared/corpora does)"
        )
    return path
