"""What re-judging a reference needs, kept beside it in one archive (hypotheses.tar.gz).

A reference keeps corpus scores; a change of the statistics (the paired comparisons, the ledger's
checks) needs what they are computed from. `evidence(results, ...)` names it, paths relative to
results/:
- every run's settings and training record: runs/<run>/config.json, meta.json, log.csv;
- its translations of every test set at every budget point scores.csv scores (its BLEU rows;
  the pseudo test set "train" holds the training record)
  (runs/<run>/hyp.<test set>.<tgt>, runs/<run>/ladder/hyp.e<k>.<test set>.<tgt>);
- the test sets' sources and references and the corpus manifest (data/<corpus>-<src>-<tgt>/);
- the measurements no hypothesis gives: probes/, bench/ and analysis/ CSVs (the analysis reads
  trained weights, the benchmarks this host's timings: re-judging reads them as they were).
`pack` writes them as a deterministic gzipped tar (sorted members, fixed times and owners, gzip
-9 without a name or time in its header): an unchanged build gives a byte-identical archive.
`unpack` restores them under a results/ folder.
"""

from __future__ import annotations

import gzip
import io
import tarfile
from pathlib import Path

import pandas as pd

from ..evaluate.compare import hypotheses_file

ARCHIVE = "hypotheses.tar.gz"
RUN_FILES = ("config.json", "meta.json", "log.csv")
MEASUREMENTS = ("probes", "bench", "analysis")
# every member's time (2000-01-01 UTC): any fixed value keeps the archive byte-identical
MEMBER_MTIME = 946684800


def evidence(results: Path, scores: Path, manifest: Path, src: str, tgt: str) -> list[Path]:
    """The files under `results` that re-judging the build of `scores` needs (relative paths,
    sorted); some may be missing: the caller checks."""
    table = pd.read_csv(scores, dtype={"epoch": str})
    cells = table.loc[table.metric == "bleu", ["run", "test_set", "epoch"]].drop_duplicates()
    files = {Path("runs") / run / name for run in cells.run.unique() for name in RUN_FILES}
    files |= {
        hypotheses_file(Path("runs") / run, test_set, tgt, epoch)
        for run, test_set, epoch in cells.itertuples(index=False)
    }
    data = manifest.parent.relative_to(results)
    files.add(data / manifest.name)
    files |= {data / f"{test_set}.{lang}" for test_set in cells.test_set for lang in (src, tgt)}
    files |= {
        path.relative_to(results)
        for kind in MEASUREMENTS
        for path in (results / kind).glob("*.csv")
    }
    return sorted(files)


def pack(results: Path, members: list[Path], out: Path) -> None:
    """`members` (relative to `results`) into the gzipped tar `out`, byte for byte the same for
    the same files."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for member in sorted(members):
            data = (results / member).read_bytes()
            info = tarfile.TarInfo(member.as_posix())
            info.size, info.mtime, info.mode = len(data), MEMBER_MTIME, 0o644
            tar.addfile(info, io.BytesIO(data))
    with (
        open(out, "wb") as raw,
        gzip.GzipFile(filename="", fileobj=raw, mode="wb", compresslevel=9, mtime=0) as zipped,
    ):
        zipped.write(buffer.getvalue())


def unpack(archive: Path, results: Path) -> list[Path]:
    """Restore `archive` under `results`; returns the files written (relative paths). Members
    that would land outside `results` (absolute, `..`) are refused by tarfile's data filter."""
    results.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, mode="r:gz") as tar:
        names = [Path(member.name) for member in tar.getmembers() if member.isfile()]
        tar.extractall(results, filter="data")
    return names
