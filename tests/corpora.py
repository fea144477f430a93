"""Where the tests find the corpus mirror: $SOFTLOOKUP_MIRROR (made absolute when the session
starts, conftest.py), else ../shared/corpora."""

import os
from pathlib import Path

from softlookup.data.bpe import train_bpe
from softlookup.data.prepare import prepare
from softlookup.data.sources import MIRROR_ENV

from .project import ROOT


def mirror() -> Path:
    path = Path(os.environ.get(MIRROR_ENV) or ROOT.parent / "shared" / "corpora")
    if not (path / "multi30k").is_dir():
        raise FileNotFoundError(
            f"corpus mirror not found at {path}: set {MIRROR_ENV} to a directory holding "
            "multi30k/ (as ../shared/corpora does; a relative one means the directory pytest "
            "was started in)"
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
