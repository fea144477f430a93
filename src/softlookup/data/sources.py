"""Fetch a corpus file from a local mirror or its upstream URL, and verify its sha256.

As a command (rule fetch_corpus_file) an expected failure (a damaged file, a file the mirror
lacks, no network, a corpus or file the registry does not know) is one line in the job's log,
`fetch <corpus>/<file>: <what and what to do>`, and exit status 1; anything else is a bug and
keeps its traceback.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import sys
import urllib.error
import urllib.request
from importlib import resources
from pathlib import Path

import yaml

from ..atomic import atomic_file

MIRROR_ENV = "SOFTLOOKUP_MIRROR"


class ChecksumError(RuntimeError):
    pass


# what a user can meet and fix: the message says which file and what to do
EXPECTED_ERRORS = (ChecksumError, ConnectionError, FileNotFoundError, LookupError)


def registry() -> dict:
    """The corpora this project knows: {corpus: {"url": template, "files": {name: sha256}}}."""
    return yaml.safe_load(resources.files(__package__).joinpath("corpora.yaml").read_text())


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def resolve_mirror(configured: str | None, base: Path | None = None) -> Path | None:
    """The mirror directory, absolute: $SOFTLOOKUP_MIRROR if set, else the config's `mirror`, else
    None. A relative one means the directory it was given in, `base` (where make, snakemake or
    pytest was started; by default the current directory), and is joined to it as written:
    /work/x/../shared/corpora names the value given and where, and is the same place from any
    working directory."""
    chosen = os.environ.get(MIRROR_ENV) or configured
    return Path(base or Path.cwd(), Path(chosen).expanduser()) if chosen else None


def export_mirror(configured: str | None, base: Path | None = None) -> Path | None:
    """resolve_mirror(configured, base), resolved once and handed on: it is $SOFTLOOKUP_MIRROR
    for every process started from here on (Snakemake's jobs, a test's Snakemake in a temporary
    directory), whatever their working directory."""
    mirror = resolve_mirror(configured, base)
    if mirror:
        os.environ[MIRROR_ENV] = str(mirror)
    return mirror


def fetch(corpus: str, name: str, dest: Path, mirror: Path | None = None) -> Path:
    """Copy <mirror>/<corpus>/<name> (or download it) to `dest`, only if its sha256 matches."""
    known = registry()
    if corpus not in known:
        raise LookupError(f"unknown corpus {corpus!r}; known: {sorted(known)}")
    files = known[corpus]["files"]
    if name not in files:
        raise LookupError(f"corpus {corpus!r} has no file {name!r}; known: {sorted(files)}")
    url = known[corpus].get("url")
    if not mirror and not url:
        raise FileNotFoundError(
            f"corpus {corpus!r} has no public URL for {name}: set ${MIRROR_ENV} (or the config's "
            f"`mirror`) to a directory holding {corpus}/{name}"
        )
    source = str(mirror / corpus / name) if mirror else url.format(file=name)
    if mirror and not Path(source).is_file():
        raise FileNotFoundError(  # a relative mirror as given, and where that led
            f"mirror {mirror} has no {corpus}/{name} (looked for {os.path.normpath(source)})"
        )

    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with atomic_file(dest) as partial:  # a failed fetch or checksum leaves nothing behind
        if mirror:
            shutil.copyfile(source, partial)
        else:
            with open(partial, "wb") as stream:
                download(source, stream, corpus, name)
        got, expected = sha256_of(partial), files[name]
        if got != expected:
            raise ChecksumError(
                f"sha256 mismatch for {corpus}/{name} from {source}: expected {expected}, got {got}"
            )
        partial.chmod(0o644)  # whatever the umask: a corpus file is ordinary data
    return dest


def download(url: str, stream, corpus: str, name: str) -> None:
    """Copy `url` into `stream`; a network failure says how to use a local mirror instead."""
    try:
        with urllib.request.urlopen(url, timeout=60) as response:
            shutil.copyfileobj(response, stream)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
        raise ConnectionError(
            f"cannot download {corpus}/{name} from {url}: {error}. Without network, point "
            f"${MIRROR_ENV} (or the config's `mirror`) at a local copy laid out as "
            f"<mirror>/{corpus}/{name}, e.g. export {MIRROR_ENV}=/path/to/corpora"
        ) from error


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--file", required=True, help="file name inside the corpus")
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument(
        "--mirror",
        default=None,
        help=f"mirror directory (${MIRROR_ENV} wins; relative: to this directory)",
    )
    args = parser.parse_args(argv)
    mirror = resolve_mirror(args.mirror)
    try:
        path = fetch(args.corpus, args.file, args.out, mirror)
    except EXPECTED_ERRORS as error:
        sys.exit(f"fetch {args.corpus}/{args.file}: {error}")
    print(f"fetched {args.corpus}/{args.file} from {mirror or 'upstream'} -> {path} (sha256 ok)")


if __name__ == "__main__":
    main()
