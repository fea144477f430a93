"""Cut the test fixture corpus (tests/data/corpora/multi30k/) from a full Multi30k mirror.

    python tests/data/corpora/cut_multi30k.py ../shared/corpora

Takes the first lines of each file named in CUT (both languages, so the pairs stay aligned) and
writes them gzipped with no name or time in the header, so the same mirror gives the same bytes;
then SHA256SUMS. The mirror's files are the released ones (their sha256 is in
src/softlookup/data/corpora.yaml); the cut files are not, and the tests that need the released
files read the mirror itself (tests/corpora.py: `mirror`).
"""

import argparse
import gzip
import hashlib
from pathlib import Path

OUT = Path(__file__).resolve().parent / "multi30k"
LANGUAGES = ("de", "en")
CUT = {"train": 300, "val": 100, "test_2016_flickr": 100}  # file stem -> first lines kept


def cut(source: Path, target: Path, lines: int) -> None:
    """The first `lines` lines of gzipped `source`, gzipped into `target` reproducibly."""
    with gzip.open(source, "rt", encoding="utf-8") as stream:
        kept = [next(stream) for _ in range(lines)]
    with open(target, "wb") as raw, gzip.GzipFile("", "wb", fileobj=raw, mtime=0) as out:
        out.write("".join(kept).encode("utf-8"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("mirror", type=Path, help="a directory holding multi30k/<file>.gz")
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    sums = []
    for stem, lines in CUT.items():
        for lang in LANGUAGES:
            name = f"{stem}.{lang}.gz"
            cut(args.mirror / "multi30k" / name, OUT / name, lines)
            sums.append(f"{hashlib.sha256((OUT / name).read_bytes()).hexdigest()}  {name}\n")
    (OUT / "SHA256SUMS").write_text("".join(sums))


if __name__ == "__main__":
    main()
