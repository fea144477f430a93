"""Where the tests find the corpus mirror: $SOFTLOOKUP_MIRROR, else ../shared/corpora."""

import os
from pathlib import Path

from softlookup.data.bpe import train_bpe
from softlookup.data.prepare import prepare

ROOT = Path(__file__).resolve().parents[1]
# what a workflow run reads from the repository (benchmarks/: the committed bench.measured CSVs)
PROJECT_PARTS = ["Snakefile", "workflow", "config", "paper", "profiles", "benchmarks"]


def mirror() -> Path:
    path = Path(os.environ.get("SOFTLOOKUP_MIRROR") or ROOT.parent / "shared" / "corpora")
    if not (path / "multi30k").is_dir():
        raise FileNotFoundError(
            f"corpus mirror not found at {path}: set SOFTLOOKUP_MIRROR to a directory holding "
            "multi30k/ (as ../shared/corpora does)"
        )
    return path


def tiny_corpus(data_dir: Path, splits: dict[str, str]) -> tuple[Path, Path]:
    """80 training pairs (plus the given other splits) and a 200-piece BPE model in `data_dir`."""
    prepare(
        mirror() / "multi30k",
        data_dir,
        src="de",
        tgt="en",
        splits=splits,
        max_train_pairs=80,
        concat=[],
    )
    spm = train_bpe([data_dir / "train.de", data_dir / "train.en"], data_dir / "spm", 200)
    return data_dir, spm
