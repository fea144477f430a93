"""Where the tests find their corpora: the committed fixture corpus (tests/data/corpora, cut from
Multi30k) for unit tests, and the full mirror for tests of the released files and of the
workflow: $SOFTLOOKUP_MIRROR (made absolute when the session starts, conftest.py), else
../shared/corpora. A test that reaches `mirror` is in the slow tier (conftest.py)."""

import os
from pathlib import Path

from softlookup.data.bpe import train_bpe
from softlookup.data.prepare import prepare
from softlookup.data.sources import MIRROR_ENV

from .project import ROOT

FIXTURE_CORPORA = Path(__file__).resolve().parent / "data" / "corpora"
DEFAULT_MIRROR = ROOT.parent / "shared" / "corpora"


def fixture_corpus() -> Path:
    """The fixture Multi30k (the first lines of train, val and test_2016_flickr; README.md)."""
    return FIXTURE_CORPORA / "multi30k"


def mirror() -> Path:
    path = Path(os.environ.get(MIRROR_ENV) or DEFAULT_MIRROR)
    if not (path / "multi30k").is_dir():
        raise FileNotFoundError(
            f"corpus mirror not found at {path}: set {MIRROR_ENV} to a directory holding "
            "multi30k/ (as ../shared/corpora does; a relative one means the directory pytest "
            "was started in)"
        )
    return path


def tiny_corpus(data_dir: Path, splits: dict[str, str]) -> tuple[Path, Path]:
    """80 training pairs (plus the given other splits) of the fixture corpus and a 200-piece BPE
    model in `data_dir`."""
    prepare(
        fixture_corpus(),
        data_dir,
        src="de",
        tgt="en",
        splits=splits,
        max_train_pairs=80,
        concat=[],
    )
    spm = train_bpe([data_dir / "train.de", data_dir / "train.en"], data_dir / "spm", 200)
    return data_dir, spm
